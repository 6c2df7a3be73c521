#include "analysis/preflight.hpp"

#include <fmt/format.h>

namespace np {
namespace {

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
    return out;
}

std::string speed_text(const NodeFacts& n) {
    return n.speed_mbps ? fmt::format("{} Mb/s", *n.speed_mbps) : std::string("unknown speed");
}

}  // namespace

std::vector<Finding> node_findings(const NodeFacts& n) {
    std::vector<Finding> out;
    if (!n.image_marker_present) {
        out.push_back({"IMAGE_NOT_BOOTED",
                       Severity::error,
                       fmt::format("{} did not boot a real image", n.node),
                       fmt::format("{} has no {}: it is running the PXE stage image, not the one "
                                   "you loaded, so nothing measured there would mean anything.",
                                   n.node, n.image_marker),
                       {{"node", n.node}, {"image_marker", n.image_marker}},
                       fmt::format("omf tell offh -t {0}, wait 20 s, omf tell on -t {0}", n.node)});
    }
    if (!n.iface_exists) {
        out.push_back(
            {"DATA_IFACE_MISSING",
             Severity::error,
             fmt::format("{} has no interface {}", n.node, n.iface),
             fmt::format("The data interface {} from params does not exist on {}; it has: {}.",
                         n.iface, n.node, n.ifaces.empty() ? "none" : join(n.ifaces)),
             {{"node", n.node}, {"data_iface", n.iface}, {"ifaces", join(n.ifaces)}},
             "Set np_data_iface in network-performance_params.yml to the node's data port."});
    }
    if (!n.iperf3_present) {
        out.push_back({"IPERF3_MISSING",
                       Severity::error,
                       fmt::format("iperf3 is not installed on {}", n.node),
                       fmt::format("{} has no iperf3 on its PATH, so it cannot take part in the "
                                   "throughput tests.",
                                   n.node),
                       {{"node", n.node}},
                       fmt::format("ssh root@{} apt-get install -y iperf3", n.node)});
    }
    if (!n.ping_present && n.role == "client") {
        out.push_back({"PING_MISSING",
                       Severity::error,
                       fmt::format("ping is not installed on {}", n.node),
                       fmt::format("{} has no ping on its PATH for the latency phase.", n.node),
                       {{"node", n.node}},
                       fmt::format("ssh root@{} apt-get install -y iputils-ping", n.node)});
    }
    return out;
}

std::vector<Finding> carrier_findings(const NodeFacts& n) {
    if (!n.carrier || *n.carrier) return {};
    const std::string others =
        n.ports_with_carrier.empty()
            ? std::string("no other port has carrier either")
            : fmt::format("ports with carrier: {}", join(n.ports_with_carrier));
    return {{"NO_CARRIER",
             Severity::error,
             fmt::format("No carrier on {} of {}", n.iface, n.node),
             fmt::format("{} is up on {} but has no carrier: no cable or switch port behind it, or "
                         "the wrong port for this row ({}).",
                         n.iface, n.node, others),
             {{"node", n.node},
              {"data_iface", n.iface},
              {"ports_with_carrier", join(n.ports_with_carrier)}},
             "Check `ip -br link` on the node and set np_data_iface to the port on the shared data "
             "switch (enp0s25 on grid row 1)."}};
}

