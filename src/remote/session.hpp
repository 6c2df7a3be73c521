#pragma once
// The only code that speaks SSH (libssh). A Session is one authenticated connection to a node;
// commands, long-running processes and file uploads all ride on it as channels.
//
// Host keys are checked strictly against known_hosts, as OpenSSH does with
// StrictHostKeyChecking yes: an unknown key is refused unless accept_new is asked for, a
// changed key is always refused. Every failure to reach, authenticate or run is thrown as
// np::EnvironmentError with a message that names the node and says what to do.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/errors.hpp"

namespace np::remote {

using Millis = std::chrono::milliseconds;

// What a node may print to one command, at most, whatever its software does: past a bound the
// command is stopped and OutputTooLarge names it and the bound, so a node printing gigabytes
// leaves the console's memory flat. A command's stdout may hold more where its caller says so
// (CommandShell::begin: a tool's output grows with its test's length).
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;     // one line of stdout
inline constexpr size_t kMaxErrBytes = size_t{1} << 20;      // stderr of one command
inline constexpr size_t kMaxOutputBytes = size_t{16} << 20;  // stdout of one command
class OutputTooLarge : public EnvironmentError {
  public:
    // "node1-1: `iperf3 -c …` printed more than 16 MiB on stdout: stopped (…)"
    OutputTooLarge(const std::string& node, const std::string& command, std::string exceeded);
    const std::string& exceeded() const { return exceeded_; }  // "printed more than …"

  private:
    std::string exceeded_;
};

enum class HostKeyPolicy {
    strict,      // unknown or changed key: refuse
    accept_new,  // unknown key: add it to known_hosts; changed key: still refuse
};

struct SessionOptions {
    std::string host;  // as the user names the node: an ssh_config Host alias or a host name
    // ssh_config to read. Empty: ~/.ssh/config then /etc/ssh/ssh_config, as OpenSSH does.
    std::string ssh_config;
    // Overrides UserKnownHostsFile from ssh_config when set.
    std::string known_hosts;
    HostKeyPolicy host_keys = HostKeyPolicy::strict;
    // Overrides ConnectTimeout from ssh_config when set; libssh then also uses it as the limit
    // of each blocking protocol step (opening a channel, a channel request).
    std::optional<Millis> connect_timeout;
    Millis command_timeout{30000};  // default limit of exec()
};

struct CommandResult {
    int exit_status = -1;  // -1 when the command was killed by a signal or gave none
    std::string out;
    std::string err;
};

class Session;

// A remote command that keeps running while we talk to it line by line: how the probe runs on
// a node. Its stdin, stdout and lifetime are those of the channel: close_stdin() is its EOF,
// and destroying a Process that is still running sends EOF, waits up to 2 s, then sends TERM
// and KILL to its process group on the node (OpenSSH ignores SSH signal requests for root
// logins), then closes the channel. The Session must outlive it.
class Process {
  public:
    ~Process();
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    void write_line(std::string_view line);
    // Writes bytes as they are (an upload's data through a shell's stdin).
    void write(std::string_view data);
    // The next stdout line without its newline; nullopt when none came within `timeout` or the
    // process closed its stdout (then eof() is true).
    std::optional<std::string> read_line(Millis timeout);
    bool eof() const { return eof_ && read_at_ == buffer_.size(); }
    void close_stdin();
    // Waits for the process to exit and returns its exit status (-1 when killed by a signal).
    // stdout not yet read stays available to read_line(). Throws on timeout.
    int wait(Millis timeout);
    const std::string& err() const { return err_; }  // stderr so far, but what was discarded
    // Forgets the first `n` bytes of stderr, read by now (a shell's earlier commands').
    void discard_err(size_t n) { err_.erase(0, std::min(n, err_.size())); }

    struct Channel;  // the libssh channel; defined in session.cpp

  private:
    friend class Session;
    Process(Session& session, std::unique_ptr<Channel> channel, std::string command);
    void pump(Millis timeout);  // reads what arrives within timeout into buffer_ and err_

    Session& session_;
    std::unique_ptr<Channel> channel_;
    std::string command_;
    std::string buffer_;
    // Where read_line() goes on in buffer_: the lines before it are read. Dropped from buffer_
    // once a chunk is read, not line by line, so a tool that prints many short lines costs
    // the bytes, not the lines times the chunk.
    size_t read_at_ = 0;
    std::string err_;
    bool eof_ = false;
    bool stdin_closed_ = false;
    std::optional<int> exit_status_;
    std::optional<long> pgid_;  // its process group on the node
};

class Session {
  public:
    // Connects, checks the host key and authenticates (ssh-agent, then the IdentityFiles of
    // ssh_config and libssh's defaults). Throws EnvironmentError; InputError for an ssh_config
    // that cannot be read.
    explicit Session(const SessionOptions& options);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // "node1-1 (root@198.19.0.1:22)": how messages name the node.
    const std::string& name() const { return name_; }
    // The address connected to (ssh_config's HostName, else the name as given).
    const std::string& host() const;

    // Runs a shell command line (quote arguments with shell_quote) with stdin at EOF, and
    // returns its exit status, stdout and stderr. On timeout it stops the command's process
    // group (TERM, then KILL) and throws.
    CommandResult exec(const std::string& command);
    CommandResult exec(const std::string& command, Millis timeout);
    // exec() that throws EnvironmentError naming the command, its status and stderr unless it
    // exits 0.
    CommandResult check(const std::string& command);

    // Starts a command on its own channel (each channel pays for a login shell on the node:
    // CommandShell runs many commands over one).
    std::unique_ptr<Process> start(const std::string& command);

    struct Impl;

  private:
    friend class Process;
    void kill_group(long pgid);  // TERM, then KILL, to a process group on the node
    std::unique_ptr<Impl> impl_;
    std::string name_;
    Millis command_timeout_;
};

// sha256 of a local file as lowercase hex (what sha256sum prints).
std::string sha256_file_hex(const std::string& path);

}  // namespace np::remote
