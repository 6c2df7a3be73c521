// run --repeat (analysis/explanation/repeats.hpp): each test's repetitions side by side.
#include <gtest/gtest.h>

#include "analysis/explanation/repeats.hpp"

namespace {

using np::Explanation;
using np::Repetition;

Explanation one(double tcp_mbps, const std::string& tcp_verdict) {
    Explanation e;
    np::Verdict v;
    v.test = "iperf3 TCP";
    v.measured_bps = tcp_mbps * 1e6;
    v.verdict = tcp_verdict;
    e.verdicts.push_back(v);
    np::Verdict ping;
    ping.test = "ping 198.18.0.1";
    ping.verdict = "reachable";
    e.verdicts.push_back(ping);
    return e;
}

TEST(Repeats, TheSameVerdictEveryTimeGivesTheMedianAndSpread) {
    const auto found = np::repeat_findings({{1, one(94.0, "line-rate bound")},
                                            {2, one(94.2, "line-rate bound")},
                                            {3, one(93.8, "line-rate bound")}});
    ASSERT_EQ(found.size(), 1u);  // the ping has no rate to hold side by side
    const auto& f = found[0];
    EXPECT_EQ(f.code, "REPEAT_SPREAD");
    EXPECT_EQ(f.test, "iperf3 TCP");
    EXPECT_NE(f.title.find("line-rate bound in all 3 repetitions (median 94.00 Mbit/s, spread "
                           "0.43 %)"),
              std::string::npos)
        << f.title;
}

// A verdict that changes is said, in the finding and in the verdict table's row; a repetition
// whose tool failed counts as "no result", listed but not compared.
TEST(Repeats, AVerdictThatFlipsIsSaidInTheTableToo) {
    Explanation failed;
    const auto found = np::repeat_findings(
        {{1, one(94.0, "line-rate bound")}, {2, one(61.0, "limit not located")}, {3, failed}});
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].code, "VERDICT_FLIPS");
    EXPECT_NE(found[0].detail.find("2: 61.00 Mbit/s, limit not located; 3: no result"),
              std::string::npos)
        << found[0].detail;
    EXPECT_NE(found[0].detail.find("1 of the 3 gave no result"), std::string::npos)
        << found[0].detail;
    auto table = one(94.0, "line-rate bound").verdicts;
    np::mark_flipped_verdicts(found, table);
    EXPECT_EQ(table[0].verdict, "line-rate bound, flips between repetitions");
    EXPECT_EQ(table[1].verdict, "reachable");
    EXPECT_TRUE(np::repeat_findings({{1, one(94.0, "line-rate bound")}}).empty());
}

// A repetition that failed is not a flip, and a test whose first repetition failed is still
// held side by side from the others.
TEST(Repeats, AFailedRepetitionIsNotAVerdictThatChanged) {
    Explanation failed;
    auto found = np::repeat_findings(
        {{1, one(94.0, "line-rate bound")}, {2, failed}, {3, one(94.1, "line-rate bound")}});
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].code, "REPEAT_SPREAD");
    EXPECT_NE(found[0].title.find("line-rate bound in the 2 of 3 repetitions with a result"),
              std::string::npos)
        << found[0].title;
    found = np::repeat_findings(
        {{1, failed}, {2, one(94.0, "line-rate bound")}, {3, one(94.1, "line-rate bound")}});
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].test, "iperf3 TCP");
    EXPECT_EQ(found[0].code, "REPEAT_SPREAD");
}

}  // namespace
