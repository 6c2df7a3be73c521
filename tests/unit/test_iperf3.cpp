#include <gtest/gtest.h>

#include <fmt/format.h>
#include "common/errors.hpp"

#include "analysis/readers/inputs.hpp"
#include "analysis/readers/iperf3.hpp"
#include "analysis/readers/series.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;
using testing::Repeated;

TEST(Iperf3, ReadsTcpSumsMssBuffersAndIntervals) {
    const auto run = parse_iperf3(fixture("iperf3/tcp-100m.json"));
    EXPECT_EQ(run.version, "iperf 3.12");
    EXPECT_EQ(run.protocol, "TCP");
    EXPECT_EQ(run.tcp_mss_default, 1448);
    EXPECT_EQ(run.blksize, 131072);
    ASSERT_TRUE(run.sndbuf_actual && run.rcvbuf_actual);
    EXPECT_TRUE(run.sum_sent.present && run.sum_received.present);
    EXPECT_NEAR(*run.sum_received.bits_per_second, 94099674.14, 0.01);
    EXPECT_EQ(run.sum_sent.retransmits, 0);
    EXPECT_EQ(run.interval_stats.intervals, 10);
    EXPECT_EQ(run.interval_stats.sum_bps.size(), 10u);
    EXPECT_EQ(run.interval_stats.pmtu, 1500);
    EXPECT_GT(run.interval_stats.rtt_samples, 0);
    ASSERT_TRUE(run.cpu_host_total && run.cpu_remote_total);
}

TEST(Iperf3, MeasurementIsTheReceiversGoodputWithTheSendersTcpInfo) {
    const auto m = measurements_from(parse_iperf3(fixture("iperf3/tcp-100m.json")), "f.json");
    ASSERT_EQ(m.throughput.size(), 1u);
    const auto& t = m.throughput[0];
    EXPECT_EQ(t.label, "iperf3 TCP");
    EXPECT_EQ(t.source, "f.json");
    EXPECT_EQ(t.transport, Transport::tcp);
    EXPECT_NEAR(*t.received_bps, 94099674.14, 0.01);
    EXPECT_NEAR(*t.sent_bps, 94660976.34, 0.01);
    EXPECT_EQ(t.retransmits, 0);
    EXPECT_EQ(t.pmtu_bytes, 1500);
    EXPECT_EQ(t.mss_bytes, 1448);
    EXPECT_TRUE(t.rtt_mean_us.has_value());
    EXPECT_FALSE(t.offered_bps.has_value()) << "TCP without -b is unlimited";
}

TEST(Iperf3, ParallelStreamsAreSummed) {
    const auto run = parse_iperf3(fixture("iperf3/tcp-100m-P4.json"));
    EXPECT_EQ(run.num_streams, 4);
    EXPECT_EQ(run.end_streams.count, 4);
    EXPECT_NEAR(run.end_streams.receiver_bps, *run.sum_received.bits_per_second, 1.0);
    const auto m = measurements_from(run, "");
    EXPECT_EQ(m.throughput[0].label, "iperf3 TCP -P 4");
}

TEST(Iperf3, ReverseMeansTheServerSent) {
    const auto m = measurements_from(parse_iperf3(fixture("iperf3/tcp-100m-reverse.json")), "");
    ASSERT_EQ(m.throughput.size(), 1u);
    EXPECT_TRUE(m.throughput[0].reverse);
    EXPECT_EQ(m.throughput[0].label, "iperf3 TCP -R");
}

TEST(Iperf3, BidirGivesOneTestPerDirectionEvenWithoutTheBidirKey) {
    // 3.12 writes no test_start.bidir; the *_bidir_reverse sums say it.
    const auto m = measurements_from(parse_iperf3(fixture("iperf3/tcp-100m-bidir.json")), "");
    ASSERT_EQ(m.throughput.size(), 2u);
    EXPECT_TRUE(m.throughput[0].bidir);
    EXPECT_FALSE(m.throughput[0].reverse);
    EXPECT_TRUE(m.throughput[1].reverse);
    EXPECT_NE(*m.throughput[0].received_bps, *m.throughput[1].received_bps);
}

