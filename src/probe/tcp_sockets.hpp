#pragma once
// TCP's own account of the test's connections on this node: the kernel's tcp_info for every TCP
// socket on the iperf port in this network namespace, read over sock_diag netlink (what `ss -ti`
// reads; no capability needed) at each sample, so the last reading before a connection closes
// stands for it. At a phase cut, the connection that moved the most bytes in the phase is the
// phase's (the data connection, not iperf3's control one): how long it had data to send and how
// long the peer's receive window or its own send buffer held it — the evidence that names
// TCP's own limit (docs/design.md, "The bottleneck").
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "analysis/trace.hpp"

namespace np::probe {

// One socket as a sock_diag dump reports it: its kernel cookie (unique while it lives) and its
// tcp_info.
struct TcpSocketReading {
    uint64_t cookie = 0;
    TcpAccount account;
};

// The TCP sockets on `port` (local or remote) in a sock_diag dump's messages (`len` bytes of
// netlink messages, as recv returns them); `done` is set at NLMSG_DONE or an error message.
std::vector<TcpSocketReading> parse_tcp_diag(const uint8_t* data, size_t len, uint16_t port,
                                             bool& done);

class TcpSockets {
  public:
    explicit TcpSockets(uint16_t port);
    ~TcpSockets();
    TcpSockets(const TcpSockets&) = delete;
    TcpSockets& operator=(const TcpSockets&) = delete;
    // At each sample: every TCP socket on the port, IPv4 and IPv6.
    void read();
    // At a phase cut: the connection that moved the most bytes since the last cut, at its last
    // reading (none when no TCP socket on the port moved any); then forgets the closed ones.
    std::optional<TcpAccount> cut();

  private:
    struct Seen {
        TcpAccount first;  // at the phase's start (zeros when it opened in the phase)
        TcpAccount last;
        bool open = true;  // in the last dump
    };
    void dump(int family, std::map<uint64_t, TcpAccount>& into);

    uint16_t port_;
    int fd_ = -1;
    std::map<uint64_t, Seen> seen_;  // by cookie
};

}  // namespace np::probe
