#pragma once
// The error type for what is wrong with the environment rather than the input: a node that is
// unreachable, refuses the key, offers an unknown host key, a remote command that times out; a
// host without the privileges, BTF, hook or interface the probe needs.
// main() prints it and maps it to exit status 3 (docs/design.md, "Contracts"); bad input stays np::InputError (2).
#include <stdexcept>
#include <string>

namespace np {

class EnvironmentError : public std::runtime_error {
  public:
    enum class Kind {
        unreachable,  // no TCP connection, or the session dropped
        auth,         // the server accepted none of our keys
        host_key,     // unknown or changed host key: refused
        timeout,      // a remote operation did not finish in time
        remote,       // a remote command or transfer failed
        host,         // this host lacks what is needed: privileges, BTF, a kernel hook, an iface
    };

    EnvironmentError(Kind kind, const std::string& message)
        : std::runtime_error(message), kind_(kind) {}
    explicit EnvironmentError(const std::string& message) : EnvironmentError(Kind::host, message) {}

    Kind kind() const { return kind_; }

  private:
    Kind kind_;
};

}  // namespace np
