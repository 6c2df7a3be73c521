#include "common/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "common/errors.hpp"

namespace np {
namespace {

const char* kind_of(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// A number as printf's format writes it ("%08x", "%04o"): this file is part of np-probe too,
// which links no formatting library.
template <typename T>
std::string printed(const char* format, T value) {
    char text[32];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

[[noreturn]] void io_failed(const std::filesystem::path& path, const char* what, int err) {
    throw EnvironmentError(EnvironmentError::Kind::host,
                           path.string() + ": " + what + ": " + std::strerror(err));
}

}  // namespace

namespace {

// write_file_atomically() of `name` in the directory open as `dirfd`; `shown` names the file
// in messages.
void write_at(int dirfd, const std::string& name, const std::filesystem::path& shown,
              std::string_view content, mode_t new_file_mode) {
    struct stat existing {};
    bool replacing = false;
    if (::fstatat(dirfd, name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISREG(existing.st_mode)) {
            throw InputError(shown.string(),
                             std::string("exists and is ") + kind_of(existing.st_mode) +
                                 ": np-explain writes only regular files, and replaces "
                                 "nothing else");
        }
        replacing = true;
    }
    std::random_device random;
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
        tmp = "." + name + "." + printed("%08x", unsigned(random())) + ".tmp";
        fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0600);
        if (fd < 0 && errno != EEXIST) io_failed(shown, "cannot write", errno);
    }
    if (fd < 0) io_failed(shown, "cannot write", EEXIST);
    const auto fail = [&](const char* what) {
        const int err = errno;
        if (fd >= 0) ::close(fd);
        ::unlinkat(dirfd, tmp.c_str(), 0);
        io_failed(shown, what, err);
    };
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("cannot write");
        }
        done += static_cast<size_t>(n);
    }
    const mode_t mode = replacing ? (existing.st_mode & 07777) : new_file_mode;
    if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) fail("cannot write");
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0) fail("cannot write");
    if (::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) fail("cannot replace");
}

[[noreturn]] void refuse_dir(const std::filesystem::path& dir, const std::string& why) {
    throw InputError(dir.string(),
                     why +
                         ": results go only to a directory of yours that nobody else can write to "
                         "(give another --run-dir or NETWORK_PERFORMANCE_RUN_DIR)");
}

// Each directory above `dir` (after links): root's or ours, and sticky where others may write.
void check_parents(const std::filesystem::path& dir) {
    std::error_code ec;
    auto at = std::filesystem::weakly_canonical(std::filesystem::absolute(dir, ec), ec);
    if (ec) return;  // the open below says what is wrong
    for (at = at.parent_path();; at = at.parent_path()) {
        struct stat st {};
        if (::stat(at.c_str(), &st) == 0) {
            if (st.st_uid != 0 && st.st_uid != ::geteuid())
                refuse_dir(
                    dir, at.string() + " above it belongs to user id " + std::to_string(st.st_uid));
            if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
                refuse_dir(dir, at.string() + " above it is writable by " +
                                    ((st.st_mode & S_IWOTH) ? "everyone" : "its group") +
                                    " and not sticky (mode " +
                                    printed("%04o", unsigned(st.st_mode & 07777)) +
                                    "): another user could put a directory of theirs in its place");
        }
        if (at == at.root_path() || !at.has_relative_path()) break;
    }
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           mode_t new_file_mode) {
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const int dirfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) io_failed(path, "cannot write", errno);
    try {
        write_at(dirfd, path.filename().string(), path, content, new_file_mode);
    } catch (...) {
        ::close(dirfd);
        throw;
    }
    ::close(dirfd);
}

PrivateDir::PrivateDir(std::filesystem::path dir) : dir_(std::move(dir)) {
    check_parents(dir_);
    fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0 && errno == ENOENT) {
        if (dir_.has_parent_path()) {
            std::error_code ec;
            std::filesystem::create_directories(dir_.parent_path(), ec);
            check_parents(dir_);  // what was made above it is ours
        }
        if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST)
            io_failed(dir_, "cannot create the run directory", errno);
        fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd_ < 0) {
        const int err = errno;
        struct stat st {};
        if ((err == ELOOP || err == ENOTDIR) && ::lstat(dir_.c_str(), &st) == 0)
            refuse_dir(dir_, std::string("is ") + kind_of(st.st_mode) + ", not a directory");
        io_failed(dir_, "cannot open the run directory", err);
    }
    // Checked on what was opened, not on the path again.
    struct stat st {};
    if (::fstat(fd_, &st) != 0) io_failed(dir_, "cannot open the run directory", errno);
    const auto refuse = [&](const std::string& why) {
        ::close(fd_);
        fd_ = -1;
        refuse_dir(dir_, why);
    };
    if (st.st_uid != ::geteuid())
        refuse("belongs to user id " + std::to_string(st.st_uid) + ", not to you (" +
               std::to_string(::geteuid()) + ")");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        refuse(std::string("is writable by ") +
               ((st.st_mode & S_IWOTH) ? "everyone" : "its group") + " (mode " +
               printed("%04o", unsigned(st.st_mode & 07777)) + ")");
}

PrivateDir::~PrivateDir() {
    if (fd_ >= 0) ::close(fd_);
}

std::filesystem::path PrivateDir::write(const std::string& name, std::string_view content,
                                        mode_t new_file_mode) const {
    const auto path = dir_ / name;
    write_at(fd_, name, path, content, new_file_mode);
    return path;
}

void PrivateDir::remove(const std::string& name) const {
    ::unlinkat(fd_, name.c_str(), 0);
}

void prepare_private_dir(const std::filesystem::path& dir) {
    const PrivateDir checked(dir);
}

}  // namespace np
