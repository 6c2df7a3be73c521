#include "src/remote/session.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <libssh/libssh.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "common/errors.hpp"
#include "src/remote/shell.hpp"

namespace np::remote {
namespace {

using Kind = EnvironmentError::Kind;
using Clock = std::chrono::steady_clock;

// How long one read waits for stdout before stderr is looked at again.
constexpr int kReadSliceMs = 50;
constexpr long kDefaultConnectTimeoutS = 10;

std::string take(char* p) {
    if (p == nullptr) return {};
    std::string s(p);
    ssh_string_free_char(p);
    return s;
}

std::string option_string(ssh_session s, ssh_options_e option) {
    char* value = nullptr;
    if (ssh_options_get(s, option, &value) != SSH_OK) return {};
    return take(value);
}

int remaining_ms(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
    return left < 0 ? 0 : static_cast<int>(left);
}

// sshd starts each command as a session leader (setsid), so the PID of the shell running it
// is also the process group of everything it starts. Commands print it first, so that a
// command which outlives its welcome can be stopped by group: OpenSSH ignores the SSH
// "signal" request for root logins, which skip privilege separation.
constexpr std::string_view kPgidMarker = "np-pgid:";

std::string with_pgid(const std::string& command) {
    return "echo " + std::string(kPgidMarker) + "$$; " + command;
}

// Takes the marker line (and any login-script noise before it) off the front of `out`.
std::optional<long> take_pgid(std::string& out) {
    const size_t at = out.find(kPgidMarker);
    if (at == std::string::npos || (at > 0 && out[at - 1] != '\n')) return std::nullopt;
    const size_t nl = out.find('\n', at);
    if (nl == std::string::npos) return std::nullopt;
    const std::string digits = out.substr(at + kPgidMarker.size(), nl - at - kPgidMarker.size());
    out.erase(0, nl + 1);
    try {
        const long pgid = std::stol(digits);
        if (pgid > 1) return pgid;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

struct HostKey {
    std::string type;
    std::string fingerprint;  // SHA256:base64, as OpenSSH prints it
};

HostKey server_host_key(ssh_session s) {
    ssh_key key = nullptr;
    if (ssh_get_server_publickey(s, &key) != SSH_OK) return {"?", "?"};
    HostKey k{ssh_key_type_to_char(ssh_key_type(key)), "?"};
    unsigned char* hash = nullptr;
    size_t len = 0;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) == 0) {
        k.fingerprint = take(ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len));
        ssh_clean_pubkey_hash(&hash);
    }
    ssh_key_free(key);
    return k;
}

}  // namespace

struct Session::Impl {
    ssh_session ssh = nullptr;
    std::string alias;  // as the user named the node
    std::string host;   // after ssh_config: HostName
    std::string user;
    std::string known_hosts;
    unsigned int port = 22;

    ~Impl() {
        if (ssh == nullptr) return;
        if (ssh_is_connected(ssh) != 0) ssh_disconnect(ssh);
        ssh_free(ssh);
    }

    // How ssh-keygen -R and known_hosts name a host on a non-default port.
    std::string known_hosts_name() const {
        return port == 22 ? host : fmt::format("[{}]:{}", host, port);
    }

