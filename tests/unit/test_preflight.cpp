// The data path's preflight judgement (analysis/explanation/preflight.cpp): what the client's
// neighbour table and ping say about the server's address, set against the server's own data port.
#include "analysis/explanation/preflight.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace np {
namespace {

NodeFacts node(const std::string& name, const std::string& role, const std::string& mac) {
    NodeFacts n;
    n.node = name;
    n.role = role;
    n.iface = "enp0s25";
    n.mac = mac;
    return n;
}

PathFacts path(bool ping, const std::string& state, const std::string& mac) {
    PathFacts p;
    p.client_iface = "enp0s25";
    p.server_ip = "198.18.0.1";
    p.ping_answered = ping;
    p.neighbour_state = state;
    p.neighbour_mac = mac;
    return p;
}

std::vector<std::string> codes(const std::vector<Finding>& findings) {
    std::vector<std::string> out;
    for (const auto& f : findings) out.push_back(f.code);
    return out;
}

const NodeFacts kServer = node("node1-1", "server", "02:00:00:00:00:01");
const NodeFacts kClient = node("node1-2", "client", "02:00:00:00:00:02");

// Another host holds the server's address and won ARP: it answers ping, so without the MAC
// the path looks fine and every test measures (or fails against) that host.
TEST(Preflight, AnotherHostAnsweringForTheServersAddressIsAnAddressConflict) {
    const auto f = path_findings(path(true, "REACHABLE", "02:00:00:00:00:99"), kServer, kClient);
    ASSERT_EQ(codes(f), std::vector<std::string>{"ADDRESS_CONFLICT"});
    EXPECT_NE(f[0].detail.find("goes to 02:00:00:00:00:99"), std::string::npos) << f[0].detail;
    EXPECT_NE(f[0].detail.find("node1-1's enp0s25 is 02:00:00:00:00:01"), std::string::npos)
        << f[0].detail;
    EXPECT_NE(f[0].detail.find("and it answered ping"), std::string::npos) << f[0].detail;
    EXPECT_EQ(f[0].severity, Severity::error);
}

TEST(Preflight, TheServersOwnMacIsNoConflictWhateverPingSays) {
    EXPECT_TRUE(
        path_findings(path(true, "REACHABLE", "02:00:00:00:00:01"), kServer, kClient).empty());
    EXPECT_EQ(codes(path_findings(path(false, "REACHABLE", "02:00:00:00:00:01"), kServer, kClient)),
              std::vector<std::string>{"DATA_PATH_NO_ECHO"});
    // A MAC either side could not read is no evidence of a conflict.
    EXPECT_TRUE(path_findings(path(true, "REACHABLE", ""), kServer, kClient).empty());
    EXPECT_TRUE(path_findings(path(true, "REACHABLE", "02:00:00:00:00:99"),
                              node("node1-1", "server", ""), kClient)
                    .empty());
}

// Before the server took its address, the client asked for it and a MAC answered: another
// host holds it, whichever of the two would win ARP once both do.
TEST(Preflight, AnAnswerBeforeTheServerTookItsAddressIsAnAddressConflict) {
    const auto f = address_taken_findings("02:00:00:00:00:99", "198.18.0.1", kServer, kClient);
    ASSERT_EQ(codes(f), std::vector<std::string>{"ADDRESS_CONFLICT"});
    EXPECT_NE(f[0].detail.find("Before node1-1 took 198.18.0.1 on its enp0s25, node1-2 asked for "
                               "it on enp0s25 and 02:00:00:00:00:99 answered"),
              std::string::npos)
        << f[0].detail;
    EXPECT_TRUE(address_taken_findings("", "198.18.0.1", kServer, kClient).empty());
    // The server's own data port answering (it holds the address on another interface, and
    // Linux answers ARP for any of its addresses) is no other host.
    EXPECT_TRUE(
        address_taken_findings("02:00:00:00:00:01", "198.18.0.1", kServer, kClient).empty());
}

TEST(Preflight, UnansweredArpIsADifferentSegment) {
    EXPECT_EQ(codes(path_findings(path(false, "FAILED", ""), kServer, kClient)),
              std::vector<std::string>{"DIFFERENT_SEGMENT"});
}

// Over IPv6 each message names the family's own mechanisms: neighbour discovery, not ARP;
// ICMPv6, not ICMP.
TEST(Preflight, Ipv6MessagesNameNeighbourDiscoveryAndIcmpv6) {
    auto p = path(false, "INCOMPLETE", "");
    p.server_ip = "2001:2::1";
    auto f = path_findings(p, kServer, kClient);
    ASSERT_EQ(codes(f), std::vector<std::string>{"DIFFERENT_SEGMENT"});
    EXPECT_NE(f[0].detail.find("neighbour discovery for 2001:2::1 on node1-2's enp0s25 went "
                               "unanswered (neighbour state INCOMPLETE)"),
              std::string::npos)
        << f[0].detail;
    EXPECT_EQ(f[0].detail.find("ARP"), std::string::npos) << f[0].detail;
    p = path(false, "REACHABLE", "02:00:00:00:00:01");
    p.server_ip = "2001:2::1";
    f = path_findings(p, kServer, kClient);
    ASSERT_EQ(codes(f), std::vector<std::string>{"DATA_PATH_NO_ECHO"});
    EXPECT_EQ(f[0].title, "node1-1 answers neighbour discovery but not ping on the data path");
    EXPECT_NE(f[0].detail.find("ICMPv6 may be filtered"), std::string::npos) << f[0].detail;
    f = address_taken_findings("02:00:00:00:00:99", "2001:2::1", kServer, kClient);
    ASSERT_EQ(codes(f), std::vector<std::string>{"ADDRESS_CONFLICT"});
    EXPECT_NE(f[0].detail.find("each neighbour solicitation"), std::string::npos) << f[0].detail;
    // And IPv4's stay ARP's.
    EXPECT_NE(path_findings(path(false, "FAILED", ""), kServer, kClient)[0].detail.find(
                  "ARP for 198.18.0.1"),
              std::string::npos);
}

// Duplicate address detection failed: the kernel found another host on the address.
TEST(Preflight, AFailedDuplicateAddressDetectionIsAnAddressConflict) {
    const auto f = dad_failed_findings("node1-1", "enp0s25", "2001:2::1", true);
    ASSERT_EQ(codes(f), std::vector<std::string>{"ADDRESS_CONFLICT"});
    EXPECT_EQ(f[0].severity, Severity::error);
    EXPECT_EQ(f[0].title, "Another host holds 2001:2::1 on the data segment");
    EXPECT_NE(f[0].detail.find("duplicate address detection failed"), std::string::npos);
    EXPECT_NE(f[0].next_step.find("np_server_ip"), std::string::npos) << f[0].next_step;
    EXPECT_NE(dad_failed_findings("node1-2", "enp0s25", "2001:2::2", false)[0].next_step.find(
                  "np_client_ip"),
              std::string::npos);
}

// IPv6 data addresses on a port with IPv6 disabled, or a kernel without it: said before anything
// is changed, with what to do.
TEST(Preflight, AnIpv6AddressOnAPortWithoutIpv6IsRefusedFirst) {
    NodeFacts n = kServer;
    n.data_ip = "2001:2::1";
    EXPECT_TRUE(node_findings(n).empty());
    n.ipv6_disabled = true;
    auto f = node_findings(n);
    ASSERT_EQ(codes(f), std::vector<std::string>{"IPV6_DISABLED"});
    EXPECT_EQ(f[0].severity, Severity::error);
    EXPECT_EQ(f[0].title, "IPv6 is disabled on enp0s25 of node1-1");
    EXPECT_NE(f[0].detail.find("net.ipv6.conf.enp0s25.disable_ipv6 = 1"), std::string::npos);
    EXPECT_NE(f[0].next_step.find("sysctl -w net.ipv6.conf.enp0s25.disable_ipv6=0"),
              std::string::npos);
    n.ipv6_disabled = false;
    n.kernel_without_ipv6 = true;
    f = node_findings(n);
    ASSERT_EQ(codes(f), std::vector<std::string>{"IPV6_DISABLED"});
    EXPECT_NE(f[0].detail.find("ipv6.disable=1"), std::string::npos) << f[0].detail;
}

// -C a congestion control a node neither has nor can load stops the run before any test,
// naming the node and what it has.
TEST(Preflight, ACongestionControlANodeLacksIsNamedWithTheOnesItHas) {
    NodeFacts n = kServer;
    n.congestion = "vegas";
    n.congestion_available = "reno cubic";
    EXPECT_TRUE(node_findings(n).empty());  // present unless the probe said otherwise
    n.congestion_present = false;
    const auto f = node_findings(n);
    ASSERT_EQ(codes(f), std::vector<std::string>{"CONGESTION_CONTROL_MISSING"});
    EXPECT_EQ(f[0].severity, Severity::error);
    EXPECT_NE(f[0].detail.find("node1-1 has it neither loaded (it has: reno cubic)"),
              std::string::npos)
        << f[0].detail;
}

}  // namespace
}  // namespace np
