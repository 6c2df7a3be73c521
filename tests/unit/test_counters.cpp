// The tool's own counters when they cannot be right: explained with the counter, the cause, the
// true figure and the fix (analysis/explanation/rules_counters.cpp), never refused; reordering is
// not loss.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::codes_of;
using testing::evidence;
using testing::find_finding;
using testing::fixture;

Explanation explain_text(const std::string& text, double link_bps) {
    ExplainInput in;
    in.link_bps = link_bps;
    in.measurements = parse_measurements(text, "c.txt");
    return explain(in);
}

// A real run (tests/fixtures/COUNTERS.generated.md): -O 1 with UDP, and the receiver's lost/total
// disagree with its own bytes; the true figure is its total less what its bytes hold.
TEST(Counters, OmitWithUdpIsNamedAndTheTrueLossComesFromTheReceiversBytes) {
    const std::string json = fixture("iperf3/udp-omit-counts-wrong.json");
    const auto m = parse_measurements(json, "o.json");
    const auto& t = m.throughput.at(0);
    ASSERT_TRUE(t.received_bytes && t.datagrams_total && t.datagrams_lost);
    const double got = std::round(*t.received_bytes / 1448);
    ASSERT_GT(std::fabs(double(*t.datagrams_total - *t.datagrams_lost) - got), 100)
        << "the fixture no longer shows the -O disagreement";

    const auto e = explain_text(json, 10e9);
    const Finding* f = find_finding(e, "LOSS_COUNTERS_WRONG");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_NE(f->detail.find("-O 1"), std::string::npos) << f->detail;
    EXPECT_EQ(evidence(*f, "omit_s"), 1);
    EXPECT_EQ(evidence(*f, "true_lost"), double(*t.datagrams_total) - got);
    EXPECT_NE(f->next_step.find("without -O"), std::string::npos) << f->next_step;
}

// The same receiver's counts and bytes agree to the datagram without -O: no finding.
TEST(Counters, RealRunsWithoutOmitAgreeWithTheirBytes) {
    for (const char* file : {"iperf3/udp-100m-b90M.json", "iperf3/udp-100m-b200M.json",
                             "iperf3/udp-100m-b90M-reverse.json", "run-100m/np-explain_udp.json",
                             "handwritten/iperf3-3.12-udp-1g-b1G-949.json",
                             "handwritten/iperf3-3.9-udp-no-sum-sent.json"}) {
        const auto e = explain_text(fixture(file), 100e6);
        EXPECT_EQ(find_finding(e, "LOSS_COUNTERS_WRONG"), nullptr) << file << ": " << codes_of(e);
    }
}

// Past 2^32 datagrams without --udp-counters-64bit: "-792929/24122" as reported to iperf3, the
// wraps counted, the true loss from the receiver's bytes exactly.
TEST(Counters, AWrappedCounterIsNamedWithItsWrapsAndTheTrueLoss) {
    const auto e = explain_text(fixture("handwritten/iperf3-3.12-udp-32bit-wrap.json"), 10e9);
    const Finding* f = find_finding(e, "LOSS_COUNTERS_WRONG");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_NE(f->title.find("a negative lost count (-792,929)"), std::string::npos) << f->title;
    EXPECT_NE(f->detail.find("1 full wrap of the 32-bit counter"), std::string::npos) << f->detail;
    EXPECT_EQ(evidence(*f, "true_lost"), 2200000);
    EXPECT_EQ(evidence(*f, "true_loss_pct"), 0.05);
    EXPECT_NE(f->next_step.find("--udp-counters-64bit"), std::string::npos);
    EXPECT_EQ(find_finding(e, "UDP_LOSS"), nullptr) << "no loss is read from impossible counts";
    EXPECT_EQ(find_finding(e, "PRINTED_LOSS_WRONG"), nullptr);
}

