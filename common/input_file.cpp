#include "common/input_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/errors.hpp"
#include "common/json_document.hpp"

namespace np {

namespace {

// A tool's output is mapped this much at a time: peak memory does not grow with the file.
constexpr size_t kWindowBytes = size_t{4} << 20;
constexpr size_t kPipeChunkBytes = size_t{1} << 20;

std::string cannot(int error) {
    return std::string("cannot read: ") + std::strerror(error);
}

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
        if (fd < 0) throw InputError(name, cannot(errno));
    } else {
        fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) throw InputError(name, cannot(errno));
    }
    const auto refuse = [&](const std::string& why) {
        ::close(fd);
        throw InputError(name, why);
    };
    if (::fstat(fd, &st) != 0) refuse(cannot(errno));
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
    char text[160];
    std::snprintf(text, sizeof text,
                  "%.0f MiB (%lld bytes) is larger than any such input (at most %.0f MiB): "
                  "refused unread",
                  mib(bytes), static_cast<long long>(bytes), mib(max_bytes));
    return text;
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
    const std::string message = "np-explain: " + name_ + ": the file shrank while it was read\n";
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
            throw InputError(name_, std::string("read error: ") + std::strerror(errno));
        }
    }
    if (offset_ >= size_) return {};
    const size_t bytes = static_cast<size_t>(std::min<int64_t>(kWindowBytes, size_ - offset_));
    void* w = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd_, offset_);
    if (w == MAP_FAILED) {
        // Not mappable (some network or FUSE filesystems): read it instead, from here on.
        if (::lseek(fd_, offset_, SEEK_SET) < 0)
            throw InputError(name_, std::string("read error: ") + std::strerror(errno));
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

}  // namespace np
