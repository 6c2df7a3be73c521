#pragma once
// The one way np-explain writes a file (contracts, reports, traces, findings, raw outputs,
// --out) and prepares the run dir, for src/cli and src/experiment alike; np-probe writes its
// trace and pidfile with it too (compiled into np_probe_core, src/probe/CMakeLists.txt).
#include <sys/types.h>

#include <filesystem>
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

// A directory only this user can write to, for a run's results: created 0700 (with its
// parents) when missing; when it exists it must be a directory, not a symbolic link, owned by
// this user and not writable by group or others (a /tmp/network-performance-$USER another user
// made first could be filled with links) — InputError naming it otherwise.
void prepare_private_dir(const std::filesystem::path& dir);

}  // namespace np
