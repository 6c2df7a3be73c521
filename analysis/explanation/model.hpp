#pragma once
// Header-overhead model: how many bytes on an Ethernet wire it takes to carry a byte of TCP or
// UDP payload, and so the goodput ceiling of a link. Encoding and FEC (8b/10b, 64b/66b, RS-FEC)
// sit below the MAC and do not change its data rate, so the nominal rate is the MAC rate.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/readers/measurement.hpp"

namespace np {

class JsonField;  // common/json_field.hpp

// Per-frame constants of IEEE 802.3 and the IP/L4 headers (bytes).
inline constexpr int kPreambleSfdBytes = 8;
inline constexpr int kMacHeaderBytes = 14;
inline constexpr int kVlanTagBytes = 4;
inline constexpr int kFcsBytes = 4;
inline constexpr int kInterFrameGapBytes = 12;
inline constexpr int kMinFrameBytes = 64;  // MAC header .. FCS, padded up to this
inline constexpr int kIpv4HeaderBytes = 20;
inline constexpr int kIpv6HeaderBytes = 40;
inline constexpr int kIpv6FragmentHeaderBytes = 8;
inline constexpr int kTcpHeaderBytes = 20;
inline constexpr int kTcpTimestampOptionBytes = 12;  // 10 + 2 NOP, Linux's default
inline constexpr int kUdpHeaderBytes = 8;
// Bytes a frame occupies on the wire beyond the L2 frame: preamble+SFD, inter-frame gap.
inline constexpr int kL1OverheadBytes = kPreambleSfdBytes + kInterFrameGapBytes;

struct ModelParams {
    double link_bps = 1e9;
    int mtu_bytes = 1500;
    int vlan_tags = 0;
    IpVersion ip = IpVersion::v4;
    bool tcp_timestamps = true;
    // iperf3 >= 3.1.5 sizes datagrams from the control connection's MSS (1448 on Linux with
    // timestamps); iperf2 sends 1470.
    int udp_payload_bytes = 1448;
};

// Throws InputError naming the field ("link", "mtu", "vlan", "udp_payload") when out of range.
void validate(const ModelParams& p);

// The IP version of an address as a tool printed or a user typed it ("198.18.0.1",
// "2001:2::1", "[2001:2::1]", "fe80::1%eth1"); an IPv4-mapped IPv6 address ("::ffff:198.18.0.1",
// how a dual-stack server prints an IPv4 peer) is IPv4. Empty for a host name or anything else.
std::optional<IpVersion> ip_version_of_address(std::string_view address);

// The bytes of an IP header of this version (20 or 40).
int ip_header_bytes(IpVersion ip);
// A full-sized TCP segment's payload: MTU - IP - TCP - options (the MSS Linux uses). Also what
// iperf3 (3.1.5+) sizes its UDP datagrams by. May be <= 0 for a tiny MTU.
int tcp_mss_bytes(const ModelParams& p);

// Largest UDP payload one IP datagram can carry (65535 minus IP and UDP headers).
int max_udp_payload_bytes(IpVersion ip);

struct FramePart {
    std::string name;  // preamble_sfd, mac_header, vlan_tag, ip_header, ipv6_fragment_header,
                       // tcp_header, tcp_timestamps, udp_header, payload, padding, fcs,
                       // inter_frame_gap
    int bytes = 0;
};

struct Frame {
    std::vector<FramePart> parts;
    int wire_bytes() const;
    int payload_bytes() const;
    int bytes_of(const std::string& name) const;
};

// The unit the application hands to the stack (a TCP segment of MSS bytes, or one UDP
// datagram, which may be IP-fragmented into several frames) and what it costs on the wire.
struct Ceiling {
    Transport transport = Transport::tcp;
    int payload_bytes_per_unit = 0;  // MSS for TCP, datagram payload for UDP
    std::vector<Frame> frames;       // one per frame the unit takes on the wire
    int wire_bytes_per_unit = 0;
    double efficiency = 0;  // payload / wire bytes
    double goodput_bps = 0;
    double frames_per_second = 0;
    double units_per_second = 0;  // segments/s or datagrams/s at the ceiling

    bool fragmented() const { return frames.size() > 1; }
    // Wire bit rate needed to move `payload_bps` of payload in units of this shape.
    double wire_bps_for_payload(double payload_bps) const;
};

struct Model {
    ModelParams params;
    Ceiling tcp;
    Ceiling udp;
};

// Validates, then computes both ceilings.
Model compute_model(const ModelParams& p);
Ceiling compute_tcp_ceiling(const ModelParams& p);
Ceiling compute_udp_ceiling(const ModelParams& p);

// "of every 1538 bytes on the wire, 1448 carry data: 38 Ethernet framing (…), 20 IP, 20 TCP,
// 12 TCP timestamps" — the sentence a student reads.
std::string describe_overhead(const Ceiling& c);

// The model as JSON, units in key names (documented in docs/commands.md, "model").
nlohmann::json to_json(const Model& m);
// One ceiling as JSON (the model's "tcp" and "udp", a verdict's "ceiling"), and back: the
// frames as written, the per-unit sums from them; throws InputError naming the key.
nlohmann::json to_json(const Ceiling& c);
Ceiling parse_ceiling(const JsonField& j);

// The model for one test on the given link: MTU from the path MTU iperf3 saw, else the smaller
// of the traced data NICs' (`nic_mtu`), else 1500; TCP timestamps inferred from the MSS, the
// test's UDP datagram size.
std::optional<Model> model_for(const ThroughputTest& t, double link_bps,
                               std::optional<int> nic_mtu = std::nullopt);

}  // namespace np