    // The session's options: the node's name, our defaults, then ssh_config (like ssh -F).
    void apply_options(const SessionOptions& options) {
        ssh_session s = ssh;
        ssh_options_set(s, SSH_OPTIONS_HOST, options.host.c_str());
        // Before the config is read, so that its ConnectTimeout wins over this default.
        const long default_timeout_s = kDefaultConnectTimeoutS;
        ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &default_timeout_s);
        // Commands and probe messages are small: without this, Nagle and delayed ACKs add ~40 ms
        // to each exchange.
        const int nodelay = 1;
        ssh_options_set(s, SSH_OPTIONS_NODELAY, &nodelay);
        if (!options.ssh_config.empty() && access(options.ssh_config.c_str(), R_OK) != 0) {
            throw InputError("--ssh-config", fmt::format("{}: cannot read it: {}",
                                                         options.ssh_config, std::strerror(errno)));
        }
        // Like ssh -F: an explicit file is the only one read; without one, the user's then the
        // system's. Either way libssh will not read another at connect time.
        if (ssh_options_parse_config(
                s, options.ssh_config.empty() ? nullptr : options.ssh_config.c_str()) != 0) {
            throw InputError(
                "--ssh-config",
                fmt::format("{}: {}",
                            options.ssh_config.empty() ? "~/.ssh/config" : options.ssh_config,
                            ssh_get_error(s)));
        }
        if (!options.known_hosts.empty()) {
            ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, options.known_hosts.c_str());
        }
        if (options.connect_timeout) {
            const long ms = static_cast<long>(options.connect_timeout->count());
            const long sec = ms / 1000;
            const long usec = (ms % 1000) * 1000;
            ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &sec);
            ssh_options_set(s, SSH_OPTIONS_TIMEOUT_USEC, &usec);
        }
    }

    // Strict by default: an unknown key only with accept_new, a changed one never.
    void check_host_key(const std::string& name, HostKeyPolicy policy) const {
        ssh_session s = ssh;
        const HostKey key = server_host_key(s);
        const std::string offers =
            fmt::format("the node offers {} key {}", key.type, key.fingerprint);
        switch (ssh_session_is_known_server(s)) {
            case SSH_KNOWN_HOSTS_OK:
                break;
            case SSH_KNOWN_HOSTS_NOT_FOUND:
            case SSH_KNOWN_HOSTS_UNKNOWN:
                if (policy == HostKeyPolicy::accept_new) {
                    if (ssh_session_update_known_hosts(s) != SSH_OK) {
                        throw EnvironmentError(Kind::host_key,
                                               fmt::format("{}: cannot add its host key to {}: {}",
                                                           name, known_hosts, ssh_get_error(s)));
                    }
                    break;
                }
                throw EnvironmentError(
                    Kind::host_key,
                    fmt::format(
                        "{}: host key unknown: {}, which is not in {}. Refusing to connect. "
                        "Compare the fingerprint with the node's own (ssh-keygen -lf "
                        "/etc/ssh/ssh_host_{}_key.pub on it), then accept it with "
                        "--accept-new-host-keys, which adds it to {}",
                        name, offers, known_hosts, key.type.substr(key.type.find('-') + 1),
                        known_hosts));
            case SSH_KNOWN_HOSTS_CHANGED:
            case SSH_KNOWN_HOSTS_OTHER:
                throw EnvironmentError(
                    Kind::host_key,
                    fmt::format("{}: HOST KEY MISMATCH: {}, but {} holds a different key for {}. "
                                "Refusing to connect. A re-imaged node gets new keys, and so would "
                                "someone in the middle: if the node was re-imaged, remove the old "
                                "key with `ssh-keygen -R '{}' -f {}`, then connect with "
                                "--accept-new-host-keys",
                                name, offers, known_hosts, known_hosts_name(), known_hosts_name(),
                                known_hosts));
            case SSH_KNOWN_HOSTS_ERROR:
            default:
                throw EnvironmentError(Kind::host_key,
                                       fmt::format("{}: cannot check its host key against {}: {}",
                                                   name, known_hosts, ssh_get_error(s)));
        }
    }

    void authenticate(const std::string& name) const {
        ssh_session s = ssh;
        // ssh-agent first, then the IdentityFiles (ssh_config's and libssh's defaults).
        if (ssh_userauth_publickey_auto(s, nullptr, nullptr) != SSH_AUTH_SUCCESS) {
            throw EnvironmentError(
                Kind::auth,
                fmt::format("{}: authentication failed: the node accepted none of the keys offered "
                            "(ssh-agent, IdentityFile in ssh_config, ~/.ssh/id_*). Check that your "
                            "public key is in {}'s authorized_keys on the node{}",
                            name, user,
                            std::strlen(ssh_get_error(s)) > 0
                                ? fmt::format(" ({})", ssh_get_error(s))
                                : std::string()));
        }
    }
};

