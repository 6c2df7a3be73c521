#include "src/experiment/local_testbed.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

#include "common/errors.hpp"
#include "common/executable.hpp"
#include "src/experiment/interrupt.hpp"
#include "src/experiment/node.hpp"

namespace np::experiment {
namespace {

// $NP_TESTBED_SCRIPT; else the installed copy, where cmake/Install.cmake puts it relative to
// the installed np-explain (NP_INSTALLED_DATA_DIR, e.g. ../share/np-explain); else the source
// tree's scripts/testbed.sh, for np-explain run from the build tree.
std::string testbed_script() {
    if (const char* env = std::getenv("NP_TESTBED_SCRIPT"); env && *env) return env;
    std::vector<std::filesystem::path> candidates;
    if (const auto dir = executable_dir(); !dir.empty())
        candidates.push_back(dir / NP_INSTALLED_DATA_DIR / "testbed.sh");
    candidates.push_back(std::filesystem::path(NP_SOURCE_DIR) / "scripts" / "testbed.sh");
    std::string tried;
    for (const auto& c : candidates) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(c, ec)) return c.lexically_normal().string();
        tried += (tried.empty() ? "" : " nor ") + c.lexically_normal().string();
    }
    throw EnvironmentError(fmt::format(
        "no local testbed script: neither {} exists; set NP_TESTBED_SCRIPT to testbed.sh", tried));
}

// Runs `bash script args...` with its stdout on our stderr (so stdout stays the explanation or
// --json) and waits for it. Unlike system(), our SIGINT/SIGTERM handlers stay in place: a
// signal meant for us while the script runs is recorded, not ignored.
int run_script(const std::string& script, const std::vector<std::string>& args) {
    std::vector<std::string> words{"bash", script};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    pid_t pid = 0;
    const int err = posix_spawnp(&pid, "bash", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) return 127;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return 127;
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

// Where `run --local` keeps its testbed's state (scripts/testbed.sh --state).
constexpr const char* kLocalState = "/run/np-explain-testbed";

bool LocalTestbed::is_up() {
    return access(kLocalState, F_OK) == 0;
}

std::string LocalTestbed::up_ssh_config() {
    return std::string(kLocalState) + "/ssh_config";
}

void LocalTestbed::take_down() {
    if (run_script(testbed_script(), {"down", "--state", kLocalState}) != 0) {
        throw EnvironmentError(EnvironmentError::Kind::remote,
                               fmt::format("the local testbed was not fully removed; run: bash {} "
                                           "down --state {}",
                                           testbed_script(), kLocalState));
    }
}

LocalTestbedLock::LocalTestbedLock(const std::string& holder) {
    constexpr const char* path = "/run/np-explain-testbed.lock";
    fd_ = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    // Not root: no testbed can come up to be shared, and the testbed script says it needs root.
    if (fd_ < 0 && (errno == EACCES || errno == EPERM) && geteuid() != 0) return;
    if (fd_ < 0)
        throw EnvironmentError(fmt::format("cannot open {} to hold the local testbed: {}", path,
                                           std::strerror(errno)));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        char buf[512] = "";
        const ssize_t n = pread(fd_, buf, sizeof buf - 1, 0);
        close(fd_);
        fd_ = -1;
        if (err != EWOULDBLOCK)
            throw EnvironmentError(fmt::format("cannot lock {}: {}", path, std::strerror(err)));
        std::string who(buf, n > 0 ? size_t(n) : 0);
        who = who.substr(0, who.find('\n'));
        for (char& c : who)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("the local testbed is held by another np-explain {}; wait for it to end",
                        who.empty() ? std::string("process") : who));
    }
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char when[40];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &utc);
    const std::string line = fmt::format("{}, since {}\n", holder, when);
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, line.data(), line.size(), 0) < 0) {
        // Who holds it is for the other's message only: the lock holds without it.
    }
}

LocalTestbedLock::~LocalTestbedLock() {
    if (fd_ >= 0) close(fd_);  // the kernel drops the lock with the last descriptor
}

namespace {

// The profile and family, checked before the testbed's lock is taken.
std::string holder_for(const std::string& profile, const std::string& family) {
    if (family != "4" && family != "6")
        throw InputError("--family", fmt::format("'{}' is not an IP version: 4 or 6", family));
    if (profile != "100M" && profile != "1G" && profile != "unshaped") {
        throw InputError(
            "--profile",
            fmt::format("'{}' is not a testbed profile: 100M, 1G or unshaped", profile));
    }
    return lock_holder("run", "--local");
}

}  // namespace

LocalTestbed::LocalTestbed(const std::string& profile, const std::string& family,
                           CleanupReport report)
    : lock_(holder_for(profile, family)), report_(std::move(report)), state_(kLocalState) {
    script_ = testbed_script();
    run_script(script_, {"down", "--state", state_});  // what a killed earlier run may have left
    const int rc =
        run_script(script_, {"up", "--profile", profile, "--family", family, "--state", state_});
    // A Ctrl-C on a terminal reaches the script too, which then fails: the signal is the cause.
    if (const int sig = interrupt_signal()) {
        run_script(script_, {"down", "--state", state_});
        throw Interrupted(
            fmt::format("interrupted by {} while the local testbed came up", signal_name(sig)),
            sig);
    }
    if (rc != 0) {
        run_script(script_, {"down", "--state", state_});
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("the local testbed did not come up ({} up exited {})", script_, rc));
    }
}

LocalTestbed::~LocalTestbed() {
    if (run_script(script_, {"down", "--state", state_}) != 0 && report_) {
        report_(fmt::format("the local testbed was not fully removed; run: bash {} down --state {}",
                            script_, state_));
    }
}

}  // namespace np::experiment
