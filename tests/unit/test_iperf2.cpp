#include <gtest/gtest.h>

#include "analysis/error.hpp"
#include "analysis/iperf2.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;

TEST(Iperf2, ClientTcpIsTheSendersFigureWithItsPrintPrecision) {
    const auto run = parse_iperf2(fixture("iperf2/tcp-100m.client.txt"));
    EXPECT_EQ(run.role, Iperf2Run::Role::client);
    EXPECT_EQ(run.transport, Transport::tcp);
    EXPECT_EQ(run.peer, "198.18.10.2");
    EXPECT_EQ(run.buffer_text, "16.0 KByte (default)");
    EXPECT_EQ(run.buffer_bytes, 16384);
    const auto t = measurements_from(run, "").throughput.at(0);
    EXPECT_DOUBLE_EQ(*t.sent_bps, 94.1e6);
    EXPECT_DOUBLE_EQ(t.rate_resolution_bps, 0.05e6);
    EXPECT_FALSE(t.received_bps.has_value());
    EXPECT_DOUBLE_EQ(*t.sent_bytes, 113.0 * 1024 * 1024) << "transfers are binary units";
}

TEST(Iperf2, ServerOutputIsTheReceiversFigure) {
    const auto t =
        measurements_from(parse_iperf2(fixture("iperf2/tcp-100m.server.txt")), "").throughput[0];
    EXPECT_DOUBLE_EQ(*t.received_bps, 94.2e6);
    EXPECT_FALSE(t.sent_bps.has_value());
    EXPECT_EQ(t.label, "iperf2 TCP (server side)");
}

TEST(Iperf2, SumLineIsUsedWithParallelStreams) {
    const auto t =
        measurements_from(parse_iperf2(fixture("iperf2/tcp-100m-P4.client.txt")), "").throughput[0];
    EXPECT_EQ(t.streams, 4);
    EXPECT_DOUBLE_EQ(*t.sent_bps, 95.5e6);
    EXPECT_EQ(t.label, "iperf2 TCP -P 4");
}

TEST(Iperf2, EnhancedColumnsAreSkipped) {
    const auto t =
        measurements_from(parse_iperf2(fixture("iperf2/tcp-100m-enhanced.client.txt")), "")
            .throughput[0];
    EXPECT_DOUBLE_EQ(*t.sent_bps, 94.0e6);
}

TEST(Iperf2, UdpClientReadsSentDatagramsAndTheRelayedServerReport) {
    const auto run = parse_iperf2(fixture("iperf2/udp-100m-b200M.client.txt"));
    EXPECT_EQ(run.transport, Transport::udp);
    EXPECT_EQ(run.datagram_bytes, 1470);
    EXPECT_DOUBLE_EQ(*run.ipg_target_us, 56.08);
    EXPECT_EQ(run.buffer_text, "208 KByte (default)");
    const auto t = measurements_from(run, "").throughput[0];
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
    const auto t =
        measurements_from(parse_iperf2(fixture("iperf2/udp-100m-b90M-P4.client.txt")), "")
            .throughput[0];
    EXPECT_EQ(t.streams, 4);
    EXPECT_EQ(t.datagrams_lost, 8);
    EXPECT_EQ(t.datagrams_total, 81619);
    EXPECT_DOUBLE_EQ(*t.offered_bps, 4 * 90.0 * 1048576);
}

TEST(Iperf2, LegacyTwoZeroLayout) {
    const auto tcp = measurements_from(
        parse_iperf2(fixture("handwritten/iperf2-2.0-tcp-10g-9.42.client.txt")), "");
    EXPECT_DOUBLE_EQ(*tcp.throughput[0].sent_bps, 9.42e9);
    EXPECT_DOUBLE_EQ(*tcp.throughput[0].sent_bytes, 11.0 * 1073741824.0);
    EXPECT_DOUBLE_EQ(tcp.throughput[0].duration_s, 10.0);
    const auto udp = measurements_from(
        parse_iperf2(fixture("handwritten/iperf2-2.0-udp-legacy.client.txt")), "");
    EXPECT_EQ(udp.throughput[0].datagrams_total, 893);
    EXPECT_EQ(udp.throughput[0].datagrams_lost, 0);
    EXPECT_FALSE(udp.throughput[0].offered_bps.has_value()) << "2.0.x prints no IPG target";
}

