#include "src/cli/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/errors.hpp"
#include "common/executable.hpp"
#include "common/json_document.hpp"
#include "common/json_field.hpp"
#include "common/run_dir.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {

namespace {

// A tool's output is mapped this much at a time: peak memory does not grow with the file.
constexpr size_t kWindowBytes = size_t{4} << 20;
constexpr size_t kPipeChunkBytes = size_t{1} << 20;

// Filesystems whose files are generated as they are read, with no size to stop at.
bool generated_filesystem(int fd) {
    struct statfs fs {};
    if (fstatfs(fd, &fs) != 0) return false;
    switch (static_cast<unsigned long>(fs.f_type)) {
        case 0x9fa0UL:      // proc
        case 0x62656572UL:  // sysfs
        case 0x64626720UL:  // debugfs
        case 0x74726163UL:  // tracefs
        case 0x27e0ebUL:    // cgroup
        case 0x63677270UL:  // cgroup2
            return true;
        default:
            return false;
    }
}

// Opens without blocking (a FIFO with no writer blocks a plain open) and refuses what is not a
// regular file. "-" is standard input, which may also be a pipe.
int open_input(const std::filesystem::path& path, const std::string& name, struct stat& st,
               bool& pipe) {
    pipe = false;
    int fd = -1;
    if (path == "-") {
        fd = ::dup(STDIN_FILENO);
        if (fd < 0) throw InputError(name, fmt::format("cannot read: {}", std::strerror(errno)));
    } else {
        fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) throw InputError(name, fmt::format("cannot read: {}", std::strerror(errno)));
    }
    const auto refuse = [&](const std::string& why) {
        ::close(fd);
        throw InputError(name, why);
    };
    if (::fstat(fd, &st) != 0) refuse(fmt::format("cannot read: {}", std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) refuse("is a directory, not a file");
    if (path == "-" && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        pipe = true;
        return fd;
    }
    if (path == "-" && isatty(fd)) refuse("standard input is a terminal: pipe a tool's output in");
    if (S_ISFIFO(st.st_mode))
        refuse(
            "is a FIFO (named pipe), not a file; to read a pipe, give - and redirect it to "
            "standard input");
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) refuse("is a device, not a tool's output");
    if (S_ISSOCK(st.st_mode)) refuse("is a socket, not a file");
    if (!S_ISREG(st.st_mode)) refuse("is not a regular file");
    if (generated_filesystem(fd)) refuse("is a /proc or /sys file, not a tool's output");
    // Regular files ignore O_NONBLOCK; standard input's flags are not ours to change.
    return fd;
}

std::string too_large(int64_t bytes, int64_t max_bytes) {
    const auto mib = [](int64_t b) { return static_cast<double>(b) / double(1 << 20); };
    return fmt::format(
        "{:.0f} MiB ({} bytes) is larger than any such input (at most {:.0f} MiB): "
        "refused unread",
        mib(bytes), bytes, mib(max_bytes));
}

// A mapped file that shrinks while it is read faults (SIGBUS) on the pages it lost. The handler
// can only write and exit: the message is made when the file is opened.
char g_shrunk_message[1024];
size_t g_shrunk_length = 0;
struct sigaction g_previous_bus {};
int g_mapped_files = 0;

void on_sigbus(int) {
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, g_shrunk_message, g_shrunk_length);
    ::_exit(2);
}

}  // namespace

InputFile::InputFile(const std::filesystem::path& path, int64_t max_bytes)
    : name_(path == "-" ? std::string("stdin") : path.string()), max_bytes_(max_bytes) {
    struct stat st {};
    bool pipe = false;
    fd_ = open_input(path, name_, st, pipe);
    if (!pipe && st.st_size > max_bytes) {
        ::close(fd_);
        fd_ = -1;
        throw InputError(name_, too_large(st.st_size, max_bytes));
    }
    if (pipe) {
        buffer_.resize(kPipeChunkBytes);
        return;
    }
    mapped_ = true;
    size_ = st.st_size;
    const std::string message =
        fmt::format("np-explain: {}: the file shrank while it was read\n", name_);
    g_shrunk_length = std::min(message.size(), sizeof(g_shrunk_message));
    std::memcpy(g_shrunk_message, message.data(), g_shrunk_length);
    if (g_mapped_files++ == 0) {
        struct sigaction sa {};
        sa.sa_handler = on_sigbus;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGBUS, &sa, &g_previous_bus);
    }
}

