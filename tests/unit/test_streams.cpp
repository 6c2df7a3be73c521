// Each stream of a test of several (iperf3 -P) by itself, on a real run (tests/fixtures/run-P3):
// the tool's counts per stream, each stream's ledger from the probes' per-stream counts, and
// STREAMS_UNEVEN naming the slowest stream's cause only from its own counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/explanation/explain.hpp"
#include "analysis/explanation/ledger.hpp"
#include "analysis/readers/inputs.hpp"
#include "analysis/readers/iperf3.hpp"
#include "common/trace.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::find_finding;

ExplainInput run_p3() {
    ExplainInput in;
    in.link_bps = 100e6;
    for (const char* f : {"np-explain_tcp.json", "np-explain_udp.json"})
        in.measurements.append(parse_measurements(testing::fixture(std::string("run-P3/") + f), f));
    for (const char* node : {"node1-1", "node1-2"})
        in.traces.push_back(parse_trace_text(
            testing::fixture("run-P3/np-explain_trace_" + std::string(node) + ".json")));
    return in;
}

const ThroughputTest& test_of(const ExplainInput& in, Transport t) {
    return *std::find_if(in.measurements.throughput.begin(), in.measurements.throughput.end(),
                         [&](const ThroughputTest& x) { return x.transport == t; });
}

TEST(Streams, EachTcpStreamIsReadWithItsClientPortAndCounts) {
    const auto in = run_p3();
    const ThroughputTest& t = test_of(in, Transport::tcp);
    ASSERT_EQ(t.per_stream.size(), 3u);
    const int ports[] = {56840, 56846, 56848};
    double sent = 0, received = 0;
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(t.per_stream[i].port, ports[i]);
        sent += t.per_stream[i].sent_bytes.value_or(0);
        received += t.per_stream[i].received_bytes.value_or(0);
    }
    EXPECT_EQ(sent, *t.sent_bytes);
    EXPECT_EQ(received, *t.received_bytes);
}

TEST(Streams, EachUdpStreamsTotalComesFromTheServersTextOutput) {
    const auto in = run_p3();
    const ThroughputTest& t = test_of(in, Transport::udp);
    ASSERT_EQ(t.per_stream.size(), 3u);
    int64_t sent = 0, total = 0;
    for (const auto& s : t.per_stream) {
        ASSERT_TRUE(s.datagrams_sent && s.datagrams_total && s.datagrams_lost) << s.port;
        sent += *s.datagrams_sent;
        total += *s.datagrams_total;
    }
    EXPECT_EQ(sent, *t.datagrams_sent);
    EXPECT_EQ(total, *t.datagrams_total);
}

// A server's JSON inside the client's: its start.connected names the stream by the client's port
// (its remote end), and its end.streams holds the receiver's own total for it.
TEST(Streams, TheServersJsonGivesTheReceiversCountOfEachStream) {
    const auto m = measurements_from(
        parse_iperf3(testing::fixture("iperf3/udp-reordered-server-json.json")), "");
    ASSERT_EQ(m.throughput.size(), 1u);
    ASSERT_EQ(m.throughput[0].per_stream.size(), 1u);
    const auto& s = m.throughput[0].per_stream[0];
    EXPECT_EQ(s.port, 40901);
    EXPECT_EQ(s.datagrams_total, 12946);
    EXPECT_EQ(s.datagrams_lost, 0);
}

TEST(Streams, BidirHasOneStreamPerDirectionEachWithItsOwnPort) {
    const auto m =
        measurements_from(parse_iperf3(testing::fixture("iperf3/tcp-100m-bidir.json")), "");
    ASSERT_EQ(m.throughput.size(), 2u);
    ASSERT_EQ(m.throughput[0].per_stream.size(), 1u);
    ASSERT_EQ(m.throughput[1].per_stream.size(), 1u);
    EXPECT_NE(m.throughput[0].per_stream[0].port, m.throughput[1].per_stream[0].port);
    EXPECT_EQ(*m.throughput[1].per_stream[0].received_bytes, *m.throughput[1].received_bytes);
}

