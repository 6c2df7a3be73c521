#pragma once
// A shell kept open on a node, so that short commands do not each pay for a login shell: sshd
// runs every exec request through the user's shell, and a heavy root ~/.bashrc (pyenv init on
// this project's machines) makes that 100-200 ms a command. Commands run one after another in a
// subshell with stdin at EOF; their exit status, stdout and stderr come back as from exec.
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/remote/session.hpp"

namespace np::remote {

class CommandShell {
  public:
    // Starts `exec sh` on its own channel of `session`, which must outlive this object.
    explicit CommandShell(Session& session);
    ~CommandShell();
    CommandShell(const CommandShell&) = delete;
    CommandShell& operator=(const CommandShell&) = delete;

    // Shell functions every later command can call: defined in the shell itself (each command
    // runs in a subshell of it), now and again whenever the shell restarts.
    void define(std::string functions);

    // Runs a command line to completion. On timeout the shell and what it runs are stopped
    // (a new shell starts on the next call) and EnvironmentError is thrown.
    CommandResult run(const std::string& command, Millis timeout = Millis(30000));
    // run() that throws EnvironmentError naming the command, its status and stderr unless it
    // exits 0.
    CommandResult check(const std::string& command, Millis timeout = Millis(30000));

    // A new private directory on the node (mktemp -d: mode 0700, a name nobody can predict):
    // /tmp/np-explain.XXXXXXXXXX. Removing it is the caller's (an undo step in a run).
    std::string make_private_dir();
    // Copies a local file into `dir` on the node as `name` with `mode`, through this shell's
    // own channel (no SFTP channel, which would pay for another login shell), then checks that
    // the node's sha256sum of it equals ours; a damaged copy is removed. Returns the remote
    // path. Throws InputError for a bad name or an unreadable local file, EnvironmentError when
    // the copy fails.
    std::string upload(const std::string& local_path, const std::string& dir,
                       const std::string& name, int mode = 0600);

    // Streaming: starts a command and hands its stdout over line by line. A command that prints
    // more than `max_out` bytes on stdout, a line over kMaxLineBytes or more than kMaxErrBytes
    // on stderr is stopped (with the shell) and OutputTooLarge names it and the bound; run()
    // holds every command to kMaxOutputBytes.
    void begin(const std::string& command, size_t max_out = kMaxOutputBytes);
    // The next line of the running command; nullopt when none came within `timeout` or when it
    // ended (then finished() is true and exit_status()/err() tell how).
    std::optional<std::string> read_line(Millis timeout);
    bool finished() const { return !running_ && ready_.empty(); }
    int exit_status() const { return status_; }
    const std::string& err() const { return err_; }
    // Stops the running command and the shell (a new shell starts on the next call).
    void abort();

    Session& session() { return session_; }

    // Every command this shell ran, as run, with its exit status, duration and stderr (kept so
    // a run can show what it did on the node).
    struct LogEntry {
        std::string command;
        int exit_status = -1;  // -1: did not finish (timeout, abort, lost session)
        double seconds = 0;
        std::string err;
    };
    const std::vector<LogEntry>& log() const { return log_; }

  private:
    // begin(), with the command's stdin at EOF or, for an upload, the channel itself.
    void start_command(const std::string& command, bool stdin_from_channel,
                       size_t max_out = kMaxOutputBytes);
    // Stops the command and the shell, and throws OutputTooLarge saying what it exceeded.
    [[noreturn]] void too_large(const std::string& what);
    void ensure_started();
    void collect_err(Millis timeout);

    Session& session_;
    std::unique_ptr<Process> shell_;
    std::string token_;      // end-of-command marker, random per shell
    std::string functions_;  // define()d: sent to each shell as it starts
    bool running_ = false;
    int status_ = -1;
    bool held_empty_ = false;        // an empty line that may be our own separator
    std::deque<std::string> ready_;  // stdout lines of the command not yet handed over
    std::string err_;
    size_t err_seen_ = 0;   // how much of the shell's stderr belongs to earlier commands
    size_t out_bytes_ = 0;  // stdout the running command printed so far
    size_t max_out_ = kMaxOutputBytes;
    std::vector<LogEntry> log_;
    std::chrono::steady_clock::time_point started_{};
};

}  // namespace np::remote
