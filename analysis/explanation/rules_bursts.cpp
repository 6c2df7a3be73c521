// UDP lost between the NICs beside bursts the path could not carry at once (LOSS_IN_BURSTS):
// the flow at 1 ms scale on both nodes (PhaseBins, bursts.hpp). What is measured: the ledger's
// loss between the NICs; the sender's NIC running, in its busy milliseconds, 1.5 times or more
// the rate the flow arrived at; its mean fitting that rate; and the loss no more than the bursts
// brought above it. What is not: which packets the hop dropped. A hop that also drops at random
// looks the same, so the finding says so and how to tell (the same mean without bursts).
#include <fmt/format.h>

#include "analysis/explanation/bursts.hpp"
#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

// The mean fits the path at or under this share of its rate: a test whose mean needs the
// path's whole rate loses to its mean, bursts or not.
constexpr double kMeanFits = 0.9;
// Bursts run at least this many times the rate the path carried, both read the same way
// (BinRates::busy_bps).
constexpr double kBurstFactor = 1.5;

}  // namespace

void loss_in_bursts(const TestEvidence& v, std::vector<Finding>& out) {
    // UDP's offered rate is the application's; TCP's loss at a slower hop is its own probing for
    // the rate, which its window sets, not bursts an application chose.
    if (!is_udp(v.test) || !v.ledger || !v.traces.sender || !v.traces.receiver) return;
    const uint64_t lost = v.ledger->lost_in(Stage::wire);
    if (lost == 0 || !ledger_shows_loss(*v.ledger)) return;
    const PhaseTrace& sp = v.traces.sender->phase;
    const auto& sb = sp.bins;
    const auto& rb = v.traces.receiver->phase.bins;
    if (!sb || !rb) return;
    const auto sent = bin_rates(sb->tx_wire_bytes, sb->bin_ms);
    const auto arrived = bin_rates(rb->rx_wire_bytes, rb->bin_ms);
    if (!sent || !arrived) return;
    // The rate the path carried while the flow arrived, measured where it ends: what it drains
    // at when a burst fills its queue.
    const double path_bps = arrived->busy_bps;
    // The sender's bursts read as the path's rate is: a single bin can hold twice its share (a
    // GSO skb handed on whole, a backlog, a late tick in older traces), so a smooth sender's lone
    // busiest bin is no burst (a random loss on a
    // hop, a link that flapped, at 50 Mbit/s on a 100 Mbit/s link, were taken for bursts so).
    if (sent->mean_bps > path_bps * kMeanFits || sent->busy_bps < path_bps * kBurstFactor) return;
    const Bursts b = bursts_above(sb->tx_wire_bytes, sb->bin_ms, path_bps);
    // What the bursts brought above the path's rate, in the flow's frames: the most a queue on
    // the path could have dropped of them. Loss beyond it is not theirs.
    const auto flow = sp.left_nic().by_flow.find("iperf_udp");
    if (flow == sp.left_nic().by_flow.end() || flow->second.wire_packets == 0) return;
    const double frame_bytes = double(flow->second.wire_bytes) / double(flow->second.wire_packets);
    const auto excess = static_cast<uint64_t>(double(b.excess_bytes) / frame_bytes);
    if (lost > excess) return;
    const std::string& sender = v.traces.sender->trace->node;
    const std::string& receiver = v.traces.receiver->trace->node;
    Finding f = make_finding("LOSS_IN_BURSTS", v.test.label);
    f.title = fmt::format(
        "Bursts above what the path carries: the mean of {} fits it, but {} sent at up to {} in "
        "1 ms",
        format_rate(sent->mean_bps), sender, format_rate(sent->peak_bps));
    f.detail = fmt::format(
        "In 1 ms bins, what left {}'s NIC ran above {} in {} of the test's {} ms, up to {} (the "
        "largest burst {} bytes in {} ms), while what arrived at {}'s ran at {} while it arrived "
        "(the 90th percentile of 2 ms windows): the path between them carries about that rate, "
        "and the mean on the wire, {}, fits it. The bursts brought {} frames more than it "
        "carries at once, and the ledger places {} — no more than that: a queue on the path "
        "shorter than a burst drops so much. Which packets the hop dropped no probe sees: a hop "
        "that dropped at random as well would look the same, and the same mean sent without "
        "bursts tells the two apart.",
        sender, format_rate(path_bps), b.bins_above, sent->span_ms, format_rate(sent->peak_bps),
        format_count(double(b.largest_bytes)), b.largest_ms, receiver, format_rate(path_bps),
        format_rate(sent->mean_bps), format_count(double(excess)), describe_loss(*v.ledger));
    f.evidence = {{"mean_wire_mbps", rounded(sent->mean_bps / 1e6, 2)},
                  {"peak_1ms_wire_mbps", rounded(sent->peak_bps / 1e6, 2)},
                  {"busy_wire_mbps", rounded(sent->busy_bps / 1e6, 2)},
                  {"arrived_busy_wire_mbps", rounded(path_bps / 1e6, 2)},
                  {"bins_above", b.bins_above},
                  {"largest_burst_bytes", b.largest_bytes},
                  {"frames_above_path", excess},
                  {"lost_on_wire", lost}};
    f.next_step = fmt::format(
        "Run the same rate without a burst count (iperf3 -b RATE, not -b RATE/N, which sends N "
        "packets back to back): loss that stays is not the bursts'. To keep the bursts from the "
        "hop: a shorter --pacing-timer, or the sender's qdisc paced to {} (tbf, fq maxrate); "
        "else a queue on the hop that holds a burst ({} bytes).",
        format_rate(path_bps), format_count(double(b.largest_bytes)));
    out.push_back(std::move(f));
}

}  // namespace np::rules
