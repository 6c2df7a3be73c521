// run --find-udp-ceiling's search (analysis/explanation/ceiling_search.hpp): which loads it
// offers, where it stops, and what its finding says, against a path whose loss is made up here.
#include <gtest/gtest.h>

#include <functional>

#include "analysis/explanation/ceiling_search.hpp"
#include "analysis/explanation/rules.hpp"

namespace {

using np::CeilingSearch;
using np::CeilingStep;

// A step at `offered` on a path that loses `loss_pct(offered)` of 10,000 datagrams.
CeilingStep step(double offered, double loss_pct) {
    np::ThroughputTest t;
    t.transport = np::Transport::udp;
    t.datagrams_total = 10'000;
    t.datagrams_lost = static_cast<int64_t>(loss_pct * 100);
    t.sent_bps = offered;
    t.received_bps = offered * (1 - loss_pct / 100);
    return CeilingStep{offered, "udp-ceiling", "f.json", t};
}

std::vector<double> search(CeilingSearch& s, const std::function<double(double)>& loss_pct) {
    std::vector<double> offered;
    while (const auto rate = s.next()) {
        offered.push_back(*rate);
        s.record(step(*rate, loss_pct(*rate)));
    }
    return offered;
}

TEST(CeilingSearch, APathThatCarriesTheCeilingTakesOneStep) {
    CeilingSearch s(95.64e6, 0.1);
    EXPECT_EQ(search(s, [](double) { return 0.0; }), std::vector<double>{95.64e6});
    ASSERT_NE(s.passed(), nullptr);
    EXPECT_EQ(s.failed(), nullptr);
    const auto f = np::udp_ceiling_finding(s, {});
    EXPECT_EQ(f.code, "UDP_CEILING_FOUND");
    EXPECT_NE(f.title.find("(100.00 % of the model's 95.64 Mbit/s)"), std::string::npos) << f.title;
    EXPECT_NE(f.detail.find("1 short UDP test of 2 s"), std::string::npos) << f.detail;
}

// A host that loses above 40 Mbit/s: bisection from the ceiling, to within 1 % of it, in at most
// kMaxCeilingSteps tests; the load found passed, the next one up lost.
TEST(CeilingSearch, ALossyPathIsBisectedToTheHighestLoadUnderTheThreshold) {
    CeilingSearch s(100e6, 0.1);
    const auto offered = search(s, [](double r) { return r > 40e6 ? 2.0 : 0.05; });
    EXPECT_LE(offered.size(), size_t(np::kMaxCeilingSteps));
    EXPECT_EQ(offered[0], 100e6);
    EXPECT_EQ(offered[1], 50e6);
    EXPECT_EQ(offered[2], 25e6);
    ASSERT_NE(s.passed(), nullptr);
    ASSERT_NE(s.failed(), nullptr);
    EXPECT_LE(s.passed()->offered_bps, 40e6);
    EXPECT_GT(s.failed()->offered_bps, 40e6);
    EXPECT_LE(s.failed()->offered_bps - s.passed()->offered_bps, 1e6);
    // Without traces the stage that lost is not located, and the finding says so.
    const auto f = np::udp_ceiling_finding(s, {});
    EXPECT_EQ(f.code, "UDP_CEILING_FOUND");
    EXPECT_NE(f.detail.find("was not located"), std::string::npos) << f.detail;
}

// Every load loses: the search walks down to 1 % of the ceiling and says nothing passed; a step
// without a result (the tool failed) ends the search there.
TEST(CeilingSearch, NothingPassesOrAStepFailsAndTheSearchStops) {
    CeilingSearch all_lose(100e6, 0.1);
    search(all_lose, [](double) { return 5.0; });
    EXPECT_EQ(all_lose.passed(), nullptr);
    EXPECT_EQ(np::udp_ceiling_finding(all_lose, {}).code, "UDP_CEILING_NOT_FOUND");

    CeilingSearch broken(100e6, 0.1);
    broken.record(step(100e6, 3.0));
    broken.record(CeilingStep{50e6, "udp-ceiling-2", "f.json", std::nullopt});
    EXPECT_FALSE(broken.next());
}

// A sender that cannot send the load (a host-bound sender: 0 % lost, a third of it sent) does
// not show the path carried it: the step is not carried, and the finding names the sender by
// its own count, never "the model's ceiling was carried".
TEST(CeilingSearch, ALoadTheSenderNeverSentIsNotCarried) {
    CeilingSearch host(956e6, 0.1);
    while (const auto rate = host.next()) {
        CeilingStep st = step(*rate, 0.0);
        st.test->sent_bps = std::min(*rate, 300e6);  // the sender's own count
        st.test->received_bps = st.test->sent_bps;
        host.record(st);
    }
    ASSERT_NE(host.failed(), nullptr);
    EXPECT_EQ(host.outcome(host.steps()[0]), np::StepOutcome::sender_short);
    ASSERT_NE(host.passed(), nullptr);
    EXPECT_LE(host.passed()->offered_bps, 300e6 / np::rules::kSenderShortfall);
    const auto f = np::udp_ceiling_finding(host, {});
    EXPECT_EQ(f.detail.find("carried with loss under the threshold"), std::string::npos)
        << f.detail;
    EXPECT_NE(f.detail.find("the sending host set that rate, and the load never reached the path"),
              std::string::npos)
        << f.detail;
}

// A step under the threshold whose output has no sender's count is neither carried nor "not
// sent": nothing says which, and what arrived is not the sender's count.
TEST(CeilingSearch, AStepWithoutTheSendersCountIsNotJudged) {
    CeilingSearch s(95.64e6, 0.1);
    CeilingStep st = step(95.64e6, 0.0);
    st.test->sent_bps.reset();
    st.test->received_bps = 40e6;  // far under the load: still not the sender's count
    s.record(st);
    EXPECT_EQ(s.outcome(s.steps()[0]), np::StepOutcome::no_result);
    EXPECT_EQ(s.failed(), nullptr);
    EXPECT_EQ(s.passed(), nullptr);
    EXPECT_FALSE(s.next());
    const auto f = np::udp_ceiling_finding(s, {});
    EXPECT_EQ(f.code, "UDP_CEILING_NOT_FOUND");
    EXPECT_EQ(f.detail.find("sending host set that rate"), std::string::npos) << f.detail;
    EXPECT_EQ(f.detail.find("carried with loss"), std::string::npos) << f.detail;
    EXPECT_NE(f.detail.find("no count of what the sender sent"), std::string::npos) << f.detail;
}

// A search whose first step gave no result says so, and nothing about the path.
TEST(CeilingSearch, ASearchWithoutAResultSaysOnlyThat) {
    CeilingSearch s(95.64e6, 0.1);
    s.record(CeilingStep{95.64e6, "udp-ceiling-1", "np-explain_udp-ceiling-1.json", std::nullopt});
    EXPECT_FALSE(s.next());
    const auto f = np::udp_ceiling_finding(s, {});
    EXPECT_EQ(f.code, "UDP_CEILING_NOT_FOUND");
    EXPECT_EQ(f.title, "The UDP ceiling search got no result");
    EXPECT_EQ(f.detail.find("carried"), std::string::npos) << f.detail;
    EXPECT_NE(f.next_step.find("np-explain_udp-ceiling-1.json"), std::string::npos);
}

// Loss need not rise with the load: a load carried above one that lost is not the ceiling.
TEST(CeilingSearch, ALoadCarriedAboveOneThatLostIsNotTheCeiling) {
    CeilingSearch s(100e6, 0.1);
    s.record(step(100e6, 5.0));  // lost
    s.record(step(50e6, 2.0));   // lost
    s.record(step(75e6, 0.0));   // carried, but above a load that lost
    s.record(step(25e6, 0.0));
    ASSERT_NE(s.passed(), nullptr);
    EXPECT_EQ(s.passed()->offered_bps, 25e6);
    EXPECT_EQ(s.failed()->offered_bps, 50e6);
}

}  // namespace