// One exec channel. Closing it (destructor) is what ends a remote process we did not wait for.
struct Process::Channel {
    ssh_channel ch = nullptr;
    ~Channel() {
        if (ch == nullptr) return;
        ssh_channel_close(ch);
        ssh_channel_free(ch);
    }
};

namespace {

std::unique_ptr<Process::Channel> open_exec(ssh_session s, const std::string& name,
                                            const std::string& command) {
    auto c = std::make_unique<Process::Channel>();
    c->ch = ssh_channel_new(s);
    if (c->ch == nullptr || ssh_channel_open_session(c->ch) != SSH_OK) {
        throw EnvironmentError(Kind::unreachable, fmt::format("{}: cannot open an SSH channel: {}",
                                                              name, ssh_get_error(s)));
    }
    if (ssh_channel_request_exec(c->ch, command.c_str()) != SSH_OK) {
        throw EnvironmentError(
            Kind::remote, fmt::format("{}: cannot run `{}`: {}", name, command, ssh_get_error(s)));
    }
    return c;
}

// Reads what stdout brings within wait_ms and whatever stderr holds. Returns true once the
// remote side closed its output and everything was read.
bool read_some(ssh_session s, ssh_channel ch, const std::string& name, std::string& out,
               std::string& err, int wait_ms) {
    std::array<char, 16384> buf{};
    const int n = ssh_channel_read_timeout(ch, buf.data(), buf.size(), 0, wait_ms);
    if (n == SSH_ERROR) {
        throw EnvironmentError(Kind::unreachable, fmt::format("{}: the SSH session dropped: {}",
                                                              name, ssh_get_error(s)));
    }
    if (n > 0) out.append(buf.data(), static_cast<size_t>(n));
    // What stderr holds, but not without end in one call: a flood stays in the channel until
    // the caller has looked at what it has (kMaxErrBytes).
    int e = 0;
    size_t taken = 0;
    while (taken < 4 * buf.size() &&
           (e = ssh_channel_read_nonblocking(ch, buf.data(), buf.size(), 1)) > 0) {
        err.append(buf.data(), static_cast<size_t>(e));
        taken += static_cast<size_t>(e);
    }
    if (e == SSH_ERROR) {
        throw EnvironmentError(Kind::unreachable, fmt::format("{}: the SSH session dropped: {}",
                                                              name, ssh_get_error(s)));
    }
    return ssh_channel_is_eof(ch) != 0;
}

}  // namespace

Session::Session(const SessionOptions& options)
    : impl_(std::make_unique<Impl>()), command_timeout_(options.command_timeout) {
    Impl& m = *impl_;
    m.alias = options.host;
    m.ssh = ssh_new();
    if (m.ssh == nullptr) throw EnvironmentError(Kind::remote, "libssh: cannot create a session");
    ssh_session s = m.ssh;
    m.apply_options(options);
    m.host = option_string(s, SSH_OPTIONS_HOST);
    ssh_options_get_port(s, &m.port);
    name_ = fmt::format("{} ({}:{})", m.alias, m.host, m.port);

    if (ssh_connect(s) != SSH_OK) {
        throw EnvironmentError(
            Kind::unreachable,
            fmt::format("{}: cannot connect: {}. Check that the node is powered on (omf tell on) "
                        "and that its name and address in ssh_config are right",
                        name_, ssh_get_error(s)));
    }
    m.user = option_string(s, SSH_OPTIONS_USER);
    m.known_hosts = option_string(s, SSH_OPTIONS_KNOWNHOSTS);
    name_ = fmt::format("{} ({}@{}:{})", m.alias, m.user, m.host, m.port);

    m.check_host_key(name_, options.host_keys);
    m.authenticate(name_);
}

Session::~Session() = default;

const std::string& Session::host() const {
    return impl_->host;
}

CommandResult Session::exec(const std::string& command) {
    return exec(command, command_timeout_);
}

