// The flow at 1 ms scale (analysis/explanation/bursts.hpp, rules_bursts.cpp): rates over the
// bins, the runs of bins above a rate, the trace's bins, and LOSS_IN_BURSTS on the real probe's
// traces of a UDP test with bins laid in.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/explanation/bursts.hpp"
#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "common/errors.hpp"
#include "common/trace.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

// A burst of `on` bins at `burst_bytes` each, then `off` quiet bins, `times` over.
std::vector<uint64_t> bursty(int times, int on, uint64_t burst_bytes, int off) {
    std::vector<uint64_t> bins;
    for (int k = 0; k < times; ++k) {
        bins.insert(bins.end(), on, burst_bytes);
        bins.insert(bins.end(), off, 0);
    }
    return bins;
}

TEST(Bursts, RatesAreOverTheSpanThatMovedAndTheBusyRateSetsALoneBinAside) {
    // 2 quiet ms, then 100 ms at 6,250 bytes (50 Mbit/s) with two late ticks: 3,000 bytes moved
    // into the next bin each time.
    std::vector<uint64_t> bins = {0, 0};
    bins.insert(bins.end(), 100, 6250);
    for (const size_t late : {2 + 20, 2 + 70}) {
        bins[late] -= 3000;
        bins[late + 1] += 3000;
    }
    bins.push_back(0);
    const auto r = bin_rates(bins, 1);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->span_ms, 100);
    EXPECT_DOUBLE_EQ(r->mean_bps, 50e6);
    EXPECT_DOUBLE_EQ(r->peak_bps, 9250 * 8e3);  // a late tick's bin: 74 Mbit/s
    EXPECT_DOUBLE_EQ(r->busy_bps, 50e6);        // neighbours together hold it
    const auto one = bin_rates({0, 1250, 0}, 1);
    ASSERT_TRUE(one);
    EXPECT_DOUBLE_EQ(one->busy_bps, 10e6);
    EXPECT_FALSE(bin_rates({0, 0, 0}, 1));
    EXPECT_FALSE(bin_rates({}, 1));
}

TEST(Bursts, RunsAboveARateAreCountedAndTheLargestKept) {
    std::vector<uint64_t> bins = bursty(3, 2, 150000, 30);
    bins[0] = 100000;  // the first burst smaller
    const Bursts b = bursts_above(bins, 1, 60e6);
    EXPECT_EQ(b.bins_above, 6);
    EXPECT_EQ(b.largest_bytes, 300000u);
    EXPECT_EQ(b.largest_ms, 2);
    EXPECT_EQ(bursts_above(bins, 1, 2e9).bins_above, 0);
}

// The longest run of empty bins inside the span that moved: the quiet before the first and after
// the last are no pause.
TEST(Bursts, TheLongestPauseIsBetweenTheFirstBinThatMovedAndTheLast) {
    const std::vector<uint64_t> bins = {0, 0, 0, 0, 5, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 0, 0};
    const Pause p = longest_pause(bins, 1);
    EXPECT_EQ(p.at_ms, 8);
    EXPECT_EQ(p.ms, 3);
    EXPECT_EQ(longest_pause(bins, 2).ms, 6);
    EXPECT_EQ(longest_pause({0, 4, 4, 0}, 1).ms, 0);
    EXPECT_EQ(longest_pause({0, 0}, 1).ms, 0);
    EXPECT_EQ(longest_pause({}, 1).ms, 0);
}

// The bins survive the trace's JSON, and a hostile set names its field.
TEST(Bursts, BinsRoundTripThroughTheTraceAndBadOnesNameTheirField) {
    Trace t = parse_trace_text(testing::fixture("probe/udp-overload-client.json"));
    ASSERT_FALSE(t.phases.empty());
    t.phases[0].bins = PhaseBins{1, {10, 0, 30}, {0, 5, 0}};
    const auto doc = to_json(t);
    EXPECT_EQ(to_json(parse_trace(doc)), doc);
    EXPECT_EQ(parse_trace(doc).phases[0].bins->tx_wire_bytes[2], 30u);
    auto older = doc;
    older["phases"][0].erase("bins");
    EXPECT_FALSE(parse_trace(older).phases[0].bins);
    const auto field = [&](auto change) {
        auto bad = doc;
        change(bad["phases"][0]["bins"]);
        return testing::trace_error_field(bad);
    };
    EXPECT_EQ(field([](auto& b) { b["bin_ms"] = 10; }), "phases[0].bins.bin_ms");
    EXPECT_EQ(field([](auto& b) { b["rx_wire_bytes"].push_back(1); }),
              "phases[0].bins.rx_wire_bytes");
    EXPECT_EQ(field([](auto& b) { b["tx_wire_bytes"][1] = -1; }),
              "phases[0].bins.tx_wire_bytes[1]");
    EXPECT_EQ(field([](auto& b) { b["tx_wire_bytes"] = std::vector<int>(16385, 0); }),
              "phases[0].bins.tx_wire_bytes");
}

