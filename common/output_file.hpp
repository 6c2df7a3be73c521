#pragma once
// The one way np-explain writes a file (contracts, reports, traces, findings, raw outputs,
// --out) and prepares the run dir, for src/cli and src/experiment alike; np-probe writes its
// trace and pidfile with it too (compiled into np_probe_core, src/probe/CMakeLists.txt).
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace np {

// Writes `content` to `path` atomically: into a new file beside it (O_CREAT|O_EXCL|O_NOFOLLOW,
// a random name, so nothing planted there is followed or reused), fsynced, then renamed over
// `path`. A file being replaced keeps its permissions; a new one gets `new_file_mode`.
// What exists at `path` and is not a regular file — a device such as /dev/full, a FIFO, a
// directory, a symbolic link — is refused, never replaced or written through: InputError
// naming `path` (exit 2). A write that fails (disk full, read-only) is an EnvironmentError
// naming `path` (exit 3) and leaves the old file as it was.
void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           mode_t new_file_mode = 0600);

// A directory only this user can write to, for a run's results, opened once: every file below
// it is written, replaced and removed relative to that descriptor (openat, renameat), so a
// directory swapped for a link after it was checked is never written through. Created 0700
// (with its parents) when missing; it must be a directory, not a symbolic link, owned by this
// user and not writable by group or others (a /tmp/network-performance-$USER another user made
// first could be filled with links); and each directory above it must be root's or this
// user's and, where others may write to it, sticky (as /tmp is: nobody else can rename what
// is ours there) — else another user could put a directory of theirs in its place. InputError
// naming it otherwise.
class PrivateDir {
  public:
    explicit PrivateDir(std::filesystem::path dir);
    ~PrivateDir();
    PrivateDir(const PrivateDir&) = delete;
    PrivateDir& operator=(const PrivateDir&) = delete;

    // write_file_atomically() of `name` in this directory; returns its path.
    std::filesystem::path write(const std::string& name, std::string_view content,
                                mode_t new_file_mode = 0600) const;
    void remove(const std::string& name) const;
    const std::filesystem::path& path() const { return dir_; }

  private:
    std::filesystem::path dir_;
    int fd_ = -1;
};

// The checks of PrivateDir alone (before a run starts anything).
void prepare_private_dir(const std::filesystem::path& dir);

}  // namespace np