std::vector<Finding> link_findings(const NodeFacts& a, const NodeFacts& b) {
    std::vector<Finding> out;
    out.push_back(
        {"LINK_FACTS",
         Severity::info,
         "Data links as the NICs report them",
         fmt::format("{}: {} {}, {} duplex, MTU {}, driver {}; {}: {} {}, {} duplex, MTU {}, "
                     "driver {}.",
                     a.node, a.iface, speed_text(a), a.duplex.empty() ? "unknown" : a.duplex,
                     a.mtu_bytes.value_or(0), a.driver.empty() ? "unknown" : a.driver, b.node,
                     b.iface, speed_text(b), b.duplex.empty() ? "unknown" : b.duplex,
                     b.mtu_bytes.value_or(0), b.driver.empty() ? "unknown" : b.driver),
         {{a.node + ".speed_mbps", a.speed_mbps ? std::to_string(*a.speed_mbps) : "unknown"},
          {b.node + ".speed_mbps", b.speed_mbps ? std::to_string(*b.speed_mbps) : "unknown"},
          {a.node + ".mtu_bytes", std::to_string(a.mtu_bytes.value_or(0))},
          {b.node + ".mtu_bytes", std::to_string(b.mtu_bytes.value_or(0))}},
         ""});
    for (const NodeFacts* n : {&a, &b}) {
        if (n->duplex == "half") {
            out.push_back(
                {"LINK_HALF_DUPLEX",
                 Severity::warn,
                 fmt::format("{} on {} runs half duplex", n->iface, n->node),
                 "A half-duplex link shares its capacity between directions and collides; "
                 "TCP with ACKs flowing back cannot reach the ceiling.",
                 {{"node", n->node}, {"duplex", "half"}},
                 "Check autonegotiation on the NIC and the switch port (ethtool)."});
        }
    }
    if (a.speed_mbps && b.speed_mbps && *a.speed_mbps != *b.speed_mbps) {
        out.push_back(
            {"LINK_SPEED_MISMATCH",
             Severity::warn,
             "The two data links run at different speeds",
             fmt::format("{} negotiated {} and {} {}: the path is bounded by the slower one.",
                         a.node, speed_text(a), b.node, speed_text(b)),
             {{a.node + ".speed_mbps", std::to_string(*a.speed_mbps)},
              {b.node + ".speed_mbps", std::to_string(*b.speed_mbps)}},
             "Check cabling and autonegotiation of the slower port."});
    }
    if (a.mtu_bytes && b.mtu_bytes && *a.mtu_bytes != *b.mtu_bytes) {
        out.push_back(
            {"MTU_MISMATCH",
             Severity::warn,
             "The two data ports have different MTUs",
             fmt::format("{} has MTU {} and {} MTU {}: frames larger than the smaller MTU are "
                         "dropped by the receiver or fragmented.",
                         a.node, *a.mtu_bytes, b.node, *b.mtu_bytes),
             {{a.node + ".mtu_bytes", std::to_string(*a.mtu_bytes)},
              {b.node + ".mtu_bytes", std::to_string(*b.mtu_bytes)}},
             "Set the same MTU on both data ports (ip link set dev IFACE mtu N)."});
    }
    return out;
}

std::vector<Finding> path_findings(const PathFacts& p, const NodeFacts& a, const NodeFacts& b) {
    if (p.ping_answered) return {};
    const bool arp_failed = p.neighbour_state.empty() || p.neighbour_state == "FAILED" ||
                            p.neighbour_state == "INCOMPLETE";
    if (arp_failed) {
        return {
            {"DIFFERENT_SEGMENT",
             Severity::error,
             fmt::format("{}'s {} cannot reach {} on the data path", b.node, p.client_iface,
                         p.server_ip),
             fmt::format("ARP for {} on {}'s {} went unanswered (neighbour state {}), while {} "
                         "answers on its control network: the two data ports are on different "
                         "segments (on grid row 1, enp3s0 lands on another segment than enp0s25).",
                         p.server_ip, b.node, p.client_iface,
                         p.neighbour_state.empty() ? "none" : p.neighbour_state, a.node),
             {{"client_iface", p.client_iface},
              {"server_ip", p.server_ip},
              {"neighbour_state", p.neighbour_state.empty() ? "none" : p.neighbour_state}},
             "Use the port that shares the data switch on both nodes: set np_data_iface (enp0s25 "
             "on grid row 1)."}};
    }
    return {
        {"DATA_PATH_NO_ECHO",
         Severity::warn,
         fmt::format("{} answers ARP but not ping on the data path", a.node),
         fmt::format("{} resolved {} on {} (neighbour state {}) but got no echo reply: ICMP may "
                     "be filtered on {}.",
                     b.node, p.server_ip, p.client_iface, p.neighbour_state, a.node),
         {{"server_ip", p.server_ip}, {"neighbour_state", p.neighbour_state}},
         "Check the firewall on the server node."}};
}

}  // namespace np