// iperf3's control connection: the one TCP stream of the flow that is none of the test's, its
// segments as the sender's egress hook counted them.
uint64_t control_segments(const ExplainInput& in) {
    const ThroughputTest& t = test_of(in, Transport::tcp);
    for (const auto& trace : in.traces) {
        if (trace.role != "client") continue;
        uint64_t n = 0;
        for (const auto& s : trace.find_phase("tcp")->streams) {
            const bool data = std::any_of(t.per_stream.begin(), t.per_stream.end(),
                                          [&](const auto& d) { return d.port == s.port; });
            if (s.transport == "tcp" && !data) n += s.tx.wire_packets;
        }
        return n;
    }
    return 0;
}

// The sum of the streams' ledgers is the test's, point by point and stage by stage — for TCP
// but for iperf3's control connection, a stream of the flow that is no test's: nothing the
// per-stream counts hold is lost or counted twice.
TEST(Streams, TheStreamsLedgersSumToTheTestsPointByPoint) {
    const ExplainInput in = run_p3();
    const uint64_t control = control_segments(in);
    EXPECT_GT(control, 0u);
    const auto e = explain(in);
    ASSERT_EQ(e.ledgers.size(), 2u);
    for (const Ledger& l : e.ledgers) {
        ASSERT_EQ(l.streams.size(), 3u) << l.test;
        for (size_t p = 0; p < l.points.size(); ++p) {
            if (!l.points[p].count) continue;
            uint64_t sum = l.transport == Transport::tcp ? control : 0;
            for (const auto& s : l.streams) sum += s.points.at(p).count.value_or(0);
            EXPECT_EQ(sum, *l.points[p].count) << l.test << " " << l.points[p].label;
        }
        uint64_t lost = 0;
        for (const auto& s : l.streams) {
            EXPECT_TRUE(s.stream_port.has_value());
            EXPECT_TRUE(s.streams.empty());
            lost += s.lost_in(Stage::sender_queue);
        }
        EXPECT_EQ(lost, l.lost_in(Stage::sender_queue)) << l.test;
    }
    const Ledger& tcp = e.ledgers[0].transport == Transport::tcp ? e.ledgers[0] : e.ledgers[1];
    EXPECT_EQ(tcp.lost_in(Stage::sender_queue), 798u);
    // The ledger's JSON holds the streams and reads back the same.
    const Ledger back = parse_ledger(to_json(tcp), "ledger");
    ASSERT_EQ(back.streams.size(), 3u);
    EXPECT_EQ(back.streams[2].stream_port, tcp.streams[2].stream_port);
    EXPECT_EQ(back.streams[2].lost(), tcp.streams[2].lost());
    EXPECT_NE(render_ledgers(e.ledgers).find("stream 56848"), std::string::npos);
}

TEST(Streams, EvenStreamsGiveNoFinding) {
    EXPECT_EQ(find_finding(explain(run_p3()), "STREAMS_UNEVEN"), nullptr);
}

// The TCP test with one stream's bytes cut to half of what it moved: the real ledgers stand, so
// the finding's cause is the slow stream's own loss, or not located, by that stream's counts.
ExplainInput with_slow_stream(int port) {
    ExplainInput in = run_p3();
    for (auto& t : in.measurements.throughput) {
        if (t.transport != Transport::tcp) continue;
        for (auto& s : t.per_stream)
            if (s.port == port) *s.received_bytes /= 2, *s.sent_bytes /= 2;
    }
    return in;
}

TEST(Streams, TheSlowStreamIsExplainedByItsOwnLoss) {
    // 56848 lost 425 of the 798 segments the queue dropped: more than the others' mean by far.
    const auto e = explain(with_slow_stream(56848));
    const Finding* f = find_finding(e, "STREAMS_UNEVEN");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->title.find("Stream 56848"), std::string::npos) << f->title;
    EXPECT_NE(f->detail.find("own counts show why"), std::string::npos) << f->detail;
    EXPECT_NE(f->detail.find("QDISC_DROP"), std::string::npos) << f->detail;
}

TEST(Streams, ASlowStreamItsCountsDoNotSetApartIsNotLocated) {
    // 56840 lost 45: fewer than the others. Its slowness is not its loss.
    const auto e = explain(with_slow_stream(56840));
    const Finding* f = find_finding(e, "STREAMS_UNEVEN");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->title.find("Stream 56840"), std::string::npos) << f->title;
    EXPECT_NE(f->detail.find("was not located"), std::string::npos) << f->detail;
    EXPECT_EQ(f->detail.find("show why"), std::string::npos) << f->detail;
}

