#pragma once
// Preflight: what np-explain checks on both nodes before it changes anything, and then on the
// data path before it measures. The facts are gathered over SSH by src/experiment; the
// judgement — which findings they make — is here, so it is testable without nodes.
#include <optional>
#include <string>
#include <vector>

#include "analysis/explanation/finding.hpp"

namespace np {

struct NodeFacts {
    std::string node;   // as the user named it: node1-1
    std::string role;   // server (node A) or client (node B)
    std::string iface;  // the data iface from params
    std::string image_marker;
    bool image_marker_present = true;
    bool iface_exists = true;
    std::string mac;  // the data iface's MAC address (sysfs), lower case; empty when unread
    std::vector<std::string> ifaces;  // all the node's interfaces except lo
    bool iperf3_present = true;
    bool ping_present = true;
    // With IPv6 data addresses: IPv6 disabled on the data iface (net.ipv6.conf.IFACE.disable_ipv6
    // 1), or in the whole kernel (booted with ipv6.disable=1: no /proc/sys/net/ipv6).
    bool ipv6_disabled = false;
    bool kernel_without_ipv6 = false;
    std::string data_ip;  // the address the node is to take (for the message)
    // The TCP congestion control the run asks for (np_tcp_congestion, iperf3 -C; both ends set
    // it), empty for none; whether the node's kernel has it or a module that provides it, and
    // the ones it has (tcp_available_congestion_control).
    std::string congestion;
    bool congestion_present = true;
    std::string congestion_available;
    // After the link is set up:
    std::optional<bool> carrier;
    std::vector<std::string> ports_with_carrier;  // other ports that do have carrier
    std::optional<int> speed_mbps;                // sysfs; absent when the driver does not say
    std::string duplex;                           // full | half | unknown
    std::optional<int> mtu_bytes;
    std::string driver;
};

// From the client's data port to the server's data address.
struct PathFacts {
    std::string client_iface;
    std::string server_ip;
    bool ping_answered = false;
    std::string
        neighbour_state;        // `ip neigh` state of the server's address: REACHABLE, FAILED, ...
    std::string neighbour_mac;  // the MAC that answered for it (`ip neigh` lladdr), lower case
};

// IMAGE_NOT_BOOTED, DATA_IFACE_MISSING, IPV6_DISABLED, IPERF3_MISSING, PING_MISSING,
// CONGESTION_CONTROL_MISSING (errors).
std::vector<Finding> node_findings(const NodeFacts& n);
// NO_CARRIER (error), naming the ports that have carrier.
std::vector<Finding> carrier_findings(const NodeFacts& n);
// LINK_HALF_DUPLEX, LINK_SPEED_MISMATCH, MTU_MISMATCH (warn); LINK_FACTS (info).
std::vector<Finding> link_findings(const NodeFacts& a, const NodeFacts& b);
// ADDRESS_CONFLICT (error) when `answered_mac` answered for the server's address before the
// server (node A) took it on its data iface: another host on the segment holds it. Not the
// server's own data MAC (it answers ARP for an address it holds on any of its interfaces).
std::vector<Finding> address_taken_findings(const std::string& answered_mac,
                                            const std::string& server_ip, const NodeFacts& a,
                                            const NodeFacts& b);
// ADDRESS_CONFLICT (error) when IPv6 duplicate address detection failed for `ip` on `node`'s
// `iface` (the kernel marked it "dadfailed"): another host on the segment holds it.
std::vector<Finding> dad_failed_findings(const std::string& node, const std::string& iface,
                                         const std::string& ip, bool server);
// How a family resolves addresses and answers ping, for messages: "ARP" / "neighbour discovery",
// "ICMP" / "ICMPv6", from the address's own form.
std::string resolution_of(const std::string& ip);
std::string icmp_of(const std::string& ip);
// ADDRESS_CONFLICT (error) when the MAC that answered for the server's address is not the
// server's data port's; DIFFERENT_SEGMENT (error) when ARP (IPv6: neighbour discovery) went
// unanswered; DATA_PATH_NO_ECHO (warn) when the address resolved but ping got no reply.
std::vector<Finding> path_findings(const PathFacts& p, const NodeFacts& a, const NodeFacts& b);

}  // namespace np
