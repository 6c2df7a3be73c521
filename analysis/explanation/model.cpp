#include "analysis/explanation/model.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/explanation/format.hpp"
#include "analysis/readers/rate.hpp"
#include "common/errors.hpp"
#include "common/json_field.hpp"

namespace np {

int ip_header_bytes(IpVersion ip) {
    return ip == IpVersion::v4 ? kIpv4HeaderBytes : kIpv6HeaderBytes;
}

int tcp_mss_bytes(const ModelParams& p) {
    return p.mtu_bytes - ip_header_bytes(p.ip) - kTcpHeaderBytes -
           (p.tcp_timestamps ? kTcpTimestampOptionBytes : 0);
}

namespace {

// Wraps an IP packet (given as its parts) in an Ethernet frame on the wire.
Frame ethernet_frame(const ModelParams& p, const std::vector<FramePart>& ip_packet) {
    Frame f;
    f.parts.push_back({"preamble_sfd", kPreambleSfdBytes});
    f.parts.push_back({"mac_header", kMacHeaderBytes});
    if (p.vlan_tags > 0) f.parts.push_back({"vlan_tag", kVlanTagBytes * p.vlan_tags});
    int l2_bytes = kMacHeaderBytes + kVlanTagBytes * p.vlan_tags + kFcsBytes;
    for (const auto& part : ip_packet) {
        f.parts.push_back(part);
        l2_bytes += part.bytes;
    }
    if (l2_bytes < kMinFrameBytes) f.parts.push_back({"padding", kMinFrameBytes - l2_bytes});
    f.parts.push_back({"fcs", kFcsBytes});
    f.parts.push_back({"inter_frame_gap", kInterFrameGapBytes});
    return f;
}

void finish(Ceiling& c, const ModelParams& p) {
    c.wire_bytes_per_unit = 0;
    for (const auto& f : c.frames) c.wire_bytes_per_unit += f.wire_bytes();
    c.efficiency = static_cast<double>(c.payload_bytes_per_unit) / c.wire_bytes_per_unit;
    c.goodput_bps = p.link_bps * c.efficiency;
    c.units_per_second = p.link_bps / (8.0 * c.wire_bytes_per_unit);
    c.frames_per_second = c.units_per_second * static_cast<double>(c.frames.size());
}

}  // namespace

int Frame::wire_bytes() const {
    int n = 0;
    for (const auto& part : parts) n += part.bytes;
    return n;
}

int Frame::payload_bytes() const {
    return bytes_of("payload");
}

int Frame::bytes_of(const std::string& name) const {
    int n = 0;
    for (const auto& part : parts)
        if (part.name == name) n += part.bytes;
    return n;
}

double Ceiling::wire_bps_for_payload(double payload_bps) const {
    return payload_bps * wire_bytes_per_unit / payload_bytes_per_unit;
}

std::optional<IpVersion> ip_version_of_address(std::string_view address) {
    if (address.size() > 2 && address.front() == '[' && address.back() == ']')
        address = address.substr(1, address.size() - 2);
    address = address.substr(0, address.find('%'));
    const std::string a(address);
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(AF_INET, a.c_str(), buf) == 1) return IpVersion::v4;
    if (inet_pton(AF_INET6, a.c_str(), buf) != 1) return std::nullopt;
    const auto* v6 = reinterpret_cast<const in6_addr*>(buf);
    return IN6_IS_ADDR_V4MAPPED(v6) ? IpVersion::v4 : IpVersion::v6;
}

int max_udp_payload_bytes(IpVersion ip) {
    // The IPv4 total length covers its header; the IPv6 payload length does not.
    return ip == IpVersion::v4 ? 65535 - kIpv4HeaderBytes - kUdpHeaderBytes
                               : 65535 - kUdpHeaderBytes;
}

void validate(const ModelParams& p) {
    if (!(p.link_bps >= kMinLinkBps && p.link_bps <= kMaxLinkBps)) {
        throw InputError("link", fmt::format("{} is outside the link rates accepted, 10M to 400G",
                                             format_link_rate(p.link_bps)));
    }
    // IPv4 requires every link to carry 68 bytes; IPv6 requires 1280.
    const int min_mtu = p.ip == IpVersion::v4 ? 68 : 1280;
    if (p.mtu_bytes < min_mtu || p.mtu_bytes > 65535) {
        throw InputError("mtu", fmt::format("{} is out of range; accepted {}..65535{}", p.mtu_bytes,
                                            min_mtu, p.ip == IpVersion::v6 ? " for IPv6" : ""));
    }
    if (p.vlan_tags < 0 || p.vlan_tags > 2) {
        throw InputError("vlan",
                         fmt::format("{} is out of range; accepted 0..2 802.1Q tags", p.vlan_tags));
    }
    const int max_payload = max_udp_payload_bytes(p.ip);
    if (p.udp_payload_bytes < 1 || p.udp_payload_bytes > max_payload) {
        throw InputError(
            "udp-payload",
            fmt::format("{} is out of range; accepted 1..{} bytes for {}", p.udp_payload_bytes,
                        max_payload, p.ip == IpVersion::v4 ? "IPv4" : "IPv6"));
    }
}