CommandResult Session::exec(const std::string& command, Millis timeout) {
    auto c = open_exec(impl_->ssh, name_, with_pgid(command));
    ssh_channel_send_eof(c->ch);  // nothing to read on stdin
    CommandResult r;
    const auto deadline = Clock::now() + timeout;
    while (!read_some(impl_->ssh, c->ch, name_, r.out, r.err,
                      std::min(kReadSliceMs, remaining_ms(deadline)))) {
        if (r.out.size() > kMaxOutputBytes || r.err.size() > kMaxErrBytes) {
            if (const auto pgid = take_pgid(r.out)) kill_group(*pgid);
            const bool out = r.out.size() > kMaxOutputBytes;
            throw OutputTooLarge(name_, command,
                                 fmt::format("printed more than {} MiB on {}",
                                             (out ? kMaxOutputBytes : kMaxErrBytes) >> 20,
                                             out ? "stdout" : "stderr"));
        }
        if (Clock::now() >= deadline) {
            if (const auto pgid = take_pgid(r.out)) kill_group(*pgid);
            throw EnvironmentError(
                Kind::timeout, fmt::format("{}: `{}` did not finish within {} ms", name_, command,
                                           timeout.count()));
        }
    }
    r.exit_status = ssh_channel_get_exit_status(c->ch);
    take_pgid(r.out);
    return r;
}

void Session::kill_group(long pgid) {
    try {
        const std::string group = "-" + std::to_string(pgid);
        exec(fmt::format("kill -TERM {} 2>/dev/null; sleep 0.2; kill -KILL {} 2>/dev/null; "
                         "true",
                         group, group),
             Millis(5000));
    } catch (const std::exception&) {
        // The session is gone too; then nothing more can be done from here.
    }
}

CommandResult Session::check(const std::string& command) {
    CommandResult r = exec(command);
    if (r.exit_status != 0) {
        throw EnvironmentError(
            Kind::remote, fmt::format("{}: `{}` exited with status {}{}", name_, command,
                                      r.exit_status, r.err.empty() ? "" : ": " + trimmed(r.err)));
    }
    return r;
}

std::unique_ptr<Process> Session::start(const std::string& command) {
    std::unique_ptr<Process> p(
        new Process(*this, open_exec(impl_->ssh, name_, with_pgid(command)), command));
    const auto deadline = Clock::now() + command_timeout_;
    while (!(p->pgid_ = take_pgid(p->buffer_))) {
        if (p->buffer_.size() > kMaxLineBytes || p->err_.size() > kMaxErrBytes)
            throw OutputTooLarge(name_, command, "printed past its bounds before it started");
        if (p->eof_ || Clock::now() >= deadline) {
            throw EnvironmentError(Kind::remote, fmt::format("{}: `{}` did not start: {}", name_,
                                                             command, trimmed(p->err_)));
        }
        p->pump(Millis(std::min(remaining_ms(deadline), kReadSliceMs)));
    }
    return p;
}

OutputTooLarge::OutputTooLarge(const std::string& node, const std::string& command,
                               std::string exceeded)
    : EnvironmentError(Kind::remote,
                       fmt::format("{}: `{}` {}: stopped (what a node prints is bounded)", node,
                                   command, exceeded)),
      exceeded_(std::move(exceeded)) {}

Process::Process(Session& session, std::unique_ptr<Channel> channel, std::string command)
    : session_(session), channel_(std::move(channel)), command_(std::move(command)) {}

Process::~Process() {
    if (!channel_ || exit_status_) return;
    // The channel is the process's lifetime: EOF first, so it can finish cleanly; then TERM and
    // KILL to its process group if it does not; closing the channel closes its pipes.
    try {
        close_stdin();
        // What it prints meanwhile is nobody's: dropped as it comes, and a process still
        // printing a flood is not waited for.
        const auto deadline = Clock::now() + Millis(2000);
        size_t drained = 0;
        while (!eof_ && Clock::now() < deadline && drained <= kMaxLineBytes) {
            pump(Millis(kReadSliceMs));
            drained += buffer_.size() - read_at_ + err_.size();
            buffer_.clear();
            read_at_ = 0;
            err_.clear();
        }
        if (!eof_ && pgid_) session_.kill_group(*pgid_);
    } catch (const std::exception&) {
        // The session is gone: nothing more can reach the process than the closed channel.
    }
}

