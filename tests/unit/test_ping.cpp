#include <gtest/gtest.h>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "analysis/readers/series.hpp"
#include "common/errors.hpp"
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
    const auto p = pings(fixture("ping/busybox-ok.txt")).at(0);
    ASSERT_EQ(p.replies.size(), 5u);
    EXPECT_EQ(p.replies.front().seq, 0);
    EXPECT_DOUBLE_EQ(p.replies.front().rtt_ms, 0.047);
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

// Each platform's ping, read as iputils' is: the generated ones (PLATFORMS.generated.md) and
// the hand-written ones of what this machine cannot run (handwritten/README.md).
struct PlatformPing {
    std::string file;
    std::string flavour;
    int64_t transmitted, received, duplicates;
    double avg_ms;
    std::optional<double> deviation_ms;
    size_t replies;
};

class PlatformPings : public ::testing::TestWithParam<PlatformPing> {};

TEST_P(PlatformPings, ReadAsIputilsIs) {
    const PlatformPing& want = GetParam();
    const auto p = pings(fixture(want.file)).at(0);
    EXPECT_EQ(p.flavour, want.flavour);
    EXPECT_EQ(p.transmitted, want.transmitted);
    EXPECT_EQ(p.received, want.received);
    EXPECT_EQ(p.duplicates, want.duplicates);
    EXPECT_DOUBLE_EQ(p.rtt_avg_ms.value_or(-1), want.avg_ms);
    EXPECT_EQ(p.rtt_mdev_ms, want.deviation_ms);
    EXPECT_EQ(p.replies.size(), want.replies);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PlatformPings,
    ::testing::Values(
        PlatformPing{"ping/inetutils-ok.txt", "BSD-style", 5, 5, 0, 0.104, 0.024, 5},
        PlatformPing{"ping/busybox-ok.txt", "busybox", 5, 5, 0, 0.093, std::nullopt, 5},
        PlatformPing{"ping/busybox-ipv6.txt", "busybox", 5, 5, 0, 0.102, std::nullopt, 5},
        PlatformPing{"ping/iputils-ipv6.txt", "iputils", 5, 5, 0, 0.064, 0.011, 5},
        PlatformPing{"handwritten/macos-ping.txt", "macOS", 4, 3, 0, 0.267, 0.006, 3},
        PlatformPing{"handwritten/macos-ping6.txt", "BSD-style", 3, 3, 0, 0.118, 0.006, 3},
        PlatformPing{"handwritten/freebsd-ping.txt", "BSD-style", 3, 3, 1, 0.321, 0.047, 4},
        PlatformPing{"handwritten/openbsd-ping.txt", "OpenBSD", 3, 3, 0, 0.312, 0.008, 3},
        PlatformPing{"handwritten/windows-ping.txt", "Windows", 4, 4, 0, 0, std::nullopt, 4},
        PlatformPing{"handwritten/windows-ping-ipv6.txt", "Windows", 4, 4, 0, 0, std::nullopt, 4}),
    [](const ::testing::TestParamInfo<PlatformPing>& info) {
        std::string name = info.param.file.substr(info.param.file.find('/') + 1);
        name = name.substr(0, name.find('.'));
        for (char& c : name)
            if (c == '-') c = '_';
        return name;
    });

TEST(Ping, UnreachableWithoutAnRttLineOnEveryPlatform) {
    for (const char* file :
         {"ping/inetutils-unreachable.txt", "ping/iputils-ipv6-unreachable.txt"}) {
        const auto p = pings(fixture(file)).at(0);
        EXPECT_EQ(p.received, 0) << file;
        EXPECT_EQ(p.printed_loss_pct, 100.0) << file;
        EXPECT_FALSE(p.rtt_avg_ms.has_value()) << file;
    }
}

TEST(Ping, FreeBsdsMergedPing6HeaderAndMacOsTimeouts) {
    const auto p = pings(
                       "PING(56=40+8+8 bytes) 2001:2::2 --> 2001:2::1\n"
                       "16 bytes from 2001:2::1, icmp_seq=0 hlim=64 time=0.210 ms\n"
                       "Request timeout for seq 1\n"
                       "\n--- 2001:2::1 ping statistics ---\n"
                       "2 packets transmitted, 1 packets received, 50.0% packet loss\n"
                       "round-trip min/avg/max/stddev = 0.210/0.210/0.210/0.000 ms\n")
                       .at(0);
    EXPECT_EQ(p.target, "2001:2::1");
    EXPECT_EQ(p.replies.size(), 1u);
    EXPECT_EQ(p.flavour, "macOS") << "its request timeouts say so";
    EXPECT_EQ(p.printed_loss_pct, 50.0);
}

TEST(Ping, WindowsPrintsWholeMillisecondsAndItsRepliesHaveNoSeq) {
    const auto p = pings(fixture("handwritten/windows-ping.txt")).at(0);
    EXPECT_EQ(p.target, "198.18.10.2");
    EXPECT_EQ(p.rtt_resolution_ms, 1.0);
    EXPECT_EQ(p.printed_loss_pct, 0.0);
    EXPECT_DOUBLE_EQ(*p.rtt_max_ms, 1.0);
    ASSERT_EQ(p.replies.size(), 4u);
    EXPECT_EQ(p.replies[0].seq, 1);
    EXPECT_EQ(p.replies[0].rtt_ms, 0.0) << "time<1ms";
    EXPECT_EQ(p.replies[2].rtt_ms, 1.0);
    EXPECT_EQ(p.replies[3].seq, 4);
}

