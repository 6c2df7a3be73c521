#include "src/probe/control.hpp"
#include "common/fd.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/errors.hpp"
#include "common/probe_protocol.hpp"

namespace np::probe {
namespace {

std::string errno_text() {
    return std::strerror(errno);
}

sockaddr_un socket_address(const std::string& path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(a.sun_path)) {
        throw InputError("--control", fmt::format("'{}' is not a socket path of 1 .. {} bytes",
                                                  path, sizeof(a.sun_path) - 1));
    }
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    return a;
}

// Waits until `fd` is readable or `deadline` passes; false on timeout.
bool wait_readable(int fd, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        const int n = poll(&p, 1, static_cast<int>(left));
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

bool write_all(int fd, const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

ControlSocket::ControlSocket(std::string path) : path_(std::move(path)) {
    const sockaddr_un addr = socket_address(path_);
    struct stat st {};
    if (lstat(path_.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            throw InputError("--control",
                             fmt::format("{} exists and is not a socket: not replacing it", path_));
        }
        // A live probe answers a connection; a dead one's socket refuses it.
        Fd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
            throw EnvironmentError(
                fmt::format("--control: a running probe already listens on {}", path_));
        }
        unlink(path_.c_str());
    }
    Fd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (s.get() < 0) throw EnvironmentError(fmt::format("--control: socket: {}", errno_text()));
    // Only root (the probe's user) may drive the probe: the socket is created 0600.
    const mode_t old_mask = umask(0177);
    const int bound = bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
    const int bind_errno = errno;
    umask(old_mask);
    if (bound != 0) {
        throw EnvironmentError(
            fmt::format("--control: cannot listen on {}: {}", path_, std::strerror(bind_errno)));
    }
    if (listen(s.get(), 8) != 0) {
        unlink(path_.c_str());
        throw EnvironmentError(fmt::format("--control: listen on {}: {}", path_, errno_text()));
    }
    fd_ = s.release();
}

ControlSocket::~ControlSocket() {
    if (waiting_ >= 0) close(waiting_);
    if (fd_ < 0) return;
    close(fd_);
    unlink(path_.c_str());
}

void ControlSocket::serve_one(
    const std::function<std::optional<std::string>(const std::string&)>& handle) {
    Fd client(accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC));
    if (client.get() < 0) return;  // EAGAIN: the client went away before we got to it
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (line.find('\n') == std::string::npos &&
           line.size() <= probe_protocol::kMaxCommandBytes) {
        if (!wait_readable(client.get(), deadline)) break;
        char buf[512];
        const ssize_t n = recv(client.get(), buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        line.append(buf, static_cast<size_t>(n));
    }
    if (const size_t nl = line.find('\n'); nl != std::string::npos) line.resize(nl);
    if (line.size() > probe_protocol::kMaxCommandBytes || line.empty()) return;
    const std::optional<std::string> answer = handle(line);
    if (answer) {
        write_all(client.get(), *answer + "\n");
    } else if (waiting_ < 0) {
        waiting_ = client.release();
    }
}

void ControlSocket::answer_later(const std::string& answer) {
    if (waiting_ < 0) return;
    write_all(waiting_, answer + "\n");
    close(waiting_);
    waiting_ = -1;
}

std::string send_control_command(const std::string& path, const std::string& command,
                                 int timeout_ms) {
    const sockaddr_un addr = socket_address(path);
    Fd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.get() < 0) throw EnvironmentError(fmt::format("socket: {}", errno_text()));
    if (connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
        throw EnvironmentError(fmt::format("no probe listens on {}: {}", path, errno_text()));
    }
    if (!write_all(s.get(), command + "\n")) {
        throw EnvironmentError(fmt::format("{}: sending '{}': {}", path, command, errno_text()));
    }
    shutdown(s.get(), SHUT_WR);
    std::string reply;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        if (!wait_readable(s.get(), deadline)) {
            throw EnvironmentError(
                fmt::format("{}: no answer to '{}' within {} ms", path, command, timeout_ms));
        }
        char buf[65536];
        const ssize_t n = recv(s.get(), buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            throw EnvironmentError(fmt::format("{}: reading the answer: {}", path, errno_text()));
        if (n == 0) break;
        reply.append(buf, static_cast<size_t>(n));
    }
    while (!reply.empty() && reply.back() == '\n') reply.pop_back();
    if (reply.empty()) {
        throw EnvironmentError(fmt::format(
            "{}: the probe closed the connection without answering '{}'", path, command));
    }
    return reply;
}

}  // namespace np::probe