InputFile::~InputFile() {
    if (window_) ::munmap(window_, window_bytes_);
    if (fd_ >= 0) ::close(fd_);
    if (mapped_ && --g_mapped_files == 0) ::sigaction(SIGBUS, &g_previous_bus, nullptr);
}

std::string_view InputFile::next() {
    if (window_) {
        ::munmap(window_, window_bytes_);
        window_ = nullptr;
    }
    if (!mapped_) {
        // A pipe, or a file that cannot be mapped: read it a chunk at a time.
        while (true) {
            const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
            if (n >= 0) {
                piped_ += n;
                if (piped_ > max_bytes_) throw InputError(name_, too_large(piped_, max_bytes_));
                return std::string_view(buffer_.data(), static_cast<size_t>(n));
            }
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                struct pollfd p {
                    fd_, POLLIN, 0
                };
                ::poll(&p, 1, -1);
                continue;
            }
            throw InputError(name_, fmt::format("read error: {}", std::strerror(errno)));
        }
    }
    if (offset_ >= size_) return {};
    const size_t bytes = static_cast<size_t>(std::min<int64_t>(kWindowBytes, size_ - offset_));
    void* w = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd_, offset_);
    if (w == MAP_FAILED) {
        // Not mappable (some network or FUSE filesystems): read it instead, from here on.
        if (::lseek(fd_, offset_, SEEK_SET) < 0)
            throw InputError(name_, fmt::format("read error: {}", std::strerror(errno)));
        mapped_ = false;
        --g_mapped_files;
        if (g_mapped_files == 0) ::sigaction(SIGBUS, &g_previous_bus, nullptr);
        buffer_.resize(kPipeChunkBytes);
        size_ = 0;
        return next();
    }
    ::madvise(w, bytes, MADV_SEQUENTIAL);
    window_ = w;
    window_bytes_ = bytes;
    offset_ += static_cast<int64_t>(bytes);
    return std::string_view(static_cast<const char*>(w), bytes);
}

Measurements read_measurements_file(const std::filesystem::path& path, InputFormat format) {
    InputFile in(path, format == InputFormat::ping ? kMaxPingBytes : kMaxToolOutputBytes);
    try {
        return parse_measurements(in, in.name(), format);
    } catch (const InputError& e) {
        if (e.field() == in.name()) throw;
        // Name the file first; the reader named the field (or "json", "iperf2", …) and line.
        throw InputError(fmt::format("{} ({})", in.name(), e.field()), e.what(), e.line());
    }
}

std::string read_text_file(const std::filesystem::path& path, int64_t max_bytes) {
    InputFile in(path, max_bytes);
    std::string data;
    for (std::string_view chunk = in.next(); !chunk.empty(); chunk = in.next()) data += chunk;
    return data;
}

nlohmann::json read_json_file(const std::filesystem::path& path, int64_t max_bytes) {
    InputFile in(path, max_bytes);
    JsonLimits limits;
    limits.max_bytes = max_bytes;
    return parse_json_document(in, in.name(), limits);
}

Contract read_contract_file(const std::filesystem::path& path) {
    return contract_from_json(read_json_file(path, kMaxContractBytes), path.string());
}

Trace read_trace_file(const std::filesystem::path& path) {
    const nlohmann::json doc = read_json_file(path, kMaxTraceBytes);
    try {
        return parse_trace(doc);
    } catch (const InputError& e) {
        throw InputError(fmt::format("{} ({})", path.string(), e.field()), e.what());
    }
}

namespace {
// The tutorial lists its modes in this order; others follow by name.
int mode_rank(const std::string& mode) {
    static const char* order[] = {"ansible", "manual", "jupyter"};
    for (int i = 0; i < 3; ++i)
        if (mode == order[i]) return i;
    return 3;
}
}  // namespace

