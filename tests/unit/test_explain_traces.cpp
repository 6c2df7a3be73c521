// The engine with the probe's traces of both data NICs, on a real run (tests/fixtures/run-100m).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analysis/explain.hpp"
#include "analysis/inputs.hpp"
#include "analysis/trace.hpp"

namespace np {
namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(NP_FIXTURES_DIR) + "/run-100m/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

ExplainInput run_100m(bool with_traces) {
    ExplainInput in;
    in.link_bps = 100e6;
    in.measurements.append(
        parse_measurements(fixture("np-explain_tcp.json"), "np-explain_tcp.json"));
    in.measurements.append(
        parse_measurements(fixture("np-explain_udp.json"), "np-explain_udp.json"));
    if (with_traces) {
        in.traces.push_back(parse_trace_text(fixture("np-explain_trace_node1-1.json")));
        in.traces.push_back(parse_trace_text(fixture("np-explain_trace_node1-2.json")));
    }
    return in;
}

const Finding* find(const Explanation& e, const std::string& code) {
    for (const auto& f : e.findings)
        if (f.code == code) return &f;
    return nullptr;
}

std::string evidence(const Finding& f, const std::string& key) {
    for (const auto& [k, v] : f.evidence)
        if (k == key) return v;
    return {};
}

TEST(ExplainWithTraces, WithoutTracesTcpBelowTheCeilingNeedsATrace) {
    const auto e = explain(run_100m(false));
    ASSERT_NE(find(e, "BELOW_CEILING_NEEDS_TRACE"), nullptr);
    EXPECT_EQ(e.verdicts[0].verdict, "below the ceiling (needs a trace)");
}

TEST(ExplainWithTracesOfACleanPath, SaysTheLimitIsNotOnThePath) {
    const auto e = explain(run_100m(true));
    EXPECT_EQ(find(e, "BELOW_CEILING_NEEDS_TRACE"), nullptr);
    const Finding* f = find(e, "BELOW_CEILING_NO_WIRE_CAUSE");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(evidence(*f, "test"), "iperf3 TCP");
    EXPECT_EQ(e.verdicts[0].verdict, "below the ceiling (no cause on the path)");
    EXPECT_EQ(find(e, "WRONG_INTERFACE"), nullptr);  // the traffic did cross enp0s25
}

TEST(ExplainWithTraces, LocatesTheUdpLossAtTheReceivingSocket) {
    const auto e = explain(run_100m(true));
    const Finding* f = find(e, "LOSS_AT_RECEIVER_SOCKET");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(evidence(*f, "test"), "iperf3 UDP");
    // node1-1's kernel dropped as many datagrams at the socket as iperf3 counted lost.
    EXPECT_EQ(evidence(*f, "receiver_socket_drops"), "102");
    EXPECT_EQ(evidence(*f, "tool_lost_datagrams"), "102");
}

}  // namespace
}  // namespace np
