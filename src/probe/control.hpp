#pragma once
// The probe's control socket (--control PATH): a Unix stream socket, mode 0600, that takes one
// command per connection and answers one JSON line (common/probe_protocol.hpp). It is how a
// probe started from a script, Ansible or a notebook is driven without holding its stdin, and
// how `run` drives the probe on a node through the one shell it keeps open there.
#include <functional>
#include <optional>
#include <string>

namespace np::probe {

class ControlSocket {
  public:
    // Listens on `path`. A socket file left by a probe that died is replaced; a live probe
    // listening there, or a path that is not a socket, is refused (EnvironmentError /
    // InputError naming --control).
    explicit ControlSocket(std::string path);
    ~ControlSocket();  // closes and removes the socket file
    ControlSocket(const ControlSocket&) = delete;
    ControlSocket& operator=(const ControlSocket&) = delete;

    int fd() const { return fd_; }
    // Accepts one waiting connection, reads its command line and writes back what `handle`
    // returns for it. A client that sends nothing within a second is dropped. When `handle`
    // returns nothing, the client waits for answer_later() (how `stop` is answered with the
    // trace once it is written).
    void serve_one(
        const std::function<std::optional<std::string>(const std::string& command)>& handle);
    void answer_later(const std::string& answer);

  private:
    std::string path_;
    int fd_ = -1;
    int waiting_ = -1;  // a client whose answer comes later
};

// Client side (`np-probe --control PATH --send CMD`): sends CMD and returns the answer line.
// Throws EnvironmentError when no probe listens on PATH or it does not answer in `timeout_ms`.
std::string send_control_command(const std::string& path, const std::string& command,
                                 int timeout_ms);

}  // namespace np::probe