Ceiling compute_tcp_ceiling(const ModelParams& p) {
    Ceiling c;
    c.transport = Transport::tcp;
    const int options = p.tcp_timestamps ? kTcpTimestampOptionBytes : 0;
    const int mss = tcp_mss_bytes(p);
    if (mss <= 0)
        throw InputError("mtu", fmt::format("MTU {} leaves no room for TCP data", p.mtu_bytes));
    c.payload_bytes_per_unit = mss;
    std::vector<FramePart> packet{{"ip_header", ip_header_bytes(p.ip)},
                                  {"tcp_header", kTcpHeaderBytes}};
    if (options) packet.push_back({"tcp_timestamps", options});
    packet.push_back({"payload", mss});
    c.frames.push_back(ethernet_frame(p, packet));
    finish(c, p);
    return c;
}

Ceiling compute_udp_ceiling(const ModelParams& p) {
    Ceiling c;
    c.transport = Transport::udp;
    c.payload_bytes_per_unit = p.udp_payload_bytes;
    const int ip_hdr = ip_header_bytes(p.ip);
    const int l4_bytes = kUdpHeaderBytes + p.udp_payload_bytes;  // what IP has to carry
    if (ip_hdr + l4_bytes <= p.mtu_bytes) {
        c.frames.push_back(ethernet_frame(p, {{"ip_header", ip_hdr},
                                              {"udp_header", kUdpHeaderBytes},
                                              {"payload", p.udp_payload_bytes}}));
    } else {
        // IP fragmentation: every fragment but the last carries a multiple of 8 bytes of the
        // UDP datagram; only the first carries the UDP header. IPv6 adds a fragment header.
        const int frag_hdr = p.ip == IpVersion::v6 ? kIpv6FragmentHeaderBytes : 0;
        const int per_fragment = (p.mtu_bytes - ip_hdr - frag_hdr) / 8 * 8;
        int offset = 0;
        while (offset < l4_bytes) {
            const int chunk = std::min(per_fragment, l4_bytes - offset);
            std::vector<FramePart> packet{{"ip_header", ip_hdr}};
            if (frag_hdr) packet.push_back({"ipv6_fragment_header", frag_hdr});
            int data = chunk;
            if (offset == 0) {
                packet.push_back({"udp_header", kUdpHeaderBytes});
                data -= kUdpHeaderBytes;
            }
            packet.push_back({"payload", data});
            c.frames.push_back(ethernet_frame(p, packet));
            offset += chunk;
        }
    }
    finish(c, p);
    return c;
}

Model compute_model(const ModelParams& p) {
    validate(p);
    return Model{p, compute_tcp_ceiling(p), compute_udp_ceiling(p)};
}

std::string describe_overhead(const Ceiling& c) {
    int framing = 0, vlan = 0, ip = 0, l4 = 0, options = 0, padding = 0;
    for (const auto& f : c.frames) {
        for (const auto& part : f.parts) {
            if (part.name == "preamble_sfd" || part.name == "mac_header" || part.name == "fcs" ||
                part.name == "inter_frame_gap") {
                framing += part.bytes;
            } else if (part.name == "vlan_tag") {
                vlan += part.bytes;
            } else if (part.name == "ip_header" || part.name == "ipv6_fragment_header") {
                ip += part.bytes;
            } else if (part.name == "tcp_header" || part.name == "udp_header") {
                l4 += part.bytes;
            } else if (part.name == "tcp_timestamps") {
                options += part.bytes;
            } else if (part.name == "padding") {
                padding += part.bytes;
            }
        }
    }
    const size_t n = c.frames.size();
    std::string s = fmt::format("of every {} bytes on the wire, {} carry data",
                                c.wire_bytes_per_unit, c.payload_bytes_per_unit);
    if (n > 1)
        s += fmt::format(" (one {}-byte datagram, IP-fragmented into {} frames)",
                         c.payload_bytes_per_unit, n);
    s += fmt::format(
        ": {} Ethernet framing ({} preamble+SFD, {} MAC header, {} FCS, {} inter-frame gap{})",
        framing, kPreambleSfdBytes * n, kMacHeaderBytes * n, kFcsBytes * n, kInterFrameGapBytes * n,
        n > 1 ? ", per frame" : "");
    if (vlan) s += fmt::format(", {} 802.1Q", vlan);
    bool v6 = false;
    for (const auto& f : c.frames) v6 = v6 || f.bytes_of("ip_header") == kIpv6HeaderBytes;
    s += fmt::format(", {} {}", ip, v6 ? "IPv6" : "IP");
    s += fmt::format(", {} {}", l4, c.transport == Transport::tcp ? "TCP" : "UDP");
    if (options) s += fmt::format(", {} TCP timestamps", options);
    if (padding) s += fmt::format(", {} padding to the 64-byte minimum frame", padding);
    return s;
}

