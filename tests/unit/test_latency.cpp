// The round trip under load, located (analysis/explanation/latency.hpp, rules_latency.cpp): the
// split of ping's echoes by stage from two nodes' stamps, and the finding it gives a test, on
// echoes laid out stage by stage and on the real probe's traces of a UDP test.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/explanation/explain.hpp"
#include "analysis/explanation/latency.hpp"
#include "analysis/readers/inputs.hpp"
#include "common/errors.hpp"
#include "common/trace.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using S = EchoStamp;

// One echo `seq` as each node stamps it, every stage in µs: the pinger's queue, the path each
// way, the answering host and its queue. `xmit`: the nodes' probes stamp the driver handoff.
struct Stages {
    int64_t queue = 0, path_out = 0, host = 0, answer_queue = 0, path_back = 0;
};
std::pair<EchoTrace, EchoTrace> echo(uint16_t seq, Stages s, bool xmit = true) {
    EchoTrace p{.id = 7, .seq = seq, .family = 4}, r{.id = 7, .seq = seq, .family = 4};
    const auto ns = [](int64_t us) { return us * 1000; };
    p.ns[size_t(S::request_tx)] = 0;
    if (xmit) p.ns[size_t(S::request_xmit)] = ns(s.queue);
    p.ns[size_t(S::reply_rx)] = ns(s.queue + s.path_out + s.host + s.answer_queue + s.path_back);
    r.ns[size_t(S::request_rx)] = 0;
    r.ns[size_t(S::reply_tx)] = ns(s.host);
    if (xmit) r.ns[size_t(S::reply_xmit)] = ns(s.host + s.answer_queue);
    return {p, r};
}

struct Phases {
    PhaseTrace pinger, responder;
    void add(uint16_t seq, Stages s, bool xmit = true) {
        auto [p, r] = echo(seq, s, xmit);
        pinger.echoes.push_back(p);
        responder.echoes.push_back(r);
    }
};

TEST(Latency, EachStageIsTheMeanOfItsOwnStampsAndTheyAddUpToTheRoundTrip) {
    Phases ph;
    ph.add(1, {.queue = 30000, .path_out = 20, .host = 15, .answer_queue = 2, .path_back = 20});
    ph.add(2, {.queue = 10000, .path_out = 20, .host = 25, .answer_queue = 4, .path_back = 20});
    // An echo the other node never answered (lost), and one the pinger never saw come back,
    // are no one's stages.
    ph.pinger.echoes.push_back(echo(3, {.queue = 99999}).first);
    ph.responder.echoes.push_back(echo(4, {.host = 99999}).second);
    const auto s = split_round_trip(ph.pinger, ph.responder);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->echoes, 2);
    EXPECT_DOUBLE_EQ(*s->stage(RttStage::pinger_queue), 20000);
    EXPECT_DOUBLE_EQ(*s->stage(RttStage::path), 40);
    EXPECT_DOUBLE_EQ(*s->stage(RttStage::responder_host), 20);
    EXPECT_DOUBLE_EQ(*s->stage(RttStage::responder_queue), 3);
    EXPECT_DOUBLE_EQ(s->round_trip_us, 20063);
    // The same echoes from the other side's point of view are nobody's: that node sent none.
    EXPECT_EQ(echoes_sent(ph.pinger), 3);
    EXPECT_EQ(echoes_sent(ph.responder), 0);
    EXPECT_FALSE(split_round_trip(ph.responder, ph.pinger));
}

// Below the full tiers a probe has no driver handoff: that node's queue is not split from the
// path, and is said to be unknown rather than zero.
TEST(Latency, WithoutTheDriverHandoffAQueueStaysInThePath) {
    Phases ph;
    ph.add(1, {.queue = 5000, .path_out = 20, .host = 15, .answer_queue = 2, .path_back = 20},
           false);
    const auto s = split_round_trip(ph.pinger, ph.responder);
    ASSERT_TRUE(s);
    EXPECT_FALSE(s->stage(RttStage::pinger_queue));
    EXPECT_FALSE(s->stage(RttStage::responder_queue));
    EXPECT_DOUBLE_EQ(*s->stage(RttStage::path), 5042);
    EXPECT_DOUBLE_EQ(*s->stage(RttStage::responder_host), 15);
}

// Echoes survive the trace's JSON, and a hostile one names its field.
TEST(Latency, EchoesRoundTripThroughTheTraceAndBadOnesNameTheirField) {
    Trace t = parse_trace_text(testing::fixture("probe/udp-overload-client.json"));
    ASSERT_FALSE(t.phases.empty());
    t.phases[0].echoes = {echo(1, {.queue = 12}).first, echo(2, {.host = 3}).second};
    const auto doc = to_json(t);
    EXPECT_EQ(to_json(parse_trace(doc)), doc);
    EXPECT_EQ(parse_trace(doc).phases[0].echoes[1].at(S::reply_tx), 3000);
    const auto field = [&](auto change) {
        auto bad = doc;
        change(bad["phases"][0]["echoes"][0]);
        return testing::trace_error_field(bad);
    };
    EXPECT_EQ(field([](auto& e) { e["seq"] = 70000; }), "phases[0].echoes[0].seq");
    EXPECT_EQ(field([](auto& e) { e["family"] = 5; }), "phases[0].echoes[0].family");
    EXPECT_EQ(field([](auto& e) { e["ns"]["request_xmit"] = -1; }),
              "phases[0].echoes[0].ns.request_xmit");
    EXPECT_EQ(field([](auto& e) { e["ns"]["sent"] = 1; }), "phases[0].echoes[0].ns.sent");
    EXPECT_EQ(field([](auto& e) { e["ns"] = nlohmann::json::object(); }), "phases[0].echoes[0].ns");
}

