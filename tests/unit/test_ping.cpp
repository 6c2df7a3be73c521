#include <gtest/gtest.h>

#include "analysis/inputs.hpp"
#include "analysis/series.hpp"
#include "src/common/errors.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;

std::vector<PingTest> pings(const std::string& text) {
    return parse_measurements(text, "p.txt", InputFormat::ping).pings;
}

TEST(Ping, IputilsSummaryAndRtt) {
    const auto p = pings(fixture("ping/iputils-ok.txt")).at(0);
    EXPECT_EQ(p.flavour, "iputils");
    EXPECT_EQ(p.target, "198.18.10.2");
    EXPECT_EQ(p.source, "p.txt");
    EXPECT_EQ(p.transmitted, 10);
    EXPECT_EQ(p.received, 10);
    EXPECT_EQ(p.printed_loss_pct, 0.0);
    EXPECT_DOUBLE_EQ(*p.rtt_min_ms, 0.051);
    EXPECT_DOUBLE_EQ(*p.rtt_avg_ms, 0.063);
    EXPECT_DOUBLE_EQ(*p.rtt_max_ms, 0.149);
    EXPECT_DOUBLE_EQ(*p.rtt_mdev_ms, 0.028);
}

TEST(Ping, KeepsEveryReplysRttInOrder) {
    const auto p = pings(fixture("ping/iputils-ok.txt")).at(0);
    ASSERT_EQ(p.replies.size(), 10u);
    EXPECT_EQ(p.replies.front().seq, 1);
    EXPECT_DOUBLE_EQ(p.replies.front().rtt_ms, 0.149);
    EXPECT_EQ(p.replies.back().seq, 10);
    EXPECT_DOUBLE_EQ(p.replies.back().rtt_ms, 0.051);
}

TEST(Ping, ALongRunKeepsABoundedShareOfItsReplies) {
    std::string text = "PING h (h) 56(84) bytes of data.\n";
    const int n = 200000;
    for (int i = 1; i <= n; ++i)
        text += "64 bytes from h: icmp_seq=" + std::to_string(i) + " ttl=64 time=0.05 ms\n";
    text += "\n--- h ping statistics ---\n" + std::to_string(n) + " packets transmitted, " +
            std::to_string(n) +
            " received, 0% packet loss, time 1ms\nrtt min/avg/max/mdev = "
            "0.05/0.05/0.05/0 ms\n";
    const auto p = pings(text).at(0);
    EXPECT_EQ(p.received, n);
    EXPECT_LE(p.replies.size(), kMaxSeriesPoints);
    EXPECT_EQ(p.replies.front().seq, 1);
    EXPECT_LT(p.replies[1].seq - p.replies[0].seq, 8) << "evenly thinned";
}

TEST(Ping, BusyboxRepliesCountFromSeqZero) {
    const auto p = pings(fixture("handwritten/busybox-ping.txt")).at(0);
    ASSERT_EQ(p.replies.size(), 4u);
    EXPECT_EQ(p.replies.front().seq, 0);
    EXPECT_DOUBLE_EQ(p.replies.front().rtt_ms, 0.121);
}

TEST(Ping, DuplicateRepliesAreMarkedAndEachRunKeepsItsOwn) {
    const std::string text =
        "PING h (h) 56(84) bytes of data.\n"
        "64 bytes from h: icmp_seq=1 ttl=64 time=105 ms\n"
        "64 bytes from h: icmp_seq=1 ttl=64 time=106 ms (DUP!)\n"
        "\n--- h ping statistics ---\n"
        "1 packets transmitted, 1 received, +1 duplicates, 0% packet loss, time 0ms\n"
        "rtt min/avg/max/mdev = 105/105.5/106/0.5 ms\n" +
        fixture("ping/iputils-unreachable.txt");
    const auto tests = pings(text);
    ASSERT_EQ(tests.size(), 2u);
    ASSERT_EQ(tests[0].replies.size(), 2u);
    EXPECT_DOUBLE_EQ(tests[0].replies[0].rtt_ms, 105);
    EXPECT_FALSE(tests[0].replies[0].duplicate);
    EXPECT_TRUE(tests[0].replies[1].duplicate);
    EXPECT_TRUE(tests[1].replies.empty());  // "From …: Destination Host Unreachable" is no reply
    EXPECT_EQ(tests[0].source, "p.txt:1") << "two runs: each named by its line";
    EXPECT_EQ(tests[1].source, "p.txt:8");
}

TEST(Ping, HundredPercentLossHasErrorsAndNoRttLine) {
    const auto p = pings(fixture("ping/iputils-unreachable.txt")).at(0);
    EXPECT_EQ(p.transmitted, 5);
    EXPECT_EQ(p.received, 0);
    EXPECT_EQ(p.errors, 5);
    EXPECT_EQ(p.printed_loss_pct, 100.0);
    EXPECT_FALSE(p.rtt_avg_ms.has_value());
}

TEST(Ping, DuplicatesAreCountedApart) {
    const auto p = pings(fixture("ping/iputils-broadcast-duplicates.txt")).at(0);
    EXPECT_EQ(p.received, 5);
    EXPECT_EQ(p.duplicates, 4);
}

TEST(Ping, BusyboxRoundTripLine) {
    const auto p = pings(fixture("handwritten/busybox-ping.txt")).at(0);
    EXPECT_EQ(p.flavour, "busybox");
    EXPECT_EQ(p.received, 4);
    EXPECT_DOUBLE_EQ(*p.rtt_avg_ms, 0.098);
    EXPECT_FALSE(p.rtt_mdev_ms.has_value());
}

TEST(Ping, SeveralRunsInOneFileAreSeveralTests) {
    const auto text = fixture("ping/iputils-ok.txt") + fixture("ping/iputils-unreachable.txt");
    EXPECT_EQ(pings(text).size(), 2u);
}

TEST(Ping, PingsOwnErrorIsAToolFailure) {
    const auto m = parse_measurements(
        "$ ping -c 3 192.0.2.1\nping: connect: Network is unreachable\n", "p.txt");
    ASSERT_EQ(m.failures.size(), 1u);
    EXPECT_EQ(m.failures[0].tool, Tool::ping);
    EXPECT_EQ(m.failures[0].message, "ping: connect: Network is unreachable");
}

struct BadPing {
    std::string text;
    int line;
};

class PingRejects : public ::testing::TestWithParam<BadPing> {};

TEST_P(PingRejects, NamingTheLine) {
    try {
        pings(GetParam().text);
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), GetParam().line) << e.what();
        if (!GetParam().text.empty()) {
            EXPECT_EQ(e.field(), "ping");
        }
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
        BadPing{"--- h ping statistics ---\n3 packets transmitted, 3 received\n", 2},
        BadPing{"--- h ping statistics ---\n3 packets transmitted, 1 received, 1e400% packet "
                "loss\n",
                2}));

}  // namespace
}  // namespace np