// Text outputs: more lost than the total, and a negative count, explained instead of refused.
TEST(Counters, ImpossibleTextCountsAreExplainedNotRefused) {
    const auto iperf2 = explain_text(
        "Server listening on UDP port 5001\n"
        "[  1] local 198.18.10.2 port 5001 connected with 198.18.10.1 port 46278\n"
        "[  1] 0.0-10.0 sec  1 MBytes  1 Mbits/sec  0.1 ms 9/5 (180%)\n",
        1e9);
    const Finding* f = find_finding(iperf2, "LOSS_COUNTERS_WRONG");
    ASSERT_NE(f, nullptr) << codes_of(iperf2);
    EXPECT_NE(f->title.find("more lost (9) than the total (5)"), std::string::npos) << f->title;
    EXPECT_NE(f->detail.find("does not hold what the true loss is"), std::string::npos);
    EXPECT_NE(f->detail.find("not how many datagrams were sent"), std::string::npos)
        << "a server's log has no sender's count: the wrap is not ruled out: " << f->detail;
    EXPECT_EQ(find_finding(iperf2, "UDP_LOSS"), nullptr);

    const auto iperf3 = explain_text(
        "Connecting to host h, port 5201\n"
        "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n"
        "[  5]   0.00-10.00  sec  1.16 GBytes   999 Mbits/sec  0.000 ms  0/862000 (0%)  sender\n"
        "[  5]   0.00-10.00  sec  1.16 GBytes   998 Mbits/sec  0.004 ms  -792929/24122 (-3287%)  "
        "receiver\n",
        1e9);
    const Finding* g = find_finding(iperf3, "LOSS_COUNTERS_WRONG");
    ASSERT_NE(g, nullptr) << codes_of(iperf3);
    EXPECT_NE(g->title.find("negative lost count"), std::string::npos);
    EXPECT_NE(g->detail.find("No known cause shows"), std::string::npos) << g->detail;
    EXPECT_NE(g->detail.find("862,000 datagrams sent are too few to wrap"), std::string::npos)
        << "the sender's own count rules the wrap out: " << g->detail;

    // The same, typed with -O: the command shows the cause.
    const auto omitted = explain_text(
        "$ iperf3 -c h -u -b 1G -O 1\n"
        "Connecting to host h, port 5201\n"
        "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n"
        "[  5]   0.00-10.00  sec  1.16 GBytes   999 Mbits/sec  0.000 ms  0/862000 (0%)  sender\n"
        "[  5]   0.00-10.00  sec  1.16 GBytes   998 Mbits/sec  0.004 ms  -3220/816000 (-0.39%)  "
        "receiver\n",
        1e9);
    const Finding* o = find_finding(omitted, "LOSS_COUNTERS_WRONG");
    ASSERT_NE(o, nullptr) << codes_of(omitted);
    EXPECT_NE(o->detail.find("ran with -O 1"), std::string::npos) << o->detail;
}

TEST(Counters, ACounterStuckAtItsLimitIsNotACount) {
    const auto e = explain_text(
        "Server listening on UDP port 5001\n"
        "[  1] local 198.18.10.2 port 5001 connected with 198.18.10.1 port 46278\n"
        "[  1] 0.0-10.0 sec  1 MBytes  1 Mbits/sec  0.1 ms 0/2147483647 (0%)\n",
        1e9);
    const Finding* f = find_finding(e, "LOSS_COUNTERS_WRONG");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_NE(f->title.find("largest signed 32-bit number"), std::string::npos) << f->title;
}

// iperf3 --debug on the receiver prints each late datagram: counted as reordered, not lost.
TEST(Counters, DebugOutOfOrderLinesAreReordering) {
    const auto e = explain_text(
        "Server listening on 5201\n"
        "Accepted connection from 198.18.10.1, port 43927\n"
        "[  5] local 198.18.10.2 port 5201 connected to 198.18.10.1 port 43928\n"
        "OUT OF ORDER - received packet 1203 but expected sequence 1209 on stream 5\n"
        "OUT OF ORDER - received packet 2871 but expected sequence 2877 on stream 5\n"
        "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n"
        "[  5]   0.00-10.00  sec  59.6 MBytes  50.0 Mbits/sec  0.010 ms  0/43167 (0%)  "
        "receiver\n",
        100e6);
    const Finding* f = find_finding(e, "REORDERED_NOT_LOST");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_EQ(evidence(*f, "out_of_order"), 2);
}

// iperf2's client never got the server's report back: the loss is unknown, never said to be 0.
TEST(Counters, AMissingServerReportLeavesTheLossUnknown) {
    const std::string text = fixture("handwritten/iperf2-2.1-udp-no-server-report.client.txt");
    const auto t = parse_measurements(text, "c.txt").throughput.at(0);
    EXPECT_TRUE(t.receiver_report_missing);
    EXPECT_FALSE(t.datagrams_lost.has_value());
    const auto e = explain_text(text, 1e9);
    const Finding* f = find_finding(e, "OFFERED_ABOVE_CEILING");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_NE(f->detail.find("how much, this output does not say"), std::string::npos) << f->detail;
    EXPECT_EQ(f->detail.find("0.00 %"), std::string::npos) << f->detail;
}

// Both ends' output of one test, the loss they print disagreeing: the server's is the receiver's.
TEST(Counters, AClientAndServerThatDisagreeAreNamedAndTheServersCountTaken) {
    ExplainInput in;
    in.link_bps = 100e6;
    in.measurements = parse_measurements(fixture("iperf2/udp-100m-b90M.client.txt"), "c.txt");
    std::string server = fixture("iperf2/udp-100m-b90M.server.txt");
    const std::string agree = "0.001 ms 0/80252 (0%)";
    const size_t at = server.rfind(agree);
    ASSERT_NE(at, std::string::npos);
    in.measurements.append(parse_measurements(server, "s.txt"));
    EXPECT_EQ(find_finding(explain(in), "LOSS_COUNTERS_WRONG"), nullptr) << "they agree";

    server.replace(at, agree.size(), "0.001 ms 21668/80252 (27%)");
    in.measurements = parse_measurements(fixture("iperf2/udp-100m-b90M.client.txt"), "c.txt");
    in.measurements.append(parse_measurements(server, "s.txt"));
    const auto e = explain(in);
    const Finding* f = find_finding(e, "LOSS_COUNTERS_WRONG");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_NE(f->title.find("says 0.00 %"), std::string::npos) << f->title;
    EXPECT_NE(f->title.find("the server's own 27.00 %"), std::string::npos) << f->title;
    EXPECT_NE(f->next_step.find("server's figure"), std::string::npos);
}