namespace {

bool is_contract_name(const std::string& name) {
    return name.starts_with(run_dir::kContractPrefix) && name.ends_with(run_dir::kContractSuffix);
}

// A directory that holds at least one np_contract_<mode>.json (false when it is no directory).
bool holds_contract(const std::filesystem::path& dir) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (is_contract_name(it->path().filename().string())) return true;
    return false;
}

}  // namespace

std::vector<Contract> read_run_dir_contracts(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        throw InputError(dir.string(),
                         "no such run directory (set NETWORK_PERFORMANCE_RUN_DIR or "
                         "name the directory)");
    }
    std::vector<Contract> contracts;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (!is_contract_name(entry.path().filename().string())) continue;
        contracts.push_back(read_contract_file(entry.path()));
    }
    if (contracts.empty()) {
        throw InputError(dir.string(), "holds no np_contract_<mode>.json result contracts");
    }
    std::sort(contracts.begin(), contracts.end(), [](const Contract& a, const Contract& b) {
        return std::pair(mode_rank(a.mode), a.mode) < std::pair(mode_rank(b.mode), b.mode);
    });
    return contracts;
}

std::optional<std::vector<PairOutcome>> read_pairs_dir(const std::filesystem::path& dir) {
    const std::filesystem::path plan_file = dir / run_dir::kPairs;
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(plan_file, ec))) return {};
    const PairPlan plan =
        pair_plan_from_json(read_json_file(plan_file, kMaxContractBytes), plan_file.string());
    std::vector<PairOutcome> outcomes;
    for (const Pair& p : plan.pairs) {
        PairOutcome o{p, {}, {}, {}};
        const std::filesystem::path pair_dir = dir / p.name;
        const std::filesystem::path failed = pair_dir / run_dir::kFailed;
        if (std::filesystem::exists(std::filesystem::symlink_status(failed, ec))) {
            const nlohmann::json doc = read_json_file(failed, kMaxContractBytes);
            const JsonField f = JsonField::document(doc, failed.string());
            o.failure = fmt::format("{}: {}", f.at("step").str(), f.at("message").str());
        } else if (!holds_contract(pair_dir)) {
            o.failure = std::filesystem::is_directory(pair_dir, ec)
                            ? "no contract and no np_failed.json: the pair's run stopped (a "
                              "node unreachable mid-run, or the fan-out interrupted)"
                            : "nothing gathered (the fan-out did not reach this pair)";
        } else {
            std::vector<Contract> contracts = read_run_dir_contracts(pair_dir);
            if (contracts.size() > 1) {
                throw InputError(pair_dir.string(),
                                 "holds more than one np_contract_<mode>.json; a pair's run dir "
                                 "holds one");
            }
            o.contract = std::move(contracts.front());
            if (const auto it = o.contract->document.find("explain");
                it != o.contract->document.end() && !it->is_null()) {
                o.explanation = parse_explanation(
                    *it, (pair_dir / run_dir::contract(o.contract->mode)).string() + ": explain");
            }
        }
        outcomes.push_back(std::move(o));
    }
    return outcomes;
}

Params read_params_file(const std::filesystem::path& path) {
    const ParamsReading r = parse_params(read_text_file(path, kMaxParamsBytes), path.string());
    for (const auto& w : r.warnings)
        print_text(stderr, fmt::format("np-explain: warning: {}\n", w));
    return r.params;
}

std::filesystem::path default_run_dir() {
    if (const char* dir = std::getenv("NETWORK_PERFORMANCE_RUN_DIR"); dir && *dir) return dir;
    std::string user;
    if (const char* u = std::getenv("USER"); u && *u) {
        user = u;
    } else if (const passwd* pw = getpwuid(getuid())) {
        user = pw->pw_name;
    }
    return std::filesystem::path("/tmp") / ("network-performance-" + user);
}

std::string find_np_probe() {
    if (const char* env = std::getenv("NP_PROBE"); env && *env) return env;
    const auto dir = executable_dir();
    if (dir.empty()) return {};
    for (const auto& candidate : {dir / "np-probe", dir / ".." / "probe" / "np-probe"}) {
        if (access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal();
    }
    return {};
}

}  // namespace np::cli
