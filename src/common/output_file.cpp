#include "src/common/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "src/common/errors.hpp"

namespace np {
namespace {

const char* kind_of(mode_t mode) {
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

[[noreturn]] void io_failed(const std::filesystem::path& path, const char* what, int err) {
    throw EnvironmentError(EnvironmentError::Kind::host,
                           fmt::format("{}: {}: {}", path.string(), what, std::strerror(err)));
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           mode_t new_file_mode) {
    struct stat existing {};
    bool replacing = false;
    if (::lstat(path.c_str(), &existing) == 0) {
        if (!S_ISREG(existing.st_mode)) {
            throw InputError(path.string(),
                             fmt::format("exists and is {}: np-explain writes only regular "
                                         "files, and replaces nothing else",
                                         kind_of(existing.st_mode)));
        }
        replacing = true;
    }
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::random_device random;
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
        tmp = (dir / fmt::format(".{}.{:08x}.tmp", path.filename().string(), random())).string();
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) io_failed(path, "cannot write", errno);
    }
    if (fd < 0) io_failed(path, "cannot write", EEXIST);
    const auto fail = [&](const char* what) {
        const int err = errno;
        if (fd >= 0) ::close(fd);
        ::unlink(tmp.c_str());
        io_failed(path, what, err);
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
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot replace");
}

void prepare_private_dir(const std::filesystem::path& dir) {
    const auto refuse = [&](const std::string& why) {
        throw InputError(dir.string(),
                         fmt::format("{}: results go only to a directory of yours that nobody "
                                     "else can write to (give another --run-dir or "
                                     "NETWORK_PERFORMANCE_RUN_DIR)",
                                     why));
    };
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        if (errno != ENOENT) io_failed(dir, "cannot create the run directory", errno);
        if (dir.has_parent_path()) {
            std::error_code ec;
            std::filesystem::create_directories(dir.parent_path(), ec);
        }
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
            io_failed(dir, "cannot create the run directory", errno);
        if (::lstat(dir.c_str(), &st) != 0)
            io_failed(dir, "cannot create the run directory", errno);
    }
    if (!S_ISDIR(st.st_mode)) refuse(fmt::format("is {}, not a directory", kind_of(st.st_mode)));
    if (st.st_uid != ::geteuid())
        refuse(fmt::format("belongs to user id {}, not to you ({})", st.st_uid, ::geteuid()));
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        refuse(fmt::format("is writable by {} (mode {:04o})",
                           (st.st_mode & S_IWOTH) ? "everyone" : "its group", st.st_mode & 07777));
}

}  // namespace np
