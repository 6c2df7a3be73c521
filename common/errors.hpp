#pragma once
// The two error types every part shares (analysis, the probe, the transport, the CLI), each with
// its exit status (docs/design.md, "Contracts"): InputError, bad input (2), and
// EnvironmentError, what is wrong with the environment rather than the input (3).
#include <cstdint>
#include <stdexcept>
#include <string>

namespace np {

// Bad input anywhere — an option, a params key, a JSON field, a line of a tool's output: it
// names what was wrong (`field`) and, for text inputs, the line. main() maps it to exit status 2.
class InputError : public std::runtime_error {
  public:
    InputError(std::string field, const std::string& message, int64_t line = 0)
        : std::runtime_error(message), field_(std::move(field)), line_(line) {}

    const std::string& field() const { return field_; }
    int64_t line() const { return line_; }  // 1-based; 0 when the input has no lines

  private:
    std::string field_;
    int64_t line_;
};

// The environment: a node that is unreachable, refuses the key, offers an unknown host key, a
// remote command that times out; a host without the privileges, BTF, hook or interface the
// probe needs.
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
