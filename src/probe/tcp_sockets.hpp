#pragma once
// TCP's own account of the test's connections on this node: the kernel's tcp_info for every TCP
// socket on the iperf port in this network namespace, read over sock_diag netlink (what `ss -ti`
// reads; no capability needed) at each sample, so the last reading before a connection closes
// stands for it. Finding new sockets walks the kernel's whole established hash, so that is done
// only while a TCP stream the probe's tc programs named has no socket found yet (WalkSchedule),
// and at each cut; otherwise each known socket is asked for by its id, which the kernel finds by
// its hash. tcp_info's counters run from the connection's start, so a socket found a few samples
// late has lost nothing. At a phase cut, the connection that moved the most bytes in the phase is
// the phase's (the data connection, not iperf3's control one): how long it had data to send and
// how long the peer's receive window or its own send buffer held it — the evidence that names
// TCP's own limit (docs/design.md, "The bottleneck").
#include <linux/inet_diag.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/trace.hpp"
#include "src/probe/walk_schedule.hpp"

namespace np::probe {

// One socket as a sock_diag dump reports it: its kernel cookie (unique while it lives) and its
// tcp_info.
struct TcpSocketReading {
    uint64_t cookie = 0;
    TcpAccount account;
    uint8_t family = 0;     // AF_INET or AF_INET6
    inet_diag_sockid id{};  // what asks the kernel for this socket alone
};

// The TCP sockets on `port` (local or remote) in a sock_diag dump's messages (`len` bytes of
// netlink messages, as recv returns them); `done` is set at NLMSG_DONE or an error message.
std::vector<TcpSocketReading> parse_tcp_diag(const uint8_t* data, size_t len, uint16_t port,
                                             bool& done);

// The TCP streams' connections the walker found that have closed since, by the stream's port
// (the one that is not the iperf port). The tc programs keep a stream's slot until a phase it
// moves nothing in, and a walk cannot find a closed connection again, so such a stream is not
// looked for while its slot stays claimed (walking at every sample for the retry's 4 s, after
// each TCP test, cost a server probe 0.12 to 0.18 s of CPU in the next phase:
// docs/performance.md). Once its slot is freed, the port is a new connection's if the programs
// claim it again.
class ClosedStreams {
  public:
    void closed(uint16_t port) { ports_.insert(port); }
    void freed(const std::vector<ClaimedStream>& streams);
    // The ports of the TCP streams in `claimed` whose connection is to be found: not among
    // `known` (the walker's connections) nor closed here.
    std::vector<uint16_t> unfound(const std::vector<ClaimedStream>& claimed,
                                  const std::set<uint16_t>& known) const;

  private:
    std::set<uint16_t> ports_;
};

class TcpSockets {
  public:
    explicit TcpSockets(uint16_t port);
    ~TcpSockets();
    TcpSockets(const TcpSockets&) = delete;
    TcpSockets& operator=(const TcpSockets&) = delete;
    // At each sample: every TCP socket on the port, IPv4 and IPv6 — those already known by
    // their ids, new ones by a walk of the tables when the schedule says (always when `walk`).
    // `news`: what the tc programs counted since the last sample.
    void read(int64_t now_ms, bool walk, const StreamNews& news);
    // At a phase cut: the connection that moved the most bytes since the last cut, at its last
    // reading (none when no TCP socket on the port moved any); then forgets the closed ones.
    // `freed`: the streams whose slots the cut freed (prune_idle_streams).
    std::optional<TcpAccount> cut(const std::vector<ClaimedStream>& freed);

  private:
    struct Seen {
        TcpAccount first;  // at the phase's start (zeros when it opened in the phase)
        TcpAccount last;
        bool open = true;  // in the last reading
        uint8_t family = 0;
        inet_diag_sockid id{};
    };
    // Sends a sock_diag request for TCP's tcp_info: NLM_F_DUMP for every socket of `family`,
    // else the one with `id`.
    bool ask(uint8_t family, uint16_t flags, const inet_diag_sockid* id);
    // A connection's stream port: its port that is not the iperf port.
    uint16_t stream_port(const TcpAccount& a) const;
    void dump(int family, std::map<uint64_t, TcpSocketReading>& into);
    void lookup(const Seen& s, std::map<uint64_t, TcpSocketReading>& into);

    uint16_t port_;
    int fd_ = -1;
    std::map<uint64_t, Seen> seen_;  // by cookie
    ClosedStreams closed_;
    // A connection is in the tables once established: a lost SYN-ACK is resent at 1 s and 3 s.
    WalkSchedule schedule_{4000};
};

}  // namespace np::probe
