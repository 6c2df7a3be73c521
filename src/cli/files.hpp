#pragma once
// Files the CLI reads and writes on the user's behalf. analysis/ never touches files.
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/contract.hpp"
#include "analysis/inputs.hpp"
#include "analysis/source.hpp"

namespace np::cli {

// A tool's output, read in chunks and never whole, so a file of any length costs the same
// memory: a regular file is mapped a window at a time, "-" (standard input, a pipe or a
// redirected file) is read. What is not a regular file — a directory, a FIFO, a device, a
// socket, a /proc or /sys file — is refused at once with an InputError naming it: such inputs
// block, never end or change as they are read. Opening never blocks (O_NONBLOCK: a FIFO with no
// writer would otherwise hang the open). A regular file is read up to the size it had when it
// was opened; one that shrinks while it is read ends the process with a message and exit 2
// rather than a SIGBUS.
class InputFile : public ByteSource {
  public:
    explicit InputFile(const std::filesystem::path& path);
    ~InputFile() override;
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    std::string_view next() override;
    const std::string& name() const { return name_; }

  private:
    std::string name_;
    int fd_ = -1;
    bool mapped_ = false;  // a regular file: windows of it are mapped
    int64_t size_ = 0;     // a regular file's size when opened
    int64_t offset_ = 0;
    void* window_ = nullptr;
    size_t window_bytes_ = 0;
    std::vector<char> buffer_;  // a pipe's
};

// A tool's output file read into Measurements (parse_measurements), the InputError naming the
// file first.
Measurements read_measurements_file(const std::filesystem::path& path, InputFormat format);

// The whole file, for documents that are parsed as a whole (contracts, traces, params);
// InputError naming the path when it is missing, unreadable, not a regular file (as InputFile)
// or larger than any such document (2 GiB).
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