TEST(Iperf3, UdpCountsComeFromSenderAndReceiver) {
    const auto m = measurements_from(parse_iperf3(fixture("iperf3/udp-100m-b90M.json")), "");
    const auto& t = m.throughput.at(0);
    EXPECT_EQ(t.transport, Transport::udp);
    EXPECT_EQ(t.payload_bytes, 1448);
    EXPECT_EQ(t.offered_bps, 90e6);
    EXPECT_EQ(t.offered_from, "target_bitrate");
    EXPECT_EQ(t.datagrams_sent, 77687);
    EXPECT_EQ(t.datagrams_total, 77687);
    EXPECT_EQ(t.datagrams_lost, 0);
    EXPECT_TRUE(t.jitter_ms.has_value());
}

TEST(Iperf3, UdpBefore311FallsBackToEndSumAndPerStreamBlocks) {
    const auto m =
        measurements_from(parse_iperf3(fixture("handwritten/iperf3-3.9-udp-no-sum-sent.json")), "");
    const auto& t = m.throughput.at(0);
    EXPECT_EQ(t.tool_version, "iperf 3.9");
    EXPECT_EQ(t.datagrams_lost, 12);
    EXPECT_EQ(t.datagrams_total, 77687);
    ASSERT_TRUE(t.sent_bps);
    EXPECT_GT(*t.sent_bps, 89e6);
    // end.sum's bytes are the sender's (total_sent); what arrived is not printed.
    EXPECT_DOUBLE_EQ(*t.sent_bytes, 112490776);
    EXPECT_FALSE(t.received_bps.has_value());
    EXPECT_FALSE(t.offered_bps.has_value()) << "3.9 does not record -b";
}

TEST(Iperf3, TheVersionAndPlatformAreWhatStartSays) {
    const auto m = measurements_from(parse_iperf3(fixture("iperf3/tcp-100m.json")), "");
    EXPECT_EQ(m.throughput.at(0).tool_version, "iperf 3.12");
    EXPECT_EQ(m.throughput.at(0).platform, "Linux");
    EXPECT_EQ(tool_text("iperf 3.12", "Linux"), "iperf 3.12 on Linux");
    EXPECT_EQ(tool_text("", "macOS"), "the tool on macOS");
    EXPECT_EQ(tool_text("", ""), "");
}

TEST(Iperf3, PlatformsByTheirUnameWord) {
    EXPECT_EQ(platform_of("Darwin mac.local 22.1.0 Darwin Kernel Version 22.1.0"), "macOS");
    EXPECT_EQ(platform_of("FreeBSD fbsd 13.2-RELEASE FreeBSD 13.2-RELEASE amd64"), "FreeBSD");
    EXPECT_EQ(platform_of("CYGWIN_NT-10.0-19045 win 3.4.7-1.x86_64 2023-06-16 x86_64"), "Windows");
    EXPECT_EQ(platform_of("Linux vm 6.18.44 #1 SMP x86_64"), "Linux");
    EXPECT_EQ(platform_of("Plan9 x"), "") << "not guessed";
    EXPECT_EQ(platform_of(""), "");
}

TEST(Iperf3, TextWithVNamesVersionAndPlatform) {
    const auto m = parse_measurements(fixture("iperf3/tcp-100m-verbose.txt"), "v.txt");
    ASSERT_EQ(m.throughput.size(), 1u);
    EXPECT_EQ(m.throughput[0].tool_version, "iperf 3.12");
    EXPECT_EQ(m.throughput[0].platform, "Linux");
    EXPECT_TRUE(m.throughput[0].retransmits.has_value());
}

TEST(Iperf3, Text30UntaggedSummaryIsTheSendersWithTheReceiversCounts) {
    const auto m = parse_measurements(fixture("handwritten/iperf3-3.0-udp-client.txt"), "c.txt");
    ASSERT_EQ(m.throughput.size(), 1u);
    const auto& t = m.throughput[0];
    EXPECT_EQ(t.tool_version, "iperf 3.0 or 3.1") << "only they print UDP's summary untagged";
    EXPECT_EQ(t.transport, Transport::udp);
    EXPECT_DOUBLE_EQ(*t.sent_bps, 1.06e9);
    EXPECT_FALSE(t.received_bps.has_value()) << "3.0 prints no receiver's rate for UDP";
    EXPECT_EQ(t.datagrams_sent, 162217);
    EXPECT_EQ(t.datagrams_lost, 135795);
    EXPECT_EQ(t.datagrams_total, 162217);
    EXPECT_EQ(t.printed_loss_pct, 84.0);
    EXPECT_DOUBLE_EQ(*t.jitter_ms, 0.001);
    EXPECT_EQ(t.interval_bps.size(), 10u) << "the intervals stay intervals";
}

