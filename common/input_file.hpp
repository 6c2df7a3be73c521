#pragma once
// Files read as byte sources (common/byte_source.hpp): a tool's output of any length, a
// document parsed whole. Every command reads its inputs through here, with a size limit for
// each kind of input.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_source.hpp"

namespace np {

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

// The whole file, for documents that are parsed as a whole (params, a contract to print);
// InputError naming the path when it is missing, unreadable, not a regular file (as InputFile)
// or larger than `max_bytes`.
std::string read_text_file(const std::filesystem::path& path, int64_t max_bytes);

// A document (a contract, a trace, a plan): read as InputFile reads (never blocking, never more
// than `max_bytes`), parsed as parse_json_document parses (bounded depth and values;
// common/json_document.hpp).
nlohmann::json read_json_file(const std::filesystem::path& path, int64_t max_bytes);

}  // namespace np
