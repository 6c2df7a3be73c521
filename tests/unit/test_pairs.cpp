// The fan-out's inventory of pairs: read, checked, scheduled in waves; and the pairs × tests
// table over what was gathered (analysis/explanation/pairs.hpp).
#include <gtest/gtest.h>

#include <string>

#include "analysis/explanation/pairs.hpp"
#include "common/errors.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

PairPlan plan(const std::string& yaml, const Params& params = {}) {
    return parse_pair_plan(yaml, "pairs.yml", params);
}

std::vector<int> waves(const PairPlan& p) {
    std::vector<int> w;
    for (const auto& pair : p.pairs) w.push_back(pair.wave);
    return w;
}

// "field: message" of the InputError the text raises, or "(no error)".
std::string refusal(const std::string& yaml) {
    return testing::error_of([&] { plan(yaml); });
}

// A row of four, as scripts/testbed.sh --nodes 4 writes it: two disjoint pairs together, the
// pair sharing a node with both after them.
TEST(Pairs, DisjointPairsShareAWaveAndAPairSharingANodeWaits) {
    const auto p = plan(
        "pairs:\n"
        "  - {server: n1, client: n2, server_ip: 10.0.0.1, client_ip: 10.0.0.2}\n"
        "  - {server: n3, client: n4, server_ip: 10.0.0.3, client_ip: 10.0.0.4}\n"
        "  - {server: n2, client: n3, server_ip: 10.0.0.2, client_ip: 10.0.0.3}\n");
    EXPECT_EQ(waves(p), (std::vector<int>{0, 0, 1}));
    EXPECT_EQ(p.waves, 2);
    EXPECT_EQ(p.pairs[2].name, "n2_n3");
    const std::string table = render_pair_plan(p);
    EXPECT_NE(table.find("3 pairs in 2 waves"), std::string::npos) << table;
    EXPECT_NE(table.find("n1 -> n2"), std::string::npos) << table;
}