// ------------------------------------------------------------------ the finding

// The real probe's traces of a UDP test (tests/fixtures/probe), with ping's echoes laid in: an
// idle phase before the test and the test's own.
ExplainInput with_echoes(Stages idle, Stages loaded, int loaded_echoes = 20) {
    ExplainInput in = testing::udp_overload_input();
    Phases at_idle, under_load;
    for (uint16_t k = 1; k <= 5; ++k) at_idle.add(k, idle);
    for (int k = 0; k < loaded_echoes; ++k) under_load.add(static_cast<uint16_t>(100 + k), loaded);
    for (size_t side = 0; side < 2; ++side) {
        Trace& t = in.traces[side];
        PhaseTrace ping;
        ping.name = "ping";
        ping.echoes = side == 0 ? at_idle.pinger.echoes : at_idle.responder.echoes;
        t.phases.insert(t.phases.begin(), ping);
        for (auto& p : t.phases)
            if (p.name == "udp")
                p.echoes = side == 0 ? under_load.pinger.echoes : under_load.responder.echoes;
    }
    return in;
}

const Finding* rtt_finding(const Explanation& e) {
    return testing::find_finding(e, "RTT_UNDER_LOAD");
}

std::string evidence(const Finding& f, const std::string& key) {
    return evidence_text(testing::evidence(f, key));
}

const Stages kIdle{.queue = 5, .path_out = 10, .host = 15, .answer_queue = 2, .path_back = 10};

TEST(Latency, AGrownQueueAtTheSenderIsNamedWithItsShareAndWhatToDo) {
    Stages loaded = kIdle;
    loaded.queue = 40000;
    const auto e = explain(with_echoes(kIdle, loaded));
    const Finding* f = rtt_finding(e);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::info);
    EXPECT_EQ(evidence(*f, "stage"), "pinger_queue");
    EXPECT_EQ(evidence(*f, "stage_share"), "1.0");
    EXPECT_EQ(evidence(*f, "pinger"), "node1-1");
    EXPECT_NE(f->title.find("40.0 ms against 0.042 ms idle"), std::string::npos) << f->title;
    EXPECT_NE(f->title.find("node1-1's egress queue"), std::string::npos) << f->title;
    EXPECT_NE(f->next_step.find("bufferbloat"), std::string::npos) << f->next_step;
    // The verdict stays the throughput's: a queue that filled says nothing about the rate.
    for (const auto& v : e.verdicts) EXPECT_NE(v.verdict, "");
}

// Below the full tiers no driver handoff splits a node's queue from the path: a queue that grew
// is not said to be on the path, but the two together, not told apart.
TEST(Latency, WithoutTheDriverHandoffAGrownQueueIsNotTakenForThePath) {
    Stages loaded = kIdle;
    loaded.queue = 40000;
    ExplainInput in = with_echoes(kIdle, loaded);
    for (auto& t : in.traces)
        for (auto& p : t.phases)
            for (auto& e : p.echoes) {
                e.ns[size_t(S::request_xmit)].reset();
                e.ns[size_t(S::reply_xmit)].reset();
            }
    const auto e = explain(in);
    const Finding* f = rtt_finding(e);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(evidence(*f, "stage"), "path");
    EXPECT_NE(f->title.find("together with node1-1's and node1-2's egress queues (not told "
                            "apart: no driver handoff at their probe tier)"),
              std::string::npos)
        << f->title;
    EXPECT_NE(f->next_step.find("cannot tell which"), std::string::npos) << f->next_step;
}

TEST(Latency, AQueueBeyondBothNicsIsThePathsAndAnAnswerLateIsTheHosts) {
    Stages hop = kIdle;
    hop.path_back = 8000;
    const auto at_hop = explain(with_echoes(kIdle, hop));
    const Finding* f = rtt_finding(at_hop);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(evidence(*f, "stage"), "path");
    EXPECT_NE(f->next_step.find("between the NICs"), std::string::npos) << f->next_step;
    Stages busy = kIdle;
    busy.host = 3000;
    const auto at_host = explain(with_echoes(kIdle, busy));
    f = rtt_finding(at_host);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(evidence(*f, "stage"), "responder_host");
    EXPECT_NE(f->title.find("node1-2's host"), std::string::npos) << f->title;
}

// A round trip that did not double, or grew by less than the hosts' jitter, or too few echoes
// under load, is no finding.
TEST(Latency, ASmallGrowthOrTooFewEchoesIsNoFinding) {
    Stages little = kIdle;
    little.queue = 30;  // 0.067 ms against 0.042: not doubled
    EXPECT_EQ(rtt_finding(explain(with_echoes(kIdle, little))), nullptr);
    Stages jitter = kIdle;
    jitter.queue = 150;  // more than doubled, but 0.145 ms longer
    EXPECT_EQ(rtt_finding(explain(with_echoes(kIdle, jitter))), nullptr);
    Stages queued = kIdle;
    queued.queue = 40000;
    EXPECT_EQ(rtt_finding(explain(with_echoes(kIdle, queued, 2))), nullptr);
    EXPECT_NE(rtt_finding(explain(with_echoes(kIdle, queued, 3))), nullptr);
}

}  // namespace
}  // namespace np