nlohmann::json to_json(const Ceiling& c) {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : c.frames) {
        nlohmann::json parts = nlohmann::json::array();
        for (const auto& part : f.parts)
            parts.push_back({{"part", part.name}, {"bytes", part.bytes}});
        frames.push_back({{"wire_bytes", f.wire_bytes()},
                          {"payload_bytes", f.payload_bytes()},
                          {"parts", parts}});
    }
    return {
        {"payload_bytes_per_unit", c.payload_bytes_per_unit},
        {"wire_bytes_per_unit", c.wire_bytes_per_unit},
        {"frames_per_unit", c.frames.size()},
        {"efficiency_pct", c.efficiency * 100.0},
        {"goodput_ceiling_mbps", c.goodput_bps / 1e6},
        {"frames_per_second", c.frames_per_second},
        {"units_per_second", c.units_per_second},
        {"fragmented", c.fragmented()},
        {"frames", frames},
        {"overhead", describe_overhead(c)},
        {"transport", c.transport == Transport::tcp ? "tcp" : "udp"},
    };
}

Ceiling parse_ceiling(const JsonField& j) {
    Ceiling c;
    const std::string transport = j.at("transport").str();
    if (transport != "tcp" && transport != "udp") j.at("transport").fail("is not tcp or udp");
    c.transport = transport == "tcp" ? Transport::tcp : Transport::udp;
    const JsonField frames = j.at("frames");
    for (size_t i = 0; i < frames.array_size(); ++i) {
        Frame f;
        const JsonField parts = frames.at(i).at("parts");
        for (size_t k = 0; k < parts.array_size(); ++k) {
            const uint64_t bytes = parts.at(k).at("bytes").u64();
            if (bytes > 65535) parts.at(k).at("bytes").fail("is more than a frame holds");
            f.parts.push_back({parts.at(k).at("part").str(), static_cast<int>(bytes)});
        }
        c.frames.push_back(std::move(f));
    }
    if (c.frames.empty()) frames.fail("holds no frame");
    for (const auto& f : c.frames) {
        c.payload_bytes_per_unit += f.payload_bytes();
        c.wire_bytes_per_unit += f.wire_bytes();
    }
    if (c.wire_bytes_per_unit <= 0) frames.fail("holds no byte on the wire");
    c.efficiency = double(c.payload_bytes_per_unit) / c.wire_bytes_per_unit;
    c.goodput_bps = j.at("goodput_ceiling_mbps").number() * 1e6;
    if (!(c.goodput_bps > 0)) j.at("goodput_ceiling_mbps").fail("expected a positive number");
    c.frames_per_second = j.at("frames_per_second").number();
    c.units_per_second = j.at("units_per_second").number();
    return c;
}

nlohmann::json to_json(const Model& m) {
    return {
        {"link_mbps", m.params.link_bps / 1e6},
        {"mtu_bytes", m.params.mtu_bytes},
        {"vlan_tags", m.params.vlan_tags},
        {"ip_version", m.params.ip == IpVersion::v4 ? 4 : 6},
        {"tcp_timestamps", m.params.tcp_timestamps},
        {"udp_payload_bytes", m.params.udp_payload_bytes},
        {"tcp", to_json(m.tcp)},
        {"udp", to_json(m.udp)},
    };
}

std::optional<Model> model_for(const ThroughputTest& t, double link_bps,
                               std::optional<int> nic_mtu) {
    ModelParams p;
    p.link_bps = link_bps;
    if (t.pmtu_bytes && *t.pmtu_bytes >= 576 && *t.pmtu_bytes <= 65535)
        p.mtu_bytes = *t.pmtu_bytes;
    else if (nic_mtu)
        p.mtu_bytes = *nic_mtu;
    // The family of the address the client connected to; a host name leaves IPv4.
    if (const auto ip = ip_version_of_address(t.server_host)) p.ip = *ip;
    if (t.mss_bytes) {
        // Linux's MSS is MTU − 40 − 12 with timestamps over IPv4 (− 60 − 12 over IPv6); 1460
        // at MTU 1500 means without.
        const int headers = ip_header_bytes(p.ip) + kTcpHeaderBytes;
        p.tcp_timestamps = p.mtu_bytes - headers - *t.mss_bytes >= kTcpTimestampOptionBytes;
        // A TCP segment carries the MSS, which the peer may hold below the local path MTU (a
        // 9000-byte MTU talking to a 1500-byte one): model the frames that were sent.
        const int sent_mtu =
            *t.mss_bytes + headers + (p.tcp_timestamps ? kTcpTimestampOptionBytes : 0);
        if (t.transport == Transport::tcp && sent_mtu >= 576 && sent_mtu < p.mtu_bytes)
            p.mtu_bytes = sent_mtu;
    }
    if (t.transport == Transport::udp && t.payload_bytes) p.udp_payload_bytes = *t.payload_bytes;
    try {
        return compute_model(p);
    } catch (const std::exception&) {
        return std::nullopt;  // e.g. a datagram size the model does not accept
    }
}

}  // namespace np
