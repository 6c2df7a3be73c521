// The reference ceilings are derived here from first principles — bytes of payload over bytes
// on the wire, with every header written out — not by calling the model's own formula.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/explanation/model.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

// 8 preamble+SFD, 14 MAC, 4 FCS, 12 inter-frame gap.
constexpr double kEthernetOnWire = 8 + 14 + 4 + 12;

double mbps(double payload, double wire, double link_bps) {
    return payload / wire * link_bps / 1e6;
}

void expect_within_0_01_pct(double actual, double expected) {
    EXPECT_NEAR(actual, expected, expected * 1e-4)
        << "actual " << actual << " expected " << expected;
}

ModelParams link(double bps) {
    ModelParams p;
    p.link_bps = bps;
    return p;
}

TEST(Model, TcpAt1GWithTimestampsIs941_48) {
    // 1500 MTU - 20 IP - 20 TCP - 12 timestamps = 1448 bytes of data per 1538 on the wire.
    const double expected = mbps(1500 - 20 - 20 - 12, 1500 + kEthernetOnWire, 1e9);
    EXPECT_NEAR(expected, 941.48, 0.01);
    expect_within_0_01_pct(compute_model(link(1e9)).tcp.goodput_bps / 1e6, 941.48);
}

TEST(Model, TcpAt1GWithoutTimestampsIs949_28) {
    auto p = link(1e9);
    p.tcp_timestamps = false;
    EXPECT_NEAR(mbps(1460, 1538, 1e9), 949.28, 0.01);
    expect_within_0_01_pct(compute_model(p).tcp.goodput_bps / 1e6, 949.28);
}

TEST(Model, TcpAt10GIs9414_8) {
    expect_within_0_01_pct(compute_model(link(10e9)).tcp.goodput_bps / 1e6, 9414.8);
}

TEST(Model, UdpAt1GForCommonDatagramSizes) {
    // UDP payload P rides in P + 8 UDP + 20 IP + 38 Ethernet bytes.
    const std::pair<int, double> cases[] = {
        {1448, 956.41}, {1460, 956.75}, {1470, 957.03}, {1472, 957.09}};
    for (auto [payload, reference] : cases) {
        auto p = link(1e9);
        p.udp_payload_bytes = payload;
        EXPECT_NEAR(mbps(payload, payload + 8 + 20 + kEthernetOnWire, 1e9), reference, 0.01);
        const auto m = compute_model(p);
        expect_within_0_01_pct(m.udp.goodput_bps / 1e6, reference);
        EXPECT_FALSE(m.udp.fragmented()) << payload;
    }
}

TEST(Model, TcpJumboFramesMtu9000Is990_04) {
    auto p = link(1e9);
    p.mtu_bytes = 9000;
    expect_within_0_01_pct(compute_model(p).tcp.goodput_bps / 1e6, 990.04);
}

TEST(Model, OneVlanTagCostsFourBytesPerFrame) {
    auto p = link(1e9);
    p.vlan_tags = 1;
    const auto m = compute_model(p);
    expect_within_0_01_pct(m.tcp.goodput_bps / 1e6, 939.04);
    EXPECT_EQ(m.tcp.wire_bytes_per_unit, 1542);
}

TEST(Model, TcpOverIpv6WithTimestampsIs928_48) {
    auto p = link(1e9);
    p.ip = IpVersion::v6;
    const auto m = compute_model(p);
    expect_within_0_01_pct(m.tcp.goodput_bps / 1e6, 928.48);
    EXPECT_EQ(m.tcp.payload_bytes_per_unit, 1428);
}

TEST(Model, FrameBreakdownOfAFullTcpSegment) {
    const auto m = compute_model(link(1e9));
    ASSERT_EQ(m.tcp.frames.size(), 1u);
    const Frame& f = m.tcp.frames[0];
    EXPECT_EQ(f.wire_bytes(), 1538);
    EXPECT_EQ(f.bytes_of("preamble_sfd"), 8);
    EXPECT_EQ(f.bytes_of("mac_header"), 14);
    EXPECT_EQ(f.bytes_of("ip_header"), 20);
    EXPECT_EQ(f.bytes_of("tcp_header"), 20);
    EXPECT_EQ(f.bytes_of("tcp_timestamps"), 12);
    EXPECT_EQ(f.payload_bytes(), 1448);
    EXPECT_EQ(f.bytes_of("fcs"), 4);
    EXPECT_EQ(f.bytes_of("inter_frame_gap"), 12);
    EXPECT_EQ(f.bytes_of("padding"), 0);
}

TEST(Model, FramesPerSecondAt1GIsLinkOverWireBits) {
    const auto m = compute_model(link(1e9));
    EXPECT_NEAR(m.tcp.frames_per_second, 1e9 / (1538 * 8.0), 0.5);  // 81,274 frames/s
    EXPECT_NEAR(m.udp.frames_per_second, 1e9 / (1514 * 8.0), 0.5);
}

