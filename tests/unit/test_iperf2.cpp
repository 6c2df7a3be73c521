#include <gtest/gtest.h>

#include "analysis/readers/inputs.hpp"
#include "analysis/readers/iperf2.hpp"
#include "common/errors.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;

ThroughputTest only_test(const std::string& text) {
    const auto m = parse_measurements(text, "f.txt", InputFormat::iperf2);
    EXPECT_EQ(m.throughput.size(), 1u);
    return m.throughput.at(0);
}

TEST(Iperf2, ClientTcpIsTheSendersFigureWithItsPrintPrecision) {
    const auto t = only_test(fixture("iperf2/tcp-100m.client.txt"));
    EXPECT_EQ(t.transport, Transport::tcp);
    EXPECT_FALSE(t.from_server);
    EXPECT_EQ(t.server_host, "198.18.10.2");
    EXPECT_EQ(t.port, 5001);
    EXPECT_EQ(t.socket_buffer_text, "16.0 KByte (default)");
    EXPECT_EQ(t.socket_buffer_bytes, 16384);
    EXPECT_EQ(t.socket_buffer_side, "client");
    EXPECT_DOUBLE_EQ(*t.sent_bps, 94.1e6);
    EXPECT_DOUBLE_EQ(t.rate_resolution_bps, 0.05e6);
    EXPECT_FALSE(t.received_bps.has_value());
    EXPECT_DOUBLE_EQ(*t.sent_bytes, 113.0 * 1024 * 1024) << "transfers are binary units";
}

// Windows builds print the same Locale.c strings: CRLF line ends, 2.1's -e header without the
// Rtry/Cwnd columns (no TCP stats), 4-decimal times of --enable-fastsampling builds, the peer's
// version after the connection; 2.0.5's ids are socket numbers ("[164]").
TEST(Iperf2, EveryOsAndReleaseLayout) {
    const auto e = only_test(fixture("handwritten/iperf2-2.1-windows-tcp-e.client.txt"));
    EXPECT_DOUBLE_EQ(*e.sent_bps, 936e6);
    EXPECT_NEAR(e.duration_s, 10.0114, 1e-9);
    EXPECT_FALSE(e.retransmits.has_value()) << "no Rtry column";
    EXPECT_EQ(e.server_host, "198.18.10.2");
    const auto old = only_test(fixture("handwritten/iperf2-2.0.5-tcp-socket-id.client.txt"));
    EXPECT_DOUBLE_EQ(*old.sent_bps, 938e6);
    EXPECT_DOUBLE_EQ(old.duration_s, 10.0);
}

TEST(Iperf2, ServerOutputIsTheReceiversFigure) {
    const auto t = only_test(fixture("iperf2/tcp-100m.server.txt"));
    EXPECT_DOUBLE_EQ(*t.received_bps, 94.2e6);
    EXPECT_FALSE(t.sent_bps.has_value());
    EXPECT_TRUE(t.from_server);
    EXPECT_EQ(t.label, "iperf2 TCP (server side)");
}

TEST(Iperf2, SumLineIsUsedWithParallelStreams) {
    const auto t = only_test(fixture("iperf2/tcp-100m-P4.client.txt"));
    EXPECT_EQ(t.streams, 4);
    EXPECT_DOUBLE_EQ(*t.sent_bps, 95.5e6);
    EXPECT_EQ(t.label, "iperf2 TCP -P 4");
}

TEST(Iperf2, EnhancedColumnsAreSkipped) {
    EXPECT_DOUBLE_EQ(*only_test(fixture("iperf2/tcp-100m-enhanced.client.txt")).sent_bps, 94.0e6);
}

TEST(Iperf2, UdpClientReadsSentDatagramsAndTheRelayedServerReport) {
    const auto t = only_test(fixture("iperf2/udp-100m-b200M.client.txt"));
    EXPECT_EQ(t.transport, Transport::udp);
    EXPECT_EQ(t.payload_bytes, 1470);
    EXPECT_EQ(t.socket_buffer_text, "208 KByte (default)");
    EXPECT_EQ(t.offered_from,
              "the IPG target 56.08 us, i.e. -b 200M, which iperf2 reads in "
              "binary units (an uppercase suffix)");
    EXPECT_EQ(t.datagrams_sent, 81467);
    EXPECT_EQ(t.datagrams_lost, 0);
    EXPECT_EQ(t.datagrams_total, 81466);
    EXPECT_DOUBLE_EQ(*t.sent_bps, 95.8e6);
    EXPECT_DOUBLE_EQ(*t.received_bps, 95.7e6);
    EXPECT_DOUBLE_EQ(*t.jitter_ms, 0.456);
    EXPECT_EQ(t.printed_loss_text, "0/81466 (0%)");
}