// 3.0's and 3.1's server print the stream's sent bytes on their UDP summary line: its counts are
// read, its bytes are not taken for what arrived.
TEST(Iperf3, Text30ServersUntaggedSummaryGivesItsCountsOnly) {
    const std::string server =
        "Server listening on 5201\n"
        "Accepted connection from 198.18.10.1, port 43927\n"
        "[  5] local 198.18.10.2 port 5201 connected to 198.18.10.1 port 43928\n"
        "[ ID] Interval           Transfer     Bandwidth       Jitter    Lost/Total Datagrams\n"
        "[  5]   0.00-1.00   sec  20.6 MBytes   173 Mbits/sec  0.001 ms  13579/16222 (84%)\n"
        "- - - - - - - - - - - - - - - - - - - - - - - - -\n"
        "[ ID] Interval           Transfer     Bandwidth       Jitter    Lost/Total Datagrams\n"
        "[  5]   0.00-10.04  sec  1.24 GBytes  1.06 Gbits/sec  0.001 ms  135795/162217 (84%)\n";
    const auto m = parse_measurements(server, "s.txt");
    ASSERT_EQ(m.throughput.size(), 1u);
    const auto& t = m.throughput[0];
    EXPECT_TRUE(t.from_server);
    EXPECT_FALSE(t.received_bps.has_value());
    EXPECT_FALSE(t.sent_bps.has_value());
    EXPECT_EQ(t.datagrams_total, 162217);
    EXPECT_EQ(t.datagrams_lost, 135795);
    EXPECT_NEAR(t.duration_s, 10.04, 1e-9);
}

// A sender whose iperf3 has no tcp_info retransmits (macOS before 3.21, Windows, FreeBSD before
// 3.1) prints no Retr column: the count is absent, not 0.
TEST(Iperf3, TextWithoutARetrColumnHasNoRetransmitCount) {
    const std::string text =
        "Connecting to host 198.18.10.2, port 5201\n"
        "[  5] local 198.18.10.1 port 50312 connected to 198.18.10.2 port 5201\n"
        "[ ID] Interval           Transfer     Bitrate\n"
        "[  5]   0.00-1.00   sec   112 MBytes   941 Mbits/sec\n"
        "- - - - - - - - - - - - - - - - - - - - - - - - -\n"
        "[ ID] Interval           Transfer     Bitrate\n"
        "[  5]   0.00-10.00  sec  1.09 GBytes   936 Mbits/sec                  sender\n"
        "[  5]   0.00-10.00  sec  1.09 GBytes   935 Mbits/sec                  receiver\n";
    const auto m = parse_measurements(text, "mac.txt");
    ASSERT_EQ(m.throughput.size(), 1u);
    EXPECT_FALSE(m.throughput[0].retransmits.has_value());
    EXPECT_DOUBLE_EQ(*m.throughput[0].sent_bps, 936e6);
    EXPECT_DOUBLE_EQ(*m.throughput[0].received_bps, 935e6);
    EXPECT_TRUE(m.throughput[0].tool_version.empty()) << "a tagged summary names no version";
}

// The JSON of every release from 3.0 to 3.21 and of each platform: the same figures of the same
// run, the version and platform named, what a release lacks absent.
struct JsonRelease {
    std::string file, version, platform;
    bool rtt, retransmits;
};

class Iperf3Releases : public ::testing::TestWithParam<JsonRelease> {};

TEST_P(Iperf3Releases, ReadAlike) {
    const JsonRelease& want = GetParam();
    const auto m = parse_measurements(fixture(want.file), "r.json");
    ASSERT_EQ(m.throughput.size(), 1u);
    const auto& t = m.throughput[0];
    EXPECT_EQ(t.tool_version, want.version);
    EXPECT_EQ(t.platform, want.platform);
    EXPECT_EQ(t.rtt_mean_us.has_value(), want.rtt);
    EXPECT_EQ(t.retransmits.has_value(), want.retransmits);
    ASSERT_TRUE(t.received_bps.has_value());
    EXPECT_GT(*t.received_bps, 0);
    EXPECT_EQ(t.interval_bps.size(), 10u);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, Iperf3Releases,
    ::testing::Values(
        JsonRelease{"handwritten/iperf3-3.0-tcp.json", "iperf 3.0.11", "Linux", false, true},
        JsonRelease{"iperf3/tcp-100m.json", "iperf 3.12", "Linux", true, true},
        JsonRelease{"handwritten/iperf3-3.17-json-stream-tcp.ndjson", "iperf 3.17.1", "Linux", true,
                    true},
        JsonRelease{"handwritten/iperf3-3.21-macos-tcp.json", "iperf 3.21", "macOS", true, true},
        JsonRelease{"handwritten/iperf3-3.12-windows-tcp-1g-612.json", "iperf 3.12", "Windows",
                    false, false}),
    [](const ::testing::TestParamInfo<JsonRelease>& info) {
        std::string name = info.param.version.substr(6) + "_" + info.param.platform;
        for (char& c : name)
            if (c == '.') c = '_';
        return name + "_" + std::to_string(info.index);
    });

