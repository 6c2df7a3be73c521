// Loss that came with the test's bursts (LOSS_IN_BURSTS): the flow at 1 ms scale on both nodes
// (PhaseBins, bursts.hpp). Where what left the sender's NIC ran, in some milliseconds, far above
// the most that ever arrived at the receiver's in one, while its mean fits that rate, the path
// between them drains at about that rate and dropped what a burst brought beyond its queue: the
// loss the ledger places between the NICs is the bursts', not the mean's.
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
    if (!v.ledger || !v.traces.sender || !v.traces.receiver) return;
    if (v.ledger->lost_in(Stage::wire) == 0 || !ledger_shows_loss(*v.ledger)) return;
    const auto& sb = v.traces.sender->phase.bins;
    const auto& rb = v.traces.receiver->phase.bins;
    if (!sb || !rb) return;
    const auto sent = bin_rates(sb->tx_wire_bytes, sb->bin_ms);
    const auto arrived = bin_rates(rb->rx_wire_bytes, rb->bin_ms);
    if (!sent || !arrived) return;
    // The rate the path carried while the flow arrived, measured where it ends: what it drains
    // at when a burst fills its queue.
    const double path_bps = arrived->busy_bps;
    // The sender's bursts read as the path's rate is: a single bin can hold twice its share when
    // a tick fires late, so a smooth sender's lone busiest bin is no burst (a random loss on a
    // hop, a link that flapped, at 50 Mbit/s on a 100 Mbit/s link, were taken for bursts so).
    if (sent->mean_bps > path_bps * kMeanFits || sent->busy_bps < path_bps * kBurstFactor) return;
    const Bursts b = bursts_above(sb->tx_wire_bytes, sb->bin_ms, path_bps);
    const std::string& sender = v.traces.sender->trace->node;
    const std::string& receiver = v.traces.receiver->trace->node;
    Finding f = make_finding("LOSS_IN_BURSTS", v.test.label);
    f.title =
        fmt::format("Lost in bursts: the mean of {} fits the path, but {} sent at up to {} in 1 ms",
                    format_rate(sent->mean_bps), sender, format_rate(sent->peak_bps));
    f.detail = fmt::format(
        "In 1 ms bins, what left {}'s NIC ran above {} in {} of the test's {} ms, up to {} (the "
        "largest burst {} bytes in {} ms), while what arrived at {}'s ran at {} while it "
        "arrived (the 90th percentile of 2 ms windows): the path between them drains at about that "
        "rate, and the mean on the wire, "
        "{}, fits it. What a burst brought beyond the queue on the path was lost there — the "
        "ledger places {} — so the loss is the bursts', not the offered rate's.",
        sender, format_rate(path_bps), b.bins_above, sent->span_ms, format_rate(sent->peak_bps),
        format_count(double(b.largest_bytes)), b.largest_ms, receiver, format_rate(path_bps),
        format_rate(sent->mean_bps), describe_loss(*v.ledger));
    f.evidence = {{"mean_wire_mbps", rounded(sent->mean_bps / 1e6, 2)},
                  {"peak_1ms_wire_mbps", rounded(sent->peak_bps / 1e6, 2)},
                  {"arrived_busy_wire_mbps", rounded(path_bps / 1e6, 2)},
                  {"bins_above", b.bins_above},
                  {"largest_burst_bytes", b.largest_bytes},
                  {"lost_on_wire", v.ledger->lost_in(Stage::wire)}};
    f.next_step = fmt::format(
        "Send without bursts, or shape them to the path: iperf3 -b without a burst count "
        "(-b RATE/N sends N packets back to back), a shorter --pacing-timer, or the sender's "
        "qdisc paced to {} (tbf, fq maxrate); else give the hop a queue that holds a burst "
        "({} bytes).",
        format_rate(path_bps), format_count(double(b.largest_bytes)));
    out.push_back(std::move(f));
}

}  // namespace np::rules