TEST(Ping, WindowsCountsUnreachableAnswersAsReceivedAndTheyAreErrors) {
    const auto p = pings(fixture("handwritten/windows-ping-unreachable.txt")).at(0);
    EXPECT_EQ(p.transmitted, 4);
    EXPECT_EQ(p.received, 0) << "no echo reply came back";
    EXPECT_EQ(p.errors, 3);
    EXPECT_EQ(p.errors_counted_as_received, 3);
    EXPECT_EQ(p.printed_loss_pct, 25.0);
    EXPECT_TRUE(p.replies.empty());
}

// Every ICMP error ping.exe counts as received is named by its own words: a TTL expired on the way
// is not an unreachable host.
// Over IPv6 the errors ping.exe counts as received are ICMPv6's, and the neighbour table to check
// is IPv6's.
TEST(Ping, WindowsIpv6ErrorAnswersAreIcmpv6s) {
    const std::string text =
        "Pinging 2001:2::99 with 32 bytes of data:\n"
        "Reply from 2001:2::1: Destination host unreachable.\n"
        "Reply from 2001:2::1: Destination host unreachable.\n"
        "\n"
        "Ping statistics for 2001:2::99:\n"
        "    Packets: Sent = 2, Received = 2, Lost = 0 (0% loss),\n";
    ExplainInput in;
    in.measurements.pings = {pings(text).at(0)};
    const auto e = explain(in);
    bool said = false;
    for (const auto& f : e.findings) {
        if (f.detail.find("counted 2 ICMPv6 error answers") == std::string::npos) continue;
        said = true;
        EXPECT_NE(f.next_step.find("netsh interface ipv6 show neighbors"), std::string::npos)
            << f.next_step;
    }
    EXPECT_TRUE(said) << testing::codes_of(e);
}

TEST(Ping, WindowsErrorAnswersAreNamedByTheirOwnText) {
    const std::string text =
        "Pinging 198.18.10.2 with 32 bytes of data:\n"
        "Reply from 198.18.10.1: TTL expired in transit.\n"
        "Reply from 198.18.10.1: TTL expired in transit.\n"
        "Ping statistics for 198.18.10.2:\n"
        "    Packets: Sent = 2, Received = 2, Lost = 0 (0% loss),\n";
    const auto p = pings(text).at(0);
    EXPECT_EQ(p.error_text, "TTL expired in transit.");
    EXPECT_EQ(p.errors, 2);
    EXPECT_EQ(p.received, 0);
    ExplainInput in;
    in.measurements.pings = {p};
    const auto e = explain(in);
    const Finding* f = testing::find_finding(e, "PING_NO_REPLY");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->detail.find("('TTL expired in transit.'): a host or router on the way"),
              std::string::npos)
        << f->detail;
    EXPECT_EQ(f->detail.find("ARP"), std::string::npos) << "no unreachable host was reported";
}

// Over IPv6 an unreachable neighbour is neighbour discovery unanswered, and the errors ICMPv6's
// (a real iputils run, tests/fixtures/PLATFORMS.generated.md).
TEST(Ping, AnUnreachableIpv6NeighbourIsNeighbourDiscoveryUnanswered) {
    ExplainInput in;
    in.measurements.pings = pings(fixture("ping/iputils-ipv6-unreachable.txt"));
    const auto e = explain(in);
    const Finding* f = testing::find_finding(e, "PING_NO_REPLY");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->detail.find("3 ICMPv6 errors"), std::string::npos) << f->detail;
    EXPECT_NE(f->detail.find("means neighbour discovery went unanswered"), std::string::npos)
        << f->detail;
    EXPECT_EQ(f->detail.find("ARP"), std::string::npos) << f->detail;
}

TEST(Ping, WindowsInAnotherLanguageIsNamedSo) {
    try {
        pings(fixture("handwritten/windows-ping-german.txt"));
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "ping");
        EXPECT_EQ(e.line(), 3) << "its first reply";
        EXPECT_NE(std::string(e.what()).find("language this reader does not know"),
                  std::string::npos)
            << e.what();
    }
    // Without naming the tool too: the reply lines say it is ping.
    EXPECT_THROW(parse_measurements(fixture("handwritten/windows-ping-german.txt"), "p.txt"),
                 InputError);
}

TEST(Ping, WindowsHostNotFoundIsAToolFailure) {
    const auto m = parse_measurements(
        "C:\\> ping nosuch.example\nPing request could not find host nosuch.example. Please "
        "check the name and try again.\n",
        "p.txt");
    ASSERT_EQ(m.failures.size(), 1u);
    EXPECT_EQ(m.failures[0].tool, Tool::ping);
}

TEST(Ping, WindowsBadCountsNameTheLine) {
    const std::string text =
        "Pinging h with 32 bytes of data:\nReply from h: bytes=32 time=1ms TTL=64\n"
        "Ping statistics for h:\n    Packets: Sent = 4, Received = 4, Lost = 1 (25% loss),\n";
    try {
        pings(text);
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), 4);
        EXPECT_NE(std::string(e.what()).find("do not add up"), std::string::npos) << e.what();
    }
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