TEST(Counters, ReorderedDatagramsAreNotLoss) {
    const auto e = explain_text(
        "Connecting to host h, port 5201\n"
        "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n"
        "[  5]   0.00-10.00  sec   114 MBytes  95.5 Mbits/sec  0.000 ms  0/82401 (0%)  sender\n"
        "[  5]   0.00-10.01  sec   114 MBytes  95.4 Mbits/sec  0.093 ms  0/82400 (0%)  receiver\n"
        "[  5] 0.00-10.01 sec  812 datagrams received out-of-order\n",
        100e6);
    const Finding* f = find_finding(e, "REORDERED_NOT_LOST");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_NE(f->title.find("812 datagrams arrived out of order"), std::string::npos) << f->title;
    EXPECT_EQ(find_finding(e, "UDP_LOSS"), nullptr);
}

// iperf3's JSON holds out_of_order only in end.streams[].udp, and only the receiving end's own
// output has the receiver's count: a client of -R (its blocks say "sender": false), summed over
// the streams.
TEST(Counters, JsonOutOfOrderIsReadFromTheReceivingStreamsUdpBlocks) {
    std::string json = fixture("iperf3/udp-100m-b90M-reverse.json");
    const std::string key = "\"out_of_order\":\t0";
    const size_t at = json.find(key);
    ASSERT_NE(at, std::string::npos);
    json.replace(at, key.size(), "\"out_of_order\":\t23");
    const auto e = explain_text(json, 100e6);
    const Finding* f = find_finding(e, "REORDERED_NOT_LOST");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_EQ(evidence(*f, "out_of_order"), 23);
}

// A client that sent prints its own block's out_of_order, always 0: the receiver's count is not
// known from it, and is not said to be 0.
TEST(Counters, ASendingClientsOwnOutOfOrderIsNotTheReceivers) {
    std::string json = fixture("iperf3/udp-100m-b90M.json");
    ASSERT_NE(json.find("\"sender\":\ttrue"), std::string::npos);
    const std::string key = "\"out_of_order\":\t0";
    const size_t at = json.find(key);
    ASSERT_NE(at, std::string::npos);
    json.replace(at, key.size(), "\"out_of_order\":\t23");  // impossible, and left out
    const auto m = parse_measurements(json, "c.json");
    ASSERT_EQ(m.throughput.size(), 1u);
    EXPECT_FALSE(m.throughput[0].out_of_order.has_value());
}

// Real runs (tests/fixtures/COUNTERS.generated.md): one in fifty datagrams overtook the queue the
// others waited in, none was lost. The client sent, so only the server's own output, carried in
// the client's by --get-server-output, holds the count: as text from a server without -J, as
// JSON from one with it.
TEST(Counters, TheServersOutputCarriesTheReorderingTheClientCannotSee) {
    for (const std::string name : {"udp-reordered", "udp-reordered-server-json"}) {
        SCOPED_TRACE(name);
        const std::string text = fixture("iperf3/" + name + ".json");
        const auto doc = nlohmann::json::parse(text);
        int64_t truth = 0;
        if (doc.contains("server_output_json")) {
            for (const auto& s : doc["server_output_json"]["end"]["streams"])
                truth += s["udp"]["out_of_order"].get<int64_t>();
        } else {
            const std::string server = doc["server_output_text"];
            const std::string tail = " datagrams received out-of-order";
            const size_t end = server.find(tail);
            ASSERT_NE(end, std::string::npos);
            const size_t begin = server.rfind(' ', end - 1) + 1;
            truth = std::stoll(server.substr(begin, end - begin));
        }
        ASSERT_GT(truth, 0);
        const auto e = explain_text(text, 100e6);
        const Finding* f = find_finding(e, "REORDERED_NOT_LOST");
        ASSERT_NE(f, nullptr) << codes_of(e);
        EXPECT_EQ(evidence(*f, "out_of_order"), truth);
        EXPECT_EQ(evidence(*f, "lost_datagrams"), 0);
        EXPECT_EQ(find_finding(e, "UDP_LOSS"), nullptr) << codes_of(e);
    }
}

TEST(Counters, TcpReorderingOfIperf320IsNamed) {
    ThroughputTest t;
    t.label = "iperf3 TCP";
    t.transport = Transport::tcp;
    t.received_bps = t.sent_bps = 90e6;
    t.duration_s = 10;
    t.reorder_events = 37;
    t.retransmits = 12;
    const auto e = testing::explain_tests({t}, {}, 100e6);
    const Finding* f = find_finding(e, "REORDERED_NOT_LOST");
    ASSERT_NE(f, nullptr) << codes_of(e);
    EXPECT_NE(f->title.find("reordered 37 times"), std::string::npos) << f->title;
}

}  // namespace
}  // namespace np