// ------------------------------------------------------------------ the finding

// The real probe's traces of a UDP test (tests/fixtures/probe: 10 GbE veth, the receiving
// socket overflowed) with the ledger's loss moved onto the wire — the receiver's socket drops
// taken out — and bins laid in: the sender's and the receiver's.
ExplainInput with_bins(std::vector<uint64_t> sent, std::vector<uint64_t> arrived) {
    ExplainInput in = testing::udp_overload_input();
    for (auto& p : in.traces[0].phases)
        if (p.name == "udp") p.bins = PhaseBins{1, sent, std::vector<uint64_t>(sent.size(), 0)};
    for (auto& p : in.traces[1].phases) {
        if (p.name != "udp") continue;
        p.bins = PhaseBins{1, std::vector<uint64_t>(arrived.size(), 0), arrived};
        // What the socket dropped never arrived: the ledger then finds it lost between the
        // NICs.
        uint64_t socket = 0;
        for (const auto& d : p.drops)
            if (d.reason == "SOCKET_RCVBUFF") socket += d.packets;
        std::erase_if(p.drops, [](const auto& d) { return d.reason == "SOCKET_RCVBUFF"; });
        auto& udp = p.rx.by_flow.at("iperf_udp");
        udp.packets -= socket;
        udp.wire_packets -= socket;
    }
    return in;
}

TEST(Bursts, LossBetweenTheNicsWithinWhatBurstsBroughtAboveThePathIsSaidWithHowToTell) {
    // 500 bursts of 150 kB in a ms every 40 ms (30.06 Mbit/s over the 19,961 ms from the first
    // to the last), arrivals at 50 Mbit/s: the bursts bring 47,474 frames (of the fixture's
    // 1,514 bytes) more than the path carries at once, more than the 42,063 lost.
    const auto e = explain(with_bins(bursty(500, 1, 150000, 39), bursty(500, 10, 6250, 30)));
    ASSERT_NE(testing::find_finding(e, "LOSS_ON_WIRE"), nullptr);
    const Finding* f = testing::find_finding(e, "LOSS_IN_BURSTS");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::warn);
    EXPECT_NE(f->title.find("the mean of 30.06 Mbit/s fits it"), std::string::npos) << f->title;
    EXPECT_NE(f->title.find("up to 1200.00 Mbit/s"), std::string::npos) << f->title;
    EXPECT_NE(f->detail.find("ran at 50.00 Mbit/s while it arrived"), std::string::npos)
        << f->detail;
    EXPECT_NE(f->detail.find("a hop that dropped at random as well would look the same"),
              std::string::npos)
        << f->detail;
    EXPECT_NE(f->next_step.find("loss that stays is not the bursts'"), std::string::npos)
        << f->next_step;
    // Fifty such bursts bring only 4,747 frames above the path: 42,063 lost are not theirs.
    EXPECT_EQ(testing::find_finding(
                  explain(with_bins(bursty(50, 1, 150000, 39), bursty(50, 10, 6250, 30))),
                  "LOSS_IN_BURSTS"),
              nullptr);
}

TEST(Bursts, ASmoothSenderOrAMeanThatDoesNotFitIsNotTheBursts) {
    // The sender as smooth as what arrived.
    EXPECT_EQ(testing::find_finding(explain(with_bins(std::vector<uint64_t>(2000, 3750),
                                                      std::vector<uint64_t>(2000, 3750))),
                                    "LOSS_IN_BURSTS"),
              nullptr);
    // Smooth, but a late tick now and then doubles a single bin: a lone bin is no burst (a
    // random loss on a hop and a link that flapped were taken for bursts so).
    std::vector<uint64_t> late(2000, 3750);
    for (size_t i = 50; i + 1 < late.size(); i += 100) {
        late[i] = 0;
        late[i + 1] = 7500;
    }
    EXPECT_EQ(testing::find_finding(explain(with_bins(late, std::vector<uint64_t>(2000, 3750))),
                                    "LOSS_IN_BURSTS"),
              nullptr);
    const auto smooth = bin_rates(late, 1);  // read as the path's rate is: no burst at all
    ASSERT_TRUE(smooth);
    EXPECT_DOUBLE_EQ(smooth->peak_bps, 60e6);
    EXPECT_DOUBLE_EQ(smooth->busy_bps, 30e6);
    // Bursty, but its mean (48 Mbit/s) needs nearly all the 50 the path carried.
    EXPECT_EQ(testing::find_finding(
                  explain(with_bins(bursty(50, 16, 150000, 24), bursty(50, 40, 6250, 0))),
                  "LOSS_IN_BURSTS"),
              nullptr);
    // Without bins on the receiver nothing says what the path carried.
    auto in = with_bins(bursty(50, 1, 150000, 39), {});
    for (auto& p : in.traces[1].phases) p.bins.reset();
    EXPECT_EQ(testing::find_finding(explain(in), "LOSS_IN_BURSTS"), nullptr);
}

}  // namespace
}  // namespace np