TEST(Iperf2, TenGigUdpRunHasTheDesignFigures) {
    const auto t = measurements_from(
                       parse_iperf2(fixture("handwritten/iperf2-2.2-udp-10g-b9g.client.txt")), "")
                       .throughput[0];
    EXPECT_EQ(t.datagrams_sent, 7134255);
    EXPECT_EQ(t.datagrams_lost, 342498);
    EXPECT_EQ(t.datagrams_total, 7134255);
    EXPECT_EQ(t.printed_loss_pct, 0.0);
    EXPECT_DOUBLE_EQ(*t.sent_bps, 8.39e9);
    EXPECT_DOUBLE_EQ(*t.received_bps, 7.99e9);
    EXPECT_DOUBLE_EQ(*t.offered_bps, 9e9);
}

TEST(Iperf2, AnAbsurdBufferSizeIsLeftOutNotOverflowed) {
    // Found by fuzz_iperf2: a 85-digit "UDP buffer size" overflowed the int64 conversion.
    const auto run = parse_iperf2("Client connecting to h, UDP port 5001\nUDP buffer size:  2" +
                                  std::string(84, '0') +
                                  " KByte (default)\n[  1] 0.0-10.0 sec  1 MBytes  1 Mbits/sec\n");
    EXPECT_FALSE(run.buffer_bytes.has_value());
}

TEST(Iperf2, ANegativeBufferSizeIsLeftOutNotConverted) {
    // Found by fuzz_iperf2 (UBSan): a huge negative size was converted to int64.
    const auto run = parse_iperf2("Client connecting to h, UDP port 5001\nUDP buffer size: -2" +
                                  std::string(38, '0') +
                                  " KByte (default)\n[  1] 0.0-10.0 sec  1 MBytes  1 Mbits/sec\n");
    EXPECT_FALSE(run.buffer_bytes.has_value());
}

TEST(Iperf2, HugeInputIsRefusedWithItsSize) {
    EXPECT_THROW(parse_iperf2(std::string(kMaxIperf2TextBytes + 1, ' ') + "x"), InputError);
}

struct BadText {
    std::string text;
    int line;
    std::string says;
};

class Iperf2Rejects : public ::testing::TestWithParam<BadText> {};

TEST_P(Iperf2Rejects, NamingTheLine) {
    try {
        parse_iperf2(GetParam().text);
        FAIL() << "accepted: " << GetParam().text;
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "iperf2");
        EXPECT_EQ(e.line(), GetParam().line) << e.what();
        EXPECT_NE(std::string(e.what()).find(GetParam().says), std::string::npos) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, Iperf2Rejects,
    ::testing::Values(
        BadText{"", 1, "empty"}, BadText{"hello\nworld\n", 1, "not iperf2"},
        BadText{"Client connecting to 1.2.3.4, TCP port 5001\n[  1] local x\n", 2, "truncated"},
        BadText{"Client connecting to h, TCP port 5001\n[  1] 0.0-10.0 sec  11.0 Gallons  9 "
                "Gbits/sec\n",
                2, "transfer"},
        BadText{"Client connecting to h, TCP port 5001\n[  1] 0.0-10.0 sec  11.0 GBytes  9.42\n", 2,
                "rate"},
        BadText{"Client connecting to h, UDP port 5001\n[  1] 0.0-10.0 sec  1 MBytes  1 "
                "Mbits/sec  0.1 ms 5/\n",
                2, "total"},
        BadText{"Client connecting to h, UDP port 5001\n[  1] Sent many datagrams\n", 2,
                "Sent N datagrams"},
        BadText{std::string("Client connecting to h\0", 23), 1, "binary"}));

}  // namespace
}  // namespace np
