#pragma once
// The files the CLI reads for a command (a tool's output, params) and where np-probe is; the
// run dir's are rundir/'s, the file reader itself common/input_file.hpp.
#include <filesystem>
#include <string>

#include "analysis/readers/inputs.hpp"
#include "analysis/readers/params.hpp"
#include "analysis/readers/source.hpp"
#include "common/input_file.hpp"

namespace np::cli {

// A tool's output file read into Measurements (parse_measurements), the InputError naming the
// file first.
Measurements read_measurements_file(const std::filesystem::path& path, InputFormat format);

// A params file read and checked (parse_params), its warnings (unknown keys) printed to stderr.
Params read_params_file(const std::filesystem::path& path);

// np-probe, the static probe `run` uploads and `probe` runs: $NP_PROBE, else next to
// np-explain (an install puts both in bin/: cmake/Install.cmake), else the build tree's
// src/probe/. EnvironmentError (exit 3) when none is found.
std::string find_np_probe();

}  // namespace np::cli
