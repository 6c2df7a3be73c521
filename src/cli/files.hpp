#pragma once
// Files the CLI reads and writes on the user's behalf. analysis/ never touches files.
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/contract.hpp"

namespace np::cli {

// The whole file; InputError naming the path when it is missing, unreadable or larger than
// any tool output (2 GiB).
std::string read_text_file(const std::filesystem::path& path);

// Writes through a temporary file in the same directory and renames it over `path`, so an
// error never leaves the user's file truncated.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// The tutorial's run dir: $NETWORK_PERFORMANCE_RUN_DIR, else /tmp/network-performance-$USER/.
std::filesystem::path default_run_dir();

// Every np_contract_<mode>.json in a run dir, in the tutorial's order of modes (ansible,
// manual, jupyter, then the others by name). InputError when the directory does not exist or
// holds no contract, or a contract does not parse.
std::vector<Contract> read_run_dir_contracts(const std::filesystem::path& dir);

// np-probe, the static probe `run` uploads and `probe` runs: $NP_PROBE, else next to
// np-explain (an install puts both in bin/: cmake/Install.cmake), else the build tree's
// src/probe/. Empty when none is found.
std::string find_np_probe();

}  // namespace np::cli
