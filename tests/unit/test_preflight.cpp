// The data path's preflight judgement (analysis/preflight.cpp): what the client's neighbour
// table and ping say about the server's address, set against the server's own data port.
#include "analysis/preflight.hpp"

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

}  // namespace
}  // namespace np