TEST(Iperf2, UppercaseBandwidthSuffixIsBinaryInTheIpgTarget) {
    // iperf 2.1.8 -b 200M printed "IPG target: 56.08 us": 1470 B every 56.08 us is
    // 200 × 2^20 bit/s, not 200e6.
    const auto o = offered_rate_from_ipg(1470, 56.08);
    EXPECT_EQ(o.typed, "200M");
    EXPECT_DOUBLE_EQ(o.bps, 200.0 * 1048576);
}

TEST(Iperf2, LowercaseSuffixIsDecimal) {
    const auto o = offered_rate_from_ipg(1470, 1.31);  // -b 9gbps
    EXPECT_EQ(o.typed, "9g");
    EXPECT_DOUBLE_EQ(o.bps, 9e9);
}

TEST(Iperf2, ParallelUdpAddsTheServerReportsAndSkipsOutOfOrderLines) {
    const auto t = only_test(fixture("iperf2/udp-100m-b90M-P4.client.txt"));
    EXPECT_EQ(t.streams, 4);
    EXPECT_EQ(t.datagrams_lost, 8);
    EXPECT_EQ(t.datagrams_total, 81619);
    EXPECT_DOUBLE_EQ(*t.offered_bps, 4 * 90.0 * 1048576);
}

TEST(Iperf2, LegacyTwoZeroLayout) {
    const auto tcp = only_test(fixture("handwritten/iperf2-2.0-tcp-10g-9.42.client.txt"));
    EXPECT_DOUBLE_EQ(*tcp.sent_bps, 9.42e9);
    EXPECT_DOUBLE_EQ(*tcp.sent_bytes, 11.0 * 1073741824.0);
    EXPECT_DOUBLE_EQ(tcp.duration_s, 10.0);
    const auto udp = only_test(fixture("handwritten/iperf2-2.0-udp-legacy.client.txt"));
    EXPECT_EQ(udp.datagrams_total, 893);
    EXPECT_EQ(udp.datagrams_lost, 0);
    EXPECT_FALSE(udp.offered_bps.has_value()) << "2.0.x prints no IPG target";
}

TEST(Iperf2, TenGigUdpRunHasTheDesignFigures) {
    const auto t = only_test(fixture("handwritten/iperf2-2.2-udp-10g-b9g.client.txt"));
    EXPECT_EQ(t.datagrams_sent, 7134255);
    EXPECT_EQ(t.datagrams_lost, 342498);
    EXPECT_EQ(t.datagrams_total, 7134255);
    EXPECT_EQ(t.printed_loss_pct, 0.0);
    EXPECT_DOUBLE_EQ(*t.sent_bps, 8.39e9);
    EXPECT_DOUBLE_EQ(*t.received_bps, 7.99e9);
    EXPECT_DOUBLE_EQ(*t.offered_bps, 9e9);
}

TEST(Iperf2, AServerThatPrintedOnlyItsBannerIsContextNotATest) {
    const auto m =
        parse_measurements(fixture("handwritten/iperf2-2.0-udp-server-banner.txt"), "s.txt");
    EXPECT_TRUE(m.throughput.empty());
    ASSERT_EQ(m.servers.size(), 1u);
    const auto& b = m.servers[0];
    EXPECT_EQ(b.tool, Tool::iperf2);
    EXPECT_EQ(b.transport, Transport::udp);
    EXPECT_EQ(b.port, 5001);
    EXPECT_EQ(b.buffer_bytes, 208 * 1024);
    EXPECT_EQ(b.buffer_text, "208 KByte (default)");
    EXPECT_EQ(b.datagram_bytes, 1470);
}

