// The engine with the probe's traces of both data NICs, on a real run (tests/fixtures/run-100m).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "common/trace.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::find_finding;

// A file of the real `run --local` in tests/fixtures/run-100m.
std::string run_100m_file(const std::string& name) {
    return testing::fixture("run-100m/" + name);
}

ExplainInput run_100m(bool with_traces) {
    ExplainInput in;
    in.link_bps = 100e6;
    in.measurements.append(
        parse_measurements(run_100m_file("np-explain_tcp.json"), "np-explain_tcp.json"));
    in.measurements.append(
        parse_measurements(run_100m_file("np-explain_udp.json"), "np-explain_udp.json"));
    if (with_traces) {
        in.traces.push_back(parse_trace_text(run_100m_file("np-explain_trace_node1-1.json")));
        in.traces.push_back(parse_trace_text(run_100m_file("np-explain_trace_node1-2.json")));
    }
    return in;
}

using testing::evidence;

// The run's sender wrote 35,607,768 bytes (94.93 Mbit/s), its receiver counted 34,507,288
// (91.86): the rest was still queued when the 3 s test was cut. As if the sender had also
// fallen short, the same run is below the ceiling for a reason the figures must find.
ExplainInput sender_short(ExplainInput in) {
    auto& t = in.measurements.throughput.at(0);
    t.sent_bps = t.received_bps;
    t.sent_bytes = t.received_bytes;
    return in;
}

TEST(ExplainWithTraces, ASenderAtTheCeilingWithNothingLostIsLineRateBound) {
    for (const bool traced : {false, true}) {
        const auto e = explain(run_100m(traced));
        const Finding* f = find_finding(e, "LINE_RATE_BOUND");
        ASSERT_NE(f, nullptr) << traced;
        EXPECT_EQ(f->test, "iperf3 TCP");
        EXPECT_NE(f->detail.find("1,100,480 bytes (94 ms at the ceiling) were still queued or in "
                                 "flight when the 3 s test was cut"),
                  std::string::npos)
            << f->detail;
        EXPECT_EQ(e.verdicts[0].verdict, "line-rate bound");
        for (const char* wrong : {"HOST_LIMITED", "BELOW_CEILING", "BELOW_CEILING_NEEDS_TRACE"})
            EXPECT_EQ(find_finding(e, wrong), nullptr) << wrong;
    }
}

TEST(ExplainWithTraces, WithoutTracesTcpBelowTheCeilingNeedsATrace) {
    const auto e = explain(sender_short(run_100m(false)));
    ASSERT_NE(find_finding(e, "BELOW_CEILING_NEEDS_TRACE"), nullptr);
    EXPECT_EQ(e.verdicts[0].verdict, "below the ceiling (needs a trace)");
}

// Nothing lost, no full link, no CPU figure at a core: no stage is named, and the finding says
// what was ruled out with the counts that rule it out.
TEST(ExplainWithTracesOfACleanPath, SaysTheLimitWasNotLocatedWithTheLedgersCounts) {
    const auto e = explain(sender_short(run_100m(true)));
    EXPECT_EQ(find_finding(e, "BELOW_CEILING_NEEDS_TRACE"), nullptr);
    EXPECT_EQ(find_finding(e, "HOST_LIMITED"), nullptr);
    const Finding* f = find_finding(e, "LIMIT_NOT_LOCATED");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->test, "iperf3 TCP");
    // node1-2 sent 23,855 segments of the flow and node1-1 received as many, none dropped.
    EXPECT_NE(f->detail.find("23,855 segments left node1-2's NIC and 23,855 arrived"),
              std::string::npos)
        << f->detail;
    EXPECT_NE(f->detail.find("Ruled out: loss (the ledger above); the link: node1-2's enp0s25 "
                             "sent"),
              std::string::npos)
        << f->detail;
    EXPECT_EQ(e.verdicts[0].verdict, "limit not located");
    EXPECT_EQ(find_finding(e, "WRONG_INTERFACE"), nullptr);  // the traffic did cross enp0s25
    // TCP_FLAGS/NO_SOCKET of the closing connections cost the TCP test nothing: not blamed.
    for (const auto& g : e.findings) {
        if (g.test == "iperf3 TCP") {
            EXPECT_EQ(g.code.rfind("LOSS_", 0), std::string::npos) << g.code;
        }
    }
}

TEST(ExplainWithTraces, LocatesTheUdpLossAtTheReceivingSocket) {
    const auto e = explain(run_100m(true));
    const Finding* f = find_finding(e, "LOSS_AT_RECEIVER_SOCKET");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->test, "iperf3 UDP");
    // node1-1's kernel dropped as many datagrams at the socket as iperf3 counted lost.
    EXPECT_EQ(evidence(*f, "lost_datagrams"), 102);
    EXPECT_EQ(evidence(*f, "tool_lost_datagrams"), 102);
    EXPECT_EQ(evidence(*f, "reason.SOCKET_RCVBUFF"), 102);
    // ... and that is the only place the loss is put.
    for (const char* other : {"LOSS_ON_WIRE", "LOSS_AT_SENDER_QDISC", "LOSS_AT_RECEIVER_NIC"})
        EXPECT_EQ(find_finding(e, other), nullptr) << other;
    ASSERT_EQ(e.ledgers.size(), 2u);
    EXPECT_EQ(e.ledgers[1].lost(), 102u);
}

// UDP datagrams of 8000 bytes at MTU 1500 leave in 6 fragments each; only the first carries
// the ports the hooks match the flow by (tests/fixtures/run-fragmented). The ledger counts
// datagrams at every point: nothing lost, and the flow crossed the data NIC.
TEST(ExplainWithTraces, FragmentedDatagramsAreCountedAsDatagramsNotLostOnTheWire) {
    ExplainInput in;
    in.link_bps = 100e6;
    const std::string dir = "run-fragmented/";
    in.measurements.append(
        parse_measurements(testing::fixture(dir + "np-explain_udp.json"), "np-explain_udp.json"));
    for (const char* node : {"node1-1", "node1-2"})
        in.traces.push_back(parse_trace_text(
            testing::fixture(dir + "np-explain_trace_" + std::string(node) + ".json")));
    const auto e = explain(in);
    ASSERT_EQ(e.ledgers.size(), 1u);
    const Ledger& l = e.ledgers[0];
    ASSERT_EQ(l.points.size(), 5u);
    EXPECT_EQ(l.points[1].count, 1563u);  // egress hook: first fragments
    // Left the NIC: 9,373 frames in sixes, 1,562, raised to what arrived.
    EXPECT_EQ(l.points[2].count, 1563u);
    EXPECT_EQ(l.points[3].count, 1563u);
    EXPECT_EQ(l.lost(), 0u);
    EXPECT_EQ(l.unattributed(), 0u);
    for (const char* wrong : {"WRONG_INTERFACE", "LOSS_ON_WIRE", "UDP_LOSS", "LOSS_UNATTRIBUTED"})
        EXPECT_EQ(find_finding(e, wrong), nullptr) << wrong;
    EXPECT_NE(find_finding(e, "OFFERED_RATE_REACHED"), nullptr);
}

}  // namespace
}  // namespace np