// 3.21's test_start carries gso and gro (--gsro); older releases have neither: left empty.
TEST(Iperf3, UdpGsoAndGroOf321) {
    std::string json = fixture("iperf3/udp-100m-b90M.json");
    const auto older = parse_measurements(json, "u.json").throughput.at(0);
    EXPECT_FALSE(older.udp_gso.has_value());
    const std::string key = "\"target_bitrate\":\t90000000";
    const size_t at = json.rfind(key);
    ASSERT_NE(at, std::string::npos);
    json.insert(at + key.size(), ",\n\t\t\t\"gso\":\t0,\n\t\t\t\"gro\":\t1");
    const auto t = parse_measurements(json, "u.json").throughput.at(0);
    EXPECT_EQ(t.udp_gso, false);
    EXPECT_EQ(t.udp_gro, true);
}

TEST(Iperf3, JsonStreamGivesTheSameFiguresAsTheDocument) {
    const auto doc = parse_iperf3(fixture("iperf3/tcp-100m.json"));
    const auto stream = parse_iperf3(fixture("handwritten/iperf3-3.17-json-stream-tcp.ndjson"));
    EXPECT_TRUE(stream.json_stream);
    EXPECT_EQ(stream.version, "iperf 3.17.1");
    EXPECT_EQ(stream.interval_stats.intervals, doc.interval_stats.intervals);
    EXPECT_DOUBLE_EQ(*stream.sum_received.bits_per_second, *doc.sum_received.bits_per_second);
    EXPECT_EQ(stream.interval_stats.sum_bps, doc.interval_stats.sum_bps);
}

TEST(Iperf3, TopLevelErrorBecomesAToolFailureNotAnException) {
    const auto m =
        measurements_from(parse_iperf3(fixture("iperf3/unreachable-refused.json")), "x.json");
    EXPECT_TRUE(m.throughput.empty());
    ASSERT_EQ(m.failures.size(), 1u);
    EXPECT_EQ(m.failures[0].message, "unable to connect to server: Connection refused");
    EXPECT_EQ(m.failures[0].source, "x.json");
}

TEST(Iperf3, StreamedErrorEventIsAFailure) {
    const auto run = parse_iperf3(
        "{\"event\":\"error\",\"data\":\"unable to connect to server: Connection refused\"}\n");
    ASSERT_TRUE(run.error);
    EXPECT_EQ(measurements_from(run, "").failures.size(), 1u);
}

TEST(Iperf3, RetransmitsMinusOneMeansUnavailable) {
    // What iperf3 writes where tcp_info has no retransmit count (e.g. not Linux).
    std::string text = fixture("iperf3/tcp-100m.json");
    const std::string from = "\"retransmits\":\t0";
    int replaced = 0;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
        text.replace(at, from.size(), "\"retransmits\":\t-1");
        ++replaced;
    }
    ASSERT_GT(replaced, 0);
    const auto m = measurements_from(parse_iperf3(text), "");
    EXPECT_FALSE(m.throughput[0].retransmits.has_value());
}

struct BadJson {
    std::string text;
    std::string field;
    int line;
};

class Iperf3Rejects : public ::testing::TestWithParam<BadJson> {};