// with_slow_stream(slow), with the sender's probe's count of what each stream resent set.
ExplainInput with_resends(int slow, const std::map<int, uint64_t>& resent) {
    ExplainInput in = with_slow_stream(slow);
    for (auto& t : in.traces)
        for (auto& p : t.phases)
            for (auto& s : p.streams)
                if (t.role == "client" && p.name == "tcp" && resent.contains(s.port))
                    s.retransmits = resent.at(s.port);
    return in;
}

// The others resent nearly as much as the slow stream without losing it anywhere (spurious
// resends): its own loss, weighed against theirs alone, still names the cause.
TEST(Streams, TheOthersResendsDoNotHideTheSlowStreamsOwnLoss) {
    const auto e = explain(with_resends(56848, {{56840, 600}, {56846, 600}, {56848, 700}}));
    const Finding* f = find_finding(e, "STREAMS_UNEVEN");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->detail.find("own counts show why: it lost 425"), std::string::npos) << f->detail;
    EXPECT_NE(f->detail.find("QDISC_DROP"), std::string::npos) << f->detail;
}

// A slow stream that lost little but resent far more than the others is not explained by its
// resends: they are told, and the limit is not located. The evidence holds each stream's loss
// and resends apart.
TEST(Streams, ASlowStreamsResendsAloneNameNoCause) {
    const auto e = explain(with_resends(56840, {{56840, 2000}, {56846, 100}, {56848, 100}}));
    const Finding* f = find_finding(e, "STREAMS_UNEVEN");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->detail.find("show why"), std::string::npos) << f->detail;
    EXPECT_NE(f->detail.find("resent 2,000 against 100"), std::string::npos) << f->detail;
    EXPECT_NE(f->detail.find("Its resends set it apart but show no cause"), std::string::npos)
        << f->detail;
    EXPECT_NE(f->detail.find("was not located"), std::string::npos) << f->detail;
    const auto& ev = f->evidence;
    const auto at = [&](const std::string& k) {
        return std::find_if(ev.begin(), ev.end(), [&](const auto& e) { return e.first == k; });
    };
    ASSERT_NE(at("stream_resent"), ev.end());
    ASSERT_NE(at("stream_lost"), ev.end());
    EXPECT_EQ(at("stream_resent")->second[0], 2000);
    EXPECT_EQ(at("stream_lost")->second[0], 45);  // its QDISC_DROP; NO_SOCKET was no data
}

// A trace without per-stream counts (a probe older than them) gives no stream ledgers, not
// streams that lost everything.
TEST(Streams, ATraceWithoutStreamsGivesNoStreamLedgers) {
    ExplainInput in = run_p3();
    for (auto& t : in.traces)
        for (auto& p : t.phases) p.streams.clear();
    for (const auto& l : explain(in).ledgers) EXPECT_TRUE(l.streams.empty()) << l.test;
}

TEST(Streams, TheTracesStreamsReadBackAsWritten) {
    const Trace t = run_p3().traces[0];
    const PhaseTrace* p = t.find_phase("tcp");
    ASSERT_NE(p, nullptr);
    ASSERT_FALSE(p->streams.empty());
    const Trace back = parse_trace(to_json(t));
    const PhaseTrace* q = back.find_phase("tcp");
    ASSERT_EQ(q->streams.size(), p->streams.size());
    for (size_t i = 0; i < p->streams.size(); ++i) {
        EXPECT_EQ(q->streams[i].port, p->streams[i].port);
        EXPECT_EQ(q->streams[i].tx.packets, p->streams[i].tx.packets);
        EXPECT_EQ(q->streams[i].drops.size(), p->streams[i].drops.size());
    }
    nlohmann::json bad = to_json(t);
    for (auto& ph : bad["phases"])
        if (!ph["streams"].empty()) ph["streams"][0]["port"] = 70000;
    EXPECT_THROW(parse_trace(bad), InputError);
}

}  // namespace
}  // namespace np
