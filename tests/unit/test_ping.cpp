#include <gtest/gtest.h>

#include "analysis/error.hpp"
#include "analysis/ping.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;

TEST(Ping, IputilsSummaryAndRtt) {
    const auto p = parse_ping(fixture("ping/iputils-ok.txt"), "p.txt").at(0);
    EXPECT_EQ(p.flavour, "iputils");
    EXPECT_EQ(p.target, "198.18.10.2");
    EXPECT_EQ(p.transmitted, 10);
    EXPECT_EQ(p.received, 10);
    EXPECT_EQ(p.printed_loss_pct, 0.0);
    EXPECT_DOUBLE_EQ(*p.rtt_min_ms, 0.051);
    EXPECT_DOUBLE_EQ(*p.rtt_avg_ms, 0.063);
    EXPECT_DOUBLE_EQ(*p.rtt_max_ms, 0.149);
    EXPECT_DOUBLE_EQ(*p.rtt_mdev_ms, 0.028);
}

TEST(Ping, HundredPercentLossHasErrorsAndNoRttLine) {
    const auto p = parse_ping(fixture("ping/iputils-unreachable.txt")).at(0);
    EXPECT_EQ(p.transmitted, 5);
    EXPECT_EQ(p.received, 0);
    EXPECT_EQ(p.errors, 5);
    EXPECT_EQ(p.printed_loss_pct, 100.0);
    EXPECT_FALSE(p.rtt_avg_ms.has_value());
}

TEST(Ping, DuplicatesAreCountedApart) {
    const auto p = parse_ping(fixture("ping/iputils-broadcast-duplicates.txt")).at(0);
    EXPECT_EQ(p.received, 5);
    EXPECT_EQ(p.duplicates, 4);
}

TEST(Ping, BusyboxRoundTripLine) {
    const auto p = parse_ping(fixture("handwritten/busybox-ping.txt")).at(0);
    EXPECT_EQ(p.flavour, "busybox");
    EXPECT_EQ(p.received, 4);
    EXPECT_DOUBLE_EQ(*p.rtt_avg_ms, 0.098);
    EXPECT_FALSE(p.rtt_mdev_ms.has_value());
}

TEST(Ping, SeveralRunsInOneFileAreSeveralTests) {
    const auto text = fixture("ping/iputils-ok.txt") + fixture("ping/iputils-unreachable.txt");
    EXPECT_EQ(parse_ping(text).size(), 2u);
}

TEST(Ping, HugeInputIsRefusedWithItsSize) {
    const std::string huge(kMaxPingTextBytes + 1, 'x');
    try {
        parse_ping(huge);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("far more than any ping output"), std::string::npos)
            << e.what();
    }
}

struct BadPing {
    std::string text;
    int line;
};

class PingRejects : public ::testing::TestWithParam<BadPing> {};

TEST_P(PingRejects, NamingTheLine) {
    try {
        parse_ping(GetParam().text);
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "ping");
        EXPECT_EQ(e.line(), GetParam().line) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, PingRejects,
    ::testing::Values(
        BadPing{"", 1}, BadPing{"PING x (x) 56(84) bytes of data.\n", 1},
        BadPing{"--- h ping statistics ---\n", 1},
        BadPing{"--- h ping statistics ---\nten packets transmitted, 1 received\n", 2},
        BadPing{"--- h ping statistics ---\n3 packets transmitted, 9 received, 0% "
                "packet loss\n",
                2},
        BadPing{"--- h ping statistics ---\n3 packets transmitted, 3 received\n"
                "rtt min/avg/max/mdev = 1/2/x/4 ms\n",
                3},
        BadPing{"--- h ping statistics ---\n3 packets transmitted, 3 received\n", 2}));

}  // namespace
}  // namespace np