TEST(Iperf2, EachConnectionOfAServerThatGoesOnServingIsItsOwnTest) {
    // Two clients, one after the other, reached one `iperf -s -u` (tests/fixtures/transcripts):
    // two tests of one stream each, not one test of -P 2.
    const auto m = parse_measurements(fixture("transcripts/server-iperf2-udp.txt"), "s.txt");
    ASSERT_EQ(m.throughput.size(), 2u);
    EXPECT_EQ(m.throughput[0].streams, 1);
    EXPECT_EQ(m.throughput[0].datagrams_total, 80251);
    EXPECT_EQ(m.throughput[1].datagrams_total, 49464);
    EXPECT_EQ(m.throughput[1].socket_buffer_text, "208 KByte (default)") << "from the banner";
    EXPECT_EQ(m.servers.size(), 1u) << "one banner";
}

TEST(Iperf2, AnAbsurdBufferSizeIsLeftOutNotOverflowed) {
    // Found by fuzz_iperf2: a 85-digit "UDP buffer size" overflowed the int64 conversion.
    const auto t = only_test("Client connecting to h, UDP port 5001\nUDP buffer size:  2" +
                             std::string(84, '0') +
                             " KByte (default)\n[  1] 0.0-10.0 sec  1 MBytes  1 Mbits/sec\n");
    EXPECT_FALSE(t.socket_buffer_bytes.has_value());
}

TEST(Iperf2, ANegativeBufferSizeIsLeftOutNotConverted) {
    // Found by fuzz_iperf2 (UBSan): a huge negative size was converted to int64.
    const auto t = only_test("Client connecting to h, UDP port 5001\nUDP buffer size: -2" +
                             std::string(38, '0') +
                             " KByte (default)\n[  1] 0.0-10.0 sec  1 MBytes  1 Mbits/sec\n");
    EXPECT_FALSE(t.socket_buffer_bytes.has_value());
}

TEST(Iperf2, AMillionStreamIdsAreRefusedNotExplainedAsP1000000) {
    // Issue 12: such a text was "-P 1000000 … line-rate bound at 9.86 %".
    std::string text = "Client connecting to h, TCP port 5001\n";
    for (int id = 1; id <= 1'000'000 && text.size() < (64u << 20); ++id)
        text += "[" + std::to_string(id) + "] 0.0-10.0 sec  11.0 GBytes  9.42 Gbits/sec\n";
    try {
        parse_measurements(text, "f", InputFormat::iperf2);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), static_cast<int64_t>(kMaxIperf2Streams) + 2);
        EXPECT_NE(std::string(e.what()).find("stream ids"), std::string::npos) << e.what();
    }
}

struct BadText {
    std::string text;
    int line;
    std::string field;
    std::string says;
};

class Iperf2Rejects : public ::testing::TestWithParam<BadText> {};

TEST_P(Iperf2Rejects, NamingTheLine) {
    try {
        parse_measurements(GetParam().text, "f", InputFormat::iperf2);
        FAIL() << "accepted: " << GetParam().text;
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), GetParam().field);
        EXPECT_EQ(e.line(), GetParam().line) << e.what();
        EXPECT_NE(std::string(e.what()).find(GetParam().says), std::string::npos) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, Iperf2Rejects,
    ::testing::Values(
        BadText{"", 1, "format", "empty"}, BadText{"hello\nworld\n", 1, "iperf2", "not iperf2"},
        BadText{"Client connecting to 1.2.3.4, TCP port 5001\n[  1] local x\n", 2, "iperf2",
                "truncated"},
        BadText{"Client connecting to h, TCP port 5001\n[  1] 0.0-10.0 sec  11.0 Gallons  9 "
                "Gbits/sec\n",
                2, "iperf2", "transfer"},
        BadText{"Client connecting to h, TCP port 5001\n[  1] 0.0-10.0 sec  11.0 GBytes  9.42\n", 2,
                "iperf2", "rate"},
        BadText{"Client connecting to h, UDP port 5001\n[  1] 0.0-10.0 sec  1 MBytes  1 "
                "Mbits/sec  0.1 ms 5/\n",
                2, "iperf2", "total"},
        BadText{"Client connecting to h, UDP port 5001\n[  1] 0.0-10.0 sec  1 MBytes  1 "
                "Mbits/sec  -0.1 ms 0/5 (0%)\n",
                2, "iperf2", "a negative jitter"},
        BadText{"Client connecting to h, UDP port 5001\n[  1] Sent many datagrams\n", 2, "iperf2",
                "Sent N datagrams"},
        BadText{std::string("Client connecting to h\0", 23), 1, "format", "binary"}));

}  // namespace
}  // namespace np