TEST(Model, TinyDatagramsArePaddedToTheMinimumFrame) {
    auto p = link(1e9);
    p.udp_payload_bytes = 1;
    const auto m = compute_model(p);
    // 14 MAC + 20 IP + 8 UDP + 1 + 4 FCS = 47 < 64: 17 bytes of padding, 84 on the wire.
    EXPECT_EQ(m.udp.frames[0].bytes_of("padding"), 17);
    EXPECT_EQ(m.udp.wire_bytes_per_unit, 84);
}

TEST(Model, OversizedUdpPayloadCountsEveryIpFragment) {
    auto p = link(1e9);
    p.udp_payload_bytes = 8000;  // 8008 bytes of UDP datagram behind 20-byte IPv4 headers
    const auto m = compute_model(p);
    // Each fragment carries at most (1500 - 20) rounded down to 8 = 1480 bytes:
    // 8008 = 5 * 1480 + 608 -> 6 frames, each with 20 IP + 38 Ethernet bytes.
    ASSERT_EQ(m.udp.frames.size(), 6u);
    EXPECT_TRUE(m.udp.fragmented());
    EXPECT_EQ(m.udp.wire_bytes_per_unit, 8008 + 6 * (20 + 38));
    EXPECT_EQ(m.udp.frames[0].bytes_of("udp_header"), 8);
    EXPECT_EQ(m.udp.frames[1].bytes_of("udp_header"), 0);
    int payload = 0;
    for (const auto& f : m.udp.frames) payload += f.payload_bytes();
    EXPECT_EQ(payload, 8000);
    EXPECT_NEAR(m.udp.goodput_bps / 1e6, mbps(8000, 8008 + 6 * 58, 1e9), 1e-9);
}

TEST(Model, Ipv6FragmentsCarryAFragmentHeader) {
    auto p = link(1e9);
    p.ip = IpVersion::v6;
    p.udp_payload_bytes = 3000;  // 3008 bytes; (1500-40-8)/8*8 = 1448 per fragment -> 3 frames
    const auto m = compute_model(p);
    ASSERT_EQ(m.udp.frames.size(), 3u);
    EXPECT_EQ(m.udp.wire_bytes_per_unit, 3008 + 3 * (40 + 8 + 38));
}

TEST(Model, LargestDatagramFitsOneIpv4Packet) {
    auto p = link(1e9);
    p.udp_payload_bytes = 65507;
    EXPECT_NO_THROW(compute_model(p));
    p.udp_payload_bytes = 65508;
    EXPECT_THROW(compute_model(p), InputError);
}

TEST(Model, OfferedPayloadRateNeedsMoreOnTheWire) {
    // 1 Gbit/s of 1448-byte payloads needs 1514/1448 of that on the wire: ~1.046 Gbit/s.
    const auto m = compute_model(link(1e9));
    EXPECT_NEAR(m.udp.wire_bps_for_payload(1e9) / 1e9, 1514.0 / 1448.0, 1e-12);
    EXPECT_NEAR(m.udp.wire_bps_for_payload(1e9) / 1e9, 1.046, 0.0005);
}

TEST(Model, RejectsOutOfRangeInputNamingTheField) {
    auto expect_field = [](ModelParams p, const std::string& field) {
        try {
            compute_model(p);
            FAIL() << "accepted " << field;
        } catch (const InputError& e) {
            EXPECT_EQ(e.field(), field);
        }
    };
    auto p = link(1e9);
    p.mtu_bytes = 40;
    expect_field(p, "mtu");
    p = link(1e9);
    p.mtu_bytes = 65536;
    expect_field(p, "mtu");
    p = link(1e9);
    p.ip = IpVersion::v6;
    p.mtu_bytes = 1279;
    expect_field(p, "mtu");
    p = link(1e9);
    p.vlan_tags = 3;
    expect_field(p, "vlan");
    p = link(1e9);
    p.vlan_tags = -1;
    expect_field(p, "vlan");
    p = link(1e9);
    p.udp_payload_bytes = 70000;
    expect_field(p, "udp-payload");
    p = link(1e9);
    p.udp_payload_bytes = 0;
    expect_field(p, "udp-payload");
    expect_field(link(1e6), "link");
    expect_field(link(1e12), "link");
}

TEST(Model, DescribesTheOverheadInOneSentence) {
    const auto m = compute_model(link(1e9));
    EXPECT_EQ(describe_overhead(m.tcp),
              "of every 1538 bytes on the wire, 1448 carry data: 38 Ethernet framing (8 "
              "preamble+SFD, 14 MAC header, 4 FCS, 12 inter-frame gap), 20 IP, 20 TCP, 12 TCP "
              "timestamps");
}

TEST(Model, JsonCarriesUnitsInKeyNames) {
    const auto j = to_json(compute_model(link(10e9)));
    EXPECT_NEAR(j["tcp"]["goodput_ceiling_mbps"].get<double>(), 9414.8,
                9414.8e-4);  // within 0.01 %
    EXPECT_EQ(j["tcp"]["wire_bytes_per_unit"].get<int>(), 1538);
    EXPECT_EQ(j["mtu_bytes"].get<int>(), 1500);
    EXPECT_EQ(j["udp"]["frames"][0]["parts"].size(),
              7u);  // preamble, MAC, IP, UDP, payload, FCS, gap
}

}  // namespace
}  // namespace np
