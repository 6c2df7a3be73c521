#pragma once
// The round trip under load, located: ping's echoes during a test, stamped by the probes of the
// node that pinged and the node that answered (EchoTrace), split into the stages the time was
// spent in. Each stage is a difference of two stamps on one node's clock, so the nodes' clocks
// need not agree:
//   pinger queue     request_xmit - request_tx   its own egress queue (the qdisc), bufferbloat
//   path             (reply_rx - request_xmit) - (reply_xmit - request_rx)
//                    beyond both NICs, both ways: the wire, any hop between the nodes, and
//                    each receiving NIC's ring or backlog before that node's ingress hook
//   responder host   reply_tx - request_rx       the answering host, ingress hook to egress hook
//   responder queue  reply_xmit - reply_tx       the answering node's egress queue
// They add up to the round trip the pinger's own hooks saw (reply_rx - request_tx). Where a
// node's probe had no driver handoff (below the full tiers) its queue is not split from the
// path. What the pinging host adds above its NIC (ping's own stack) is outside the stamps.
#include <optional>
#include <string>

#include "common/trace.hpp"

namespace np {

enum class RttStage { pinger_queue, path, responder_host, responder_queue };
inline constexpr RttStage kRttStages[] = {RttStage::pinger_queue, RttStage::path,
                                          RttStage::responder_host, RttStage::responder_queue};
inline constexpr size_t kRttStageCount = std::size(kRttStages);
// "pinger_queue", "path", "responder_host", "responder_queue": evidence keys.
const char* to_string(RttStage s);

// The echoes one node sent and another answered in a phase: means over those stamped on both,
// in microseconds. A queue's stage is empty when its node's probe did not stamp the driver
// handoff (then the path holds it).
struct RttSplit {
    int echoes = 0;            // answered and stamped on both nodes
    double round_trip_us = 0;  // at the pinger's hooks: request_tx to reply_rx
    std::optional<double> stage_us[kRttStageCount];
    std::optional<double> stage(RttStage s) const { return stage_us[static_cast<size_t>(s)]; }
};

// The split of the echoes `pinger` stamped going out and `responder` stamped answering; empty
// when none was stamped on both.
std::optional<RttSplit> split_round_trip(const PhaseTrace& pinger, const PhaseTrace& responder);

// How many of a phase's echoes this node sent (stamped a request at its egress hook).
int echoes_sent(const PhaseTrace& p);

// Two nodes' phases split whichever of them pinged: the one whose probe saw more echoes go out
// (the first on a tie). Empty when no echo was stamped on both.
struct PingedSplit {
    bool first_pinged = true;
    RttSplit split;
};
std::optional<PingedSplit> split_either_way(const PhaseTrace& first, const PhaseTrace& second);

}  // namespace np
