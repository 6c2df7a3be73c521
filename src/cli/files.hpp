#pragma once
// Files the CLI reads and writes on the user's behalf. analysis/ never touches files.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/pairs.hpp"
#include "analysis/readers/inputs.hpp"
#include "analysis/readers/params.hpp"
#include "analysis/readers/source.hpp"
#include "common/output_file.hpp"
#include "common/trace.hpp"

namespace np::cli {

// The largest input of each kind np-explain reads, checked from the file's size before reading.
// A day-long -P 8 iperf3 run at 0.1 s intervals is 2.6 GB of JSON and is read in constant
// memory (analysis/readers/json_scan.hpp); a day of ping at 0.2 s intervals is ~30 MB of text.
inline constexpr int64_t kMaxToolOutputBytes = int64_t{16} << 30;
inline constexpr int64_t kMaxPingBytes = int64_t{256} << 20;
inline constexpr int64_t kMaxContractBytes = int64_t{16} << 20;
inline constexpr int64_t kMaxTraceBytes = int64_t{256} << 20;
inline constexpr int64_t kMaxParamsBytes = int64_t{1} << 20;

// A tool's output, read in chunks and never whole, so a file of any length costs the same
// memory: a regular file is mapped a window at a time, "-" (standard input, a pipe or a
// redirected file) is read. What is not a regular file — a directory, a FIFO, a device, a
// socket, a /proc or /sys file — is refused at once with an InputError naming it: such inputs
// block, never end or change as they are read. Opening never blocks (O_NONBLOCK: a FIFO with no
// writer would otherwise hang the open). A regular file is read up to the size it had when it
// was opened; one that shrinks while it is read ends the process with a message and exit 2
// rather than a SIGBUS.
//
// `max_bytes`: a regular file larger than that is refused from its size (fstat) before a byte of
// it is read, and a pipe is refused once it has delivered that much.
class InputFile : public ByteSource {
  public:
    explicit InputFile(const std::filesystem::path& path, int64_t max_bytes = kMaxToolOutputBytes);
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
    int64_t max_bytes_ = 0;
    int64_t piped_ = 0;  // bytes read from a pipe so far
};

// A tool's output file read into Measurements (parse_measurements), the InputError naming the
// file first.
Measurements read_measurements_file(const std::filesystem::path& path, InputFormat format);

// The whole file, for documents that are parsed as a whole (params, a contract to print);
// InputError naming the path when it is missing, unreadable, not a regular file (as InputFile)
// or larger than `max_bytes`.
std::string read_text_file(const std::filesystem::path& path, int64_t max_bytes);

// A params file read and checked (parse_params), its warnings (unknown keys) printed to stderr.
Params read_params_file(const std::filesystem::path& path);

// A contract or a trace: read as InputFile reads (never blocking, never more than `max_bytes`),
// parsed as parse_json_document parses (bounded depth and values; common/json_document.hpp).
nlohmann::json read_json_file(const std::filesystem::path& path, int64_t max_bytes);
Contract read_contract_file(const std::filesystem::path& path);
// InputError "<path> (<field>)" when the trace does not parse.
Trace read_trace_file(const std::filesystem::path& path);

// The tutorial's run dir: $NETWORK_PERFORMANCE_RUN_DIR, else /tmp/network-performance-$USER/.
std::filesystem::path default_run_dir();

// Every np_contract_<mode>.json in a run dir, in the tutorial's order of modes (ansible,
// manual, jupyter, then the others by name). InputError when the directory does not exist or
// holds no contract, or a contract does not parse.
std::vector<Contract> read_run_dir_contracts(const std::filesystem::path& dir);

// A directory the fan-out over pairs gathered (np_pairs.json beside a run dir per pair): every
// pair of np_pairs.json in its order, with its contract and explanation when it was measured,
// else what its np_failed.json says (or that nothing was gathered). Empty when `dir` holds no
// np_pairs.json; InputError when it or a pair's files do not parse.
std::optional<std::vector<PairOutcome>> read_pairs_dir(const std::filesystem::path& dir);

// np-probe, the static probe `run` uploads and `probe` runs: $NP_PROBE, else next to
// np-explain (an install puts both in bin/: cmake/Install.cmake), else the build tree's
// src/probe/. Empty when none is found.
std::string find_np_probe();

}  // namespace np::cli
