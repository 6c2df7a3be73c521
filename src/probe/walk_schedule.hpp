#pragma once
// When the probe walks the kernel's socket tables: for TCP's own account of the test's
// connections (tcp_sockets.hpp) and for the test's processes (tool_processes.hpp). A walk reads
// the whole established hash, shared by all network namespaces (262,144 buckets on a 2-vCPU VM:
// 2.5 ms a sock_diag dump, 5 ms a read of /proc/net/tcp), so walking at every sample cost an idle
// probe 4 % of a core (docs/performance.md, "The sampler's own cost"). Where the probe's tc
// programs count the flow by stream, the streams they name say when there is something new to
// find; without them (the kernel-counters tier), a walk every kWalkEveryMs while the iface moves.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace np::probe {

// A stream the tc programs claimed a slot for (bpf/probe.h, "streams map"): its port that is not
// the iperf port, and its protocol (NP_PROTO_TCP or NP_PROTO_UDP).
struct ClaimedStream {
    uint16_t port = 0;
    uint8_t proto = 0;
    bool operator==(const ClaimedStream&) const = default;
};

// What the tc programs said at a sample (`counted`): every stream claimed so far (slots freed at
// a phase's end may still be listed). `unnamed`: traffic since the last sample that no claimed
// stream names — with the programs, a packet of the measured flow that found no slot for its
// stream; at the kernel-counters tier, which loads none (and has no streams), any packet the
// iface's own counters moved.
struct StreamNews {
    bool counted = false;
    std::vector<ClaimedStream> streams;
    bool unnamed = false;
};

// Whether a sample walks. The first sample and every cut walk. With the streams, a sample walks
// while a stream's port is among `unfound` (what the walker has not found yet) and was first listed
// there at most `retry_ms` ago (a TCP connection enters the tables once established, which a
// lost SYN-ACK delays by seconds; a process holds its socket before the first packet), and every
// kFallbackMs while a stream's packets find no slot (its slots all held by others). Without
// them, every kWalkEveryMs while the iface moves.
class WalkSchedule {
  public:
    static constexpr int64_t kWalkEveryMs = 500;
    static constexpr int64_t kFallbackMs = 2000;
    explicit WalkSchedule(int64_t retry_ms) : retry_ms_(retry_ms) {}
    bool next(bool cut, const StreamNews& news, const std::vector<uint16_t>& unfound,
              int64_t now_ms);

  private:
    int64_t retry_ms_;
    std::map<uint16_t, int64_t> unfound_since_;  // by port
    bool unnamed_ = false;                       // since the last walk
    std::optional<int64_t> last_walk_ms_;
};

}  // namespace np::probe