// Pairs without addresses of their own all use the params' two: on one segment they cannot
// run together, whatever their nodes.
TEST(Pairs, PairsOnTheParamsAddressesRunOneAfterAnother) {
    Params params;
    params.server_ip = "198.18.0.1";
    params.client_ip = "198.18.0.2";
    const auto p = plan(
        "pairs:\n  - {server: a, client: b}\n  - {server: c, client: d}\n"
        "  - {server: e, client: f}\n",
        params);
    EXPECT_EQ(waves(p), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(p.pairs[1].server_ip, "198.18.0.1");
}

// One IPv6 address written two ways is one address: the pairs holding it cannot run together.
TEST(Pairs, AnIpv6AddressWrittenTwoWaysIsOneAddress) {
    const auto p = plan(
        "pairs:\n"
        "  - {server: a, client: b, server_ip: '2001:2::1', client_ip: '2001:2::2'}\n"
        "  - {server: c, client: d, server_ip: '2001:2:0:0::1', client_ip: '2001:2::3'}\n"
        "  - {server: e, client: f, server_ip: '2001:2::4', client_ip: '2001:2::5'}\n");
    EXPECT_EQ(waves(p), (std::vector<int>{0, 1, 0}));
}

TEST(Pairs, PairsOnOneLinkRunOneAfterAnother) {
    const auto p = plan(
        "pairs:\n"
        "  - {server: a, client: b, server_ip: 10.0.0.1, client_ip: 10.0.0.2, link: uplink}\n"
        "  - {server: c, client: d, server_ip: 10.0.0.3, client_ip: 10.0.0.4, link: uplink}\n"
        "  - {server: e, client: f, server_ip: 10.0.0.5, client_ip: 10.0.0.6}\n");
    EXPECT_EQ(waves(p), (std::vector<int>{0, 1, 0}));
}

TEST(Pairs, BadInventoriesAreRefusedNamingTheField) {
    EXPECT_EQ(refusal("pairs:\n  - {server: a, client: a}\n"),
              "pairs[0].client: a is paired with itself");
    EXPECT_NE(refusal("pairs:\n  - {server: a, client: b}\n  - {server: a, client: b}\n")
                  .find("pairs[1]: a -> b is listed twice (also pairs[0])"),
              std::string::npos);
    EXPECT_NE(refusal("pairs:\n  - {server: a, clint: b}\n").find("pairs[0]: unknown key 'clint'"),
              std::string::npos);
    EXPECT_NE(refusal("pairs:\n  - {server: a}\n").find("pairs[0]: has no client"),
              std::string::npos);
    EXPECT_NE(
        refusal("pairs:\n  - {server: '-oProxyCommand=x', client: b}\n").find("pairs[0].server"),
        std::string::npos);
    EXPECT_NE(
        refusal("pairs:\n  - {server: a, client: b, server_ip: 10.0.0.1, client_ip: 10.1.0.1}\n")
            .find("pairs[0].client_ip: 10.0.0.1 and 10.1.0.1 are not in the same /24"),
        std::string::npos);
    EXPECT_NE(refusal("pairs:\n  - {server: a, client: b, server_ip: nowhere}\n")
                  .find("'nowhere' is not an IPv4 or IPv6 address"),
              std::string::npos);
    EXPECT_NE(refusal("pairs:\n  - {server: [a], client: b}\n")
                  .find("pairs[0].server: must be a single value"),
              std::string::npos);
    EXPECT_NE(refusal("pairs: []\n").find("pairs: must be a list of at least one pair"),
              std::string::npos);
    EXPECT_NE(refusal("np_port: 5201\n").find("must be a mapping with a 'pairs' list"),
              std::string::npos);
    EXPECT_NE(refusal("pairs: [\n").find("pairs.yml"), std::string::npos);
}

TEST(Pairs, TheScheduleRoundTripsThroughJson) {
    const auto p = plan(
        "pairs:\n"
        "  - {server: a, client: b, server_ip: 10.0.0.1, client_ip: 10.0.0.2, link: up}\n"
        "  - {server: b, client: c, server_ip: 10.0.0.2, client_ip: 10.0.0.3}\n");
    const auto j = to_json(p);
    EXPECT_EQ(j["schema"], "np-pairs/1");
    EXPECT_EQ(j["pairs"][1]["link"], nullptr);
    const auto back = pair_plan_from_json(j, "np_pairs.json");
    EXPECT_EQ(waves(back), waves(p));
    EXPECT_EQ(back.pairs[0].link, "up");

    auto renamed = j;
    renamed["pairs"][0]["name"] = "../../etc";
    EXPECT_THROW(pair_plan_from_json(renamed, "np_pairs.json"), InputError);
    auto beyond = j;
    beyond["pairs"][0]["wave"] = 7;
    EXPECT_THROW(pair_plan_from_json(beyond, "np_pairs.json"), InputError);
    auto hostile = j;
    hostile["pairs"][0]["server"] = "a/../../x";
    hostile["pairs"][0]["name"] = "a/../../x_b";
    EXPECT_THROW(pair_plan_from_json(hostile, "np_pairs.json"), InputError);
}

Contract contract_for(const std::string& a, const std::string& b, double tcp) {
    return parse_contract("{\"mode\": \"ansible\", \"node1\": \"" + a + "\", \"node2\": \"" + b +
                              "\", \"ping_rtt_ms\": 0.1, \"tcp_mbps\": " + std::to_string(tcp) +
                              ", \"udp_mbps\": 95.0, \"udp_loss_pct\": 0.0}",
                          "np_contract_ansible.json");
}

TEST(Pairs, TheTableShowsEveryPairAndFailsOnOneNotMeasured) {
    const auto p = plan(
        "pairs:\n"
        "  - {server: a, client: b, server_ip: 10.0.0.1, client_ip: 10.0.0.2}\n"
        "  - {server: c, client: d, server_ip: 10.0.0.3, client_ip: 10.0.0.4}\n");
    Explanation e;
    Verdict v;
    v.test = "ansible TCP";
    v.ceiling_bps = 94.15e6;
    v.verdict = "line-rate bound";
    e.verdicts.push_back(v);
    std::vector<PairOutcome> outcomes{{p.pairs[0], contract_for("a", "b", 94.0), e, ""},
                                      {p.pairs[1], {}, {}, "Preflight: d unreachable"}};
    auto r = check_pairs(outcomes);
    EXPECT_FALSE(r.pass);
    std::string table = render_pairs(outcomes, r);
    EXPECT_NE(table.find("94.0 / 94.2 (100 %)  line-rate bound"), std::string::npos) << table;
    EXPECT_NE(table.find("c -> d"), std::string::npos) << table;
    EXPECT_NE(table.find("PAIRS: FAIL (1 of 2 pairs measured; 1 with a problem)"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("c -> d: not measured: Preflight: d unreachable"), std::string::npos)
        << table;

    // Measured, but with an error finding: still a failure, named by its code.
    Finding f;
    f.code = "WRONG_INTERFACE";
    f.severity = Severity::error;
    e.findings.push_back(f);
    outcomes[1] = {p.pairs[1], contract_for("c", "d", 93.0), e, ""};
    r = check_pairs(outcomes);
    EXPECT_FALSE(r.pass);
    table = render_pairs(outcomes, r);
    EXPECT_NE(table.find("c -> d: WRONG_INTERFACE"), std::string::npos) << table;

    outcomes[0].explanation->findings.clear();
    outcomes[1].explanation->findings.clear();
    r = check_pairs(outcomes);
    EXPECT_TRUE(r.pass);
    EXPECT_NE(render_pairs(outcomes, r).find("PAIRS: PASS (2 of 2 pairs measured"),
              std::string::npos);
}

}  // namespace
}  // namespace np