void Process::pump(Millis timeout) {
    if (eof_) return;
    eof_ = read_some(session_.impl_->ssh, channel_->ch, session_.name(), buffer_, err_,
                     static_cast<int>(timeout.count()));
}

void Process::write_line(std::string_view line) {
    std::string data(line);
    data += '\n';
    write(data);
}

void Process::write(std::string_view data) {
    for (size_t done = 0; done < data.size();) {
        const int n = ssh_channel_write(channel_->ch, data.data() + done,
                                        static_cast<uint32_t>(data.size() - done));
        if (n == SSH_ERROR) {
            throw EnvironmentError(Kind::unreachable,
                                   fmt::format("{}: writing to `{}`: {}", session_.name(), command_,
                                               ssh_get_error(session_.impl_->ssh)));
        }
        done += static_cast<size_t>(n);
    }
}

std::optional<std::string> Process::read_line(Millis timeout) {
    const auto deadline = Clock::now() + timeout;
    bool looked = false;
    for (;;) {
        const size_t nl = buffer_.find('\n', read_at_);
        if (nl != std::string::npos) {
            std::string line = buffer_.substr(read_at_, nl - read_at_);
            read_at_ = nl + 1;
            return line;
        }
        buffer_.erase(0, read_at_);  // what is left is one line's start
        read_at_ = 0;
        if (buffer_.size() > kMaxLineBytes)
            throw OutputTooLarge(
                session_.name(), command_,
                fmt::format("printed a line longer than {} MiB", kMaxLineBytes >> 20));
        if (err_.size() > kMaxErrBytes)
            throw OutputTooLarge(
                session_.name(), command_,
                fmt::format("printed more than {} MiB on stderr", kMaxErrBytes >> 20));
        if (eof_) {
            if (buffer_.empty()) return std::nullopt;
            std::string rest;
            rest.swap(buffer_);  // a last line without its newline
            return rest;
        }
        const int left = remaining_ms(deadline);
        // A zero timeout still looks once at what has arrived: a poll, not a no-op.
        if (left == 0 && looked) return std::nullopt;
        looked = true;
        pump(Millis(std::min(left, kReadSliceMs)));
    }
}

void Process::close_stdin() {
    if (stdin_closed_) return;
    stdin_closed_ = true;
    ssh_channel_send_eof(channel_->ch);
}

int Process::wait(Millis timeout) {
    if (exit_status_) return *exit_status_;
    close_stdin();
    const auto deadline = Clock::now() + timeout;
    while (!eof_) {
        if (Clock::now() >= deadline) {
            throw EnvironmentError(Kind::timeout,
                                   fmt::format("{}: `{}` did not exit within {} ms of its stdin "
                                               "closing",
                                               session_.name(), command_, timeout.count()));
        }
        pump(Millis(std::min(remaining_ms(deadline), kReadSliceMs)));
        const size_t unread = buffer_.size() - read_at_;
        if (unread > kMaxOutputBytes || err_.size() > kMaxErrBytes)
            throw OutputTooLarge(
                session_.name(), command_,
                unread > kMaxOutputBytes
                    ? fmt::format("printed more than {} MiB on stdout", kMaxOutputBytes >> 20)
                    : fmt::format("printed more than {} MiB on stderr", kMaxErrBytes >> 20));
    }
    exit_status_ = ssh_channel_get_exit_status(channel_->ch);
    return *exit_status_;
}

std::string sha256_file_hex(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, fmt::format("cannot read it: {}", std::strerror(errno)));
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
    std::vector<char> buf(65536);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
    }
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), md.data(), &len);
    std::string hex;
    for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
    return hex;
}

}  // namespace np::remote