TEST_P(Iperf3Rejects, WithFieldAndLine) {
    try {
        parse_iperf3(GetParam().text);
        FAIL() << "accepted: " << GetParam().text;
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), GetParam().field) << e.what();
        EXPECT_EQ(e.line(), GetParam().line) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, Iperf3Rejects,
    ::testing::Values(
        BadJson{"", "json", 1}, BadJson{"  \n ", "json", 1},
        BadJson{"{\"start\": {\n\"version\": \"iperf 3.12\",\n", "json", 3},
        BadJson{std::string("{\"a\":\0}", 7), "json", 1},
        BadJson{"{\"start\":{},\"end\":{\"sum_sent\":{\"bytes\":\"many\"}}}", "end.sum_sent.bytes",
                1},
        BadJson{"{\"start\":{\"test_start\":{\"num_streams\":true}},\"end\":{}}",
                "start.test_start.num_streams", 1},
        // A rate that is a list is not a rate of 0.
        BadJson{"{\"start\":{},\n\"end\":{\"sum_received\":{\"bits_per_second\":[]}}}",
                "end.sum_received.bits_per_second", 2},
        BadJson{"{\"start\":{},\"end\":{\"sum\":{\"jitter_ms\":-0.5}}}", "end.sum.jitter_ms", 1},
        BadJson{"{\"start\":{},\"end\":{\"sum\":{\"lost_packets\":1.5}}}", "end.sum.lost_packets",
                1},
        BadJson{"{\"start\":{},\"end\":{\"sum_sent\":{\"bits_per_second\":1e400}}}",
                "end.sum_sent.bits_per_second", 1},
        BadJson{"{\"start\":{\"test_start\":{\"num_streams\":1000000}},\"end\":{}}",
                "start.test_start.num_streams", 1},
        BadJson{"{\"start\":{},\"end\":{\"sum\":{\"packets\":2.5}}}", "end.sum.packets", 1},
        BadJson{"{\"start\":{},\"end\":{\"sum_sent\":[]}}", "end.sum_sent", 1},
        BadJson{"{\"start\":{},\"intervals\":[1],\"end\":{}}", "intervals[0]", 1},
        BadJson{"{\"end\":{}}", "start", 0}, BadJson{"{\"start\":{}}", "end", 0},
        BadJson{"[1,2,3]", "start", 0}, BadJson{"{\"start\":{}} trailing", "json", 1},
        BadJson{"{\"event\":\"start\",\"data\":{}}\n{\"event\":\"end\",\"data\":{", "json", 2}));

TEST(Iperf3, TwentyMillionEndStreamsAreRefusedAfterIperf3sLimitNotRead) {
    // Issue 12: 20 million {} in end.streams (60 MB) took 18 GB and 3 min. iperf3 runs at most
    // 128 streams, two entries each with --bidir: the 257th entry is the error.
    Repeated in("{\"start\":{},\"end\":{\"streams\":[{}", ",{}", 20'000'000, "]}}");
    try {
        parse_iperf3(in);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "end.streams");
        EXPECT_NE(std::string(e.what()).find("128"), std::string::npos) << e.what();
    }
    EXPECT_LE(in.chunks, 2) << "stopped in the first chunk of entries";
}

TEST(Iperf3, ADayOfIntervalsKeepsABoundedSeries) {
    std::string doc = "{\"start\":{},\"intervals\":[";
    for (int i = 0; i < 200000; ++i)
        doc += fmt::format("{}{{\"sum\":{{\"bits_per_second\":{}}}}}", i ? "," : "",
                           i % 2 ? 90e6 : 94e6);
    doc += "],\"end\":{\"sum_received\":{\"bits_per_second\":92e6}}}";
    StringSource in(doc, 4096);
    const auto run = parse_iperf3(in);
    EXPECT_EQ(run.interval_stats.intervals, 200000);
    EXPECT_LE(run.interval_stats.sum_bps.size(), kMaxSeriesPoints);
    EXPECT_GE(run.interval_stats.sum_bps.size(), kMaxSeriesPoints / 4);
    for (double bps : run.interval_stats.sum_bps) EXPECT_NEAR(bps, 92e6, 1.0) << "means of pairs";
}

TEST(Iperf3, ReadInPiecesItIsTheSameRun) {
    for (const char* f :
         {"iperf3/udp-100m-b90M.json", "handwritten/iperf3-3.17-json-stream-tcp.ndjson"}) {
        const std::string text = fixture(f);
        const auto whole = measurements_from(parse_iperf3(text), "f").throughput.at(0);
        for (size_t chunk : {1, 7, 4096}) {
            StringSource in(text, chunk);
            const auto t = measurements_from(parse_iperf3(in), "f").throughput.at(0);
            EXPECT_EQ(t.received_bps, whole.received_bps) << f << " " << chunk;
            EXPECT_EQ(t.interval_bps, whole.interval_bps) << f << " " << chunk;
            EXPECT_EQ(t.datagrams_total, whole.datagrams_total) << f << " " << chunk;
        }
    }
}

TEST(Iperf3, DeepNestingIsRejectedNotRecursedInto) {
    std::string deep = "{\"start\":" + std::string(10000, '[') + std::string(10000, ']') + "}";
    EXPECT_THROW(parse_iperf3(deep), InputError);
}

}  // namespace
}  // namespace np
