#include "analysis/explanation/preflight.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/model.hpp"

namespace np {
namespace {

std::string speed_text(const NodeFacts& n) {
    return n.speed_mbps ? fmt::format("{} Mb/s", *n.speed_mbps) : std::string("unknown speed");
}

// A finding about a node: its name first in the evidence.
Finding node_finding(std::string_view code, const std::string& node) {
    Finding f = make_finding(code);
    f.evidence = {{"node", node}};
    return f;
}

// IMAGE_NOT_BOOTED: the node runs the PXE stage image, not the one loaded.
Finding image_not_booted(const NodeFacts& n) {
    Finding f = node_finding("IMAGE_NOT_BOOTED", n.node);
    f.title = fmt::format("{} did not boot a real image", n.node);
    f.detail = fmt::format(
        "{} has no {}: it is running the PXE stage image, not the one you loaded, so "
        "nothing measured there would mean anything.",
        n.node, n.image_marker);
    f.evidence.emplace_back("image_marker", n.image_marker);
    f.next_step = fmt::format("omf tell offh -t {0}, wait 20 s, omf tell on -t {0}", n.node);
    return f;
}

// DATA_IFACE_MISSING: the data iface from params is not on the node, with the ones it has.
Finding data_iface_missing(const NodeFacts& n) {
    Finding f = node_finding("DATA_IFACE_MISSING", n.node);
    f.title = fmt::format("{} has no interface {}", n.node, n.iface);
    const std::string ifaces = fmt::format("{}", fmt::join(n.ifaces, ", "));
    f.detail = fmt::format("The data interface {} from params does not exist on {}; it has: {}.",
                           n.iface, n.node, n.ifaces.empty() ? "none" : ifaces);
    f.evidence.emplace_back("data_iface", n.iface);
    f.evidence.emplace_back("ifaces", ifaces);
    f.next_step = "Set np_data_iface in network-performance_params.yml to the node's data port.";
    return f;
}

// IPV6_DISABLED: on the data iface, or in the whole kernel.
Finding ipv6_disabled(const NodeFacts& n) {
    Finding f = node_finding("IPV6_DISABLED", n.node);
    f.title = fmt::format("IPv6 is disabled on {}{}", n.kernel_without_ipv6 ? "" : n.iface + " of ",
                          n.node);
    f.detail = n.kernel_without_ipv6
                   ? fmt::format(
                         "{}'s kernel runs without IPv6 (booted with ipv6.disable=1: it has no "
                         "/proc/sys/net/ipv6), so {} cannot take the data address {}.",
                         n.node, n.iface, n.data_ip)
                   : fmt::format(
                         "{} has net.ipv6.conf.{}.disable_ipv6 = 1, so {} cannot take the data "
                         "address {} (the kernel refuses it: \"Permission denied\").",
                         n.node, n.iface, n.iface, n.data_ip);
    f.evidence.emplace_back("data_iface", n.iface);
    f.evidence.emplace_back("data_ip", n.data_ip);
    f.next_step =
        n.kernel_without_ipv6
            ? "Boot the node without ipv6.disable=1, or give the run IPv4 data addresses "
              "(np_server_ip, np_client_ip)."
            : fmt::format(
                  "Enable IPv6 on the data port (sysctl -w net.ipv6.conf.{}.disable_ipv6=0 "
                  "on {}), or give the run IPv4 data addresses (np_server_ip, "
                  "np_client_ip).",
                  n.iface, n.node);
    return f;
}

// IPERF3_MISSING: no iperf3 on the node's PATH.
Finding iperf3_missing(const NodeFacts& n) {
    Finding f = node_finding("IPERF3_MISSING", n.node);
    f.title = fmt::format("iperf3 is not installed on {}", n.node);
    f.detail = fmt::format(
        "{} has no iperf3 on its PATH, so it cannot take part in the throughput tests.", n.node);
    f.next_step = fmt::format("ssh root@{} apt-get install -y iperf3", n.node);
    return f;
}

// CONGESTION_CONTROL_MISSING: the node's kernel lacks the congestion control the run asks for.
Finding congestion_control_missing(const NodeFacts& n) {
    Finding f = node_finding("CONGESTION_CONTROL_MISSING", n.node);
    f.title = fmt::format("{}'s kernel has no TCP congestion control '{}'", n.node, n.congestion);
    f.detail = fmt::format(
        "The TCP test is to run with -C {} (np_tcp_congestion), which both ends set on their "
        "socket; {} has it neither loaded (it has: {}) nor as a module to load (tcp_{}), so "
        "iperf3 would fail there.",
        n.congestion, n.node,
        n.congestion_available.empty() ? "none listed" : n.congestion_available, n.congestion);
    f.evidence.emplace_back("congestion", n.congestion);
    f.evidence.emplace_back("available", n.congestion_available);
    f.next_step = fmt::format(
        "Choose one {} has (np_tcp_congestion, run -C), or install the kernel's module for "
        "it there.",
        n.node);
    return f;
}

// PING_MISSING: no ping on the client's PATH.
Finding ping_missing(const NodeFacts& n) {
    Finding f = node_finding("PING_MISSING", n.node);
    f.title = fmt::format("ping is not installed on {}", n.node);
    f.detail = fmt::format("{} has no ping on its PATH for the latency phase.", n.node);
    f.next_step = fmt::format("ssh root@{} apt-get install -y iputils-ping", n.node);
    return f;
}

}  // namespace

std::vector<Finding> node_findings(const NodeFacts& n) {
    std::vector<Finding> out;
    if (!n.image_marker_present) out.push_back(image_not_booted(n));
    if (!n.iface_exists) out.push_back(data_iface_missing(n));
    if (n.iface_exists && (n.ipv6_disabled || n.kernel_without_ipv6))
        out.push_back(ipv6_disabled(n));
    if (!n.iperf3_present) out.push_back(iperf3_missing(n));
    if (!n.congestion.empty() && !n.congestion_present)
        out.push_back(congestion_control_missing(n));
    if (!n.ping_present && n.role == "client") out.push_back(ping_missing(n));
    return out;
}

std::vector<Finding> carrier_findings(const NodeFacts& n) {
    if (!n.carrier || *n.carrier) return {};
    const std::string others =
        n.ports_with_carrier.empty()
            ? std::string("no other port has carrier either")
            : fmt::format("ports with carrier: {}", fmt::join(n.ports_with_carrier, ", "));
    Finding f = node_finding("NO_CARRIER", n.node);
    f.title = fmt::format("No carrier on {} of {}", n.iface, n.node);
    f.detail = fmt::format(
        "{} is up on {} but has no carrier: no cable or switch port behind it, or the wrong port "
        "for this row ({}).",
        n.iface, n.node, others);
    f.evidence.emplace_back("data_iface", n.iface);
    f.evidence.emplace_back("ports_with_carrier",
                            fmt::format("{}", fmt::join(n.ports_with_carrier, ", ")));
    f.next_step =
        "Check `ip -br link` on the node and set np_data_iface to the port on the shared data "
        "switch (enp0s25 on grid row 1).";
    return {f};
}

std::vector<Finding> link_findings(const NodeFacts& a, const NodeFacts& b) {
    std::vector<Finding> out;
    const auto number_or_unknown = [](const std::optional<int>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json("unknown");
    };
    Finding facts = make_finding("LINK_FACTS");
    facts.title = "Data links as the NICs report them";
    facts.detail = fmt::format(
        "{}: {} {}, {} duplex, MTU {}, driver {}; {}: {} {}, {} duplex, MTU {}, driver {}.", a.node,
        a.iface, speed_text(a), a.duplex.empty() ? "unknown" : a.duplex, a.mtu_bytes.value_or(0),
        a.driver.empty() ? "unknown" : a.driver, b.node, b.iface, speed_text(b),
        b.duplex.empty() ? "unknown" : b.duplex, b.mtu_bytes.value_or(0),
        b.driver.empty() ? "unknown" : b.driver);
    facts.evidence = {{a.node + ".speed_mbps", number_or_unknown(a.speed_mbps)},
                      {b.node + ".speed_mbps", number_or_unknown(b.speed_mbps)},
                      {a.node + ".mtu_bytes", a.mtu_bytes.value_or(0)},
                      {b.node + ".mtu_bytes", b.mtu_bytes.value_or(0)}};
    out.push_back(std::move(facts));
    for (const NodeFacts* n : {&a, &b}) {
        if (n->duplex != "half") continue;
        Finding f = node_finding("LINK_HALF_DUPLEX", n->node);
        f.title = fmt::format("{} on {} runs half duplex", n->iface, n->node);
        f.detail =
            "A half-duplex link shares its capacity between directions and collides; TCP with "
            "ACKs flowing back cannot reach the ceiling.";
        f.evidence.emplace_back("duplex", "half");
        f.next_step = "Check autonegotiation on the NIC and the switch port (ethtool).";
        out.push_back(std::move(f));
    }
    if (a.speed_mbps && b.speed_mbps && *a.speed_mbps != *b.speed_mbps) {
        Finding f = make_finding("LINK_SPEED_MISMATCH");
        f.title = "The two data links run at different speeds";
        f.detail = fmt::format("{} negotiated {} and {} {}: the path is bounded by the slower one.",
                               a.node, speed_text(a), b.node, speed_text(b));
        f.evidence = {{a.node + ".speed_mbps", *a.speed_mbps},
                      {b.node + ".speed_mbps", *b.speed_mbps}};
        f.next_step = "Check cabling and autonegotiation of the slower port.";
        out.push_back(std::move(f));
    }
    if (a.mtu_bytes && b.mtu_bytes && *a.mtu_bytes != *b.mtu_bytes) {
        Finding f = make_finding("MTU_MISMATCH");
        f.title = "The two data ports have different MTUs";
        f.detail = fmt::format(
            "{} has MTU {} and {} MTU {}: frames larger than the smaller MTU are dropped by the "
            "receiver or fragmented.",
            a.node, *a.mtu_bytes, b.node, *b.mtu_bytes);
        f.evidence = {{a.node + ".mtu_bytes", *a.mtu_bytes}, {b.node + ".mtu_bytes", *b.mtu_bytes}};
        f.next_step = "Set the same MTU on both data ports (ip link set dev IFACE mtu N).";
        out.push_back(std::move(f));
    }
    return out;
}

std::string resolution_of(const std::string& ip) {
    return ip_version_of_address(ip) == IpVersion::v6 ? "neighbour discovery" : "ARP";
}

std::string icmp_of(const std::string& ip) {
    return ip_version_of_address(ip) == IpVersion::v6 ? "ICMPv6" : "ICMP";
}

std::vector<Finding> dad_failed_findings(const std::string& node, const std::string& iface,
                                         const std::string& ip, bool server) {
    Finding f = make_finding("ADDRESS_CONFLICT");
    f.title = fmt::format("Another host holds {} on the data segment", ip);
    f.detail = fmt::format(
        "{} added {} to its {}, and duplicate address detection failed: another host on the "
        "segment answered for it, so the kernel marked it dadfailed and does not use it. The "
        "tests would measure the path to that host, or fail against it.",
        node, ip, iface);
    f.evidence = {{server ? "server_ip" : "client_ip", ip}, {"node", node}, {"dad", "dadfailed"}};
    f.next_step = fmt::format(
        "Find the host that holds {} (ip -6 neigh on the segment, the switch's MAC table) and "
        "take the address off it, or give the {} another address ({}).",
        ip, server ? "server" : "client", server ? "np_server_ip" : "np_client_ip");
    return {f};
}

std::vector<Finding> address_taken_findings(const std::string& answered_mac,
                                            const std::string& server_ip, const NodeFacts& a,
                                            const NodeFacts& b) {
    if (answered_mac.empty() || answered_mac == a.mac) return {};
    Finding f = make_finding("ADDRESS_CONFLICT");
    f.title = fmt::format("Another host answers for {} on the data segment", server_ip);
    f.detail = fmt::format(
        "Before {} took {} on its {}, {} asked for it on {} and {} answered: another host on the "
        "segment holds the server's address. Once both hold it, whichever answers first wins "
        "each {}, and the tests would measure the path to that host, or fail against it.",
        a.node, server_ip, a.iface, b.node, b.iface, answered_mac,
        ip_version_of_address(server_ip) == IpVersion::v6 ? "neighbour solicitation" : "ARP");
    f.evidence = {{"server_ip", server_ip}, {"answered_by_mac", answered_mac}};
    f.next_step = fmt::format(
        "Find the host with MAC {} (ip neigh on the segment, the switch's MAC table) and take "
        "{} off it, or give the server another address (np_server_ip).",
        answered_mac, server_ip);
    return {f};
}

std::vector<Finding> path_findings(const PathFacts& p, const NodeFacts& a, const NodeFacts& b) {
    // Whoever answered ping, the client's traffic goes to the MAC its neighbour table holds: a
    // host that is not the server's data port answers for the server's address.
    if (!p.neighbour_mac.empty() && !a.mac.empty() && p.neighbour_mac != a.mac) {
        Finding f = make_finding("ADDRESS_CONFLICT");
        f.title = fmt::format("Another host answers for {} on the data segment", p.server_ip);
        f.detail = fmt::format(
            "{}'s traffic to {} goes to {} (its neighbour table, {}), but {}'s {} is {}: another "
            "host on the segment holds the server's address and won {}{}. Every test would "
            "measure the path to that host, or fail against it.",
            b.node, p.server_ip, p.neighbour_mac, p.neighbour_state, a.node, a.iface, a.mac,
            resolution_of(p.server_ip), p.ping_answered ? ", and it answered ping" : "");
        f.evidence = {{"server_ip", p.server_ip},
                      {"answered_by_mac", p.neighbour_mac},
                      {"server_mac", a.mac},
                      {"neighbour_state", p.neighbour_state}};
        f.next_step = fmt::format(
            "Find the host with MAC {} (ip neigh on the segment, the switch's MAC table) and take "
            "{} off it, or give the server another address (np_server_ip).",
            p.neighbour_mac, p.server_ip);
        return {f};
    }
    if (p.ping_answered) return {};
    const bool arp_failed = p.neighbour_state.empty() || p.neighbour_state == "FAILED" ||
                            p.neighbour_state == "INCOMPLETE";
    const std::string state = p.neighbour_state.empty() ? "none" : p.neighbour_state;
    if (arp_failed) {
        Finding f = make_finding("DIFFERENT_SEGMENT");
        f.title = fmt::format("{}'s {} cannot reach {} on the data path", b.node, p.client_iface,
                              p.server_ip);
        f.detail = fmt::format(
            "{} for {} on {}'s {} went unanswered (neighbour state {}), while {} answers on its "
            "control network: the two data ports are on different segments (on grid row 1, "
            "enp3s0 lands on another segment than enp0s25).",
            resolution_of(p.server_ip), p.server_ip, b.node, p.client_iface, state, a.node);
        f.evidence = {{"client_iface", p.client_iface},
                      {"server_ip", p.server_ip},
                      {"neighbour_state", state}};
        f.next_step =
            "Use the port that shares the data switch on both nodes: set np_data_iface (enp0s25 "
            "on grid row 1).";
        return {f};
    }
    Finding f = make_finding("DATA_PATH_NO_ECHO");
    f.title = fmt::format("{} answers {} but not ping on the data path", a.node,
                          resolution_of(p.server_ip));
    f.detail = fmt::format(
        "{} resolved {} on {} (neighbour state {}) but got no echo reply: {} may be filtered "
        "on {}.",
        b.node, p.server_ip, p.client_iface, p.neighbour_state, icmp_of(p.server_ip), a.node);
    f.evidence = {{"server_ip", p.server_ip}, {"neighbour_state", p.neighbour_state}};
    f.next_step = "Check the firewall on the server node.";
    return {f};
}

}  // namespace np
