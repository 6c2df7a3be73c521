#include <gtest/gtest.h>

#include <string>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/parity.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

// A contract as the tutorial's library writes it.
Contract contract(const std::string& mode, double rtt, double tcp, double udp, double loss,
                  const std::string& node2 = "node1-2", const std::string& extra = "") {
    const std::string text =
        "{\"mode\": \"" + mode + "\", \"ping_rtt_ms\": " + std::to_string(rtt) +
        ", \"tcp_mbps\": " + std::to_string(tcp) + ", \"udp_mbps\": " + std::to_string(udp) +
        ", \"udp_loss_pct\": " + std::to_string(loss) + ", \"node1\": \"node1-1\", \"node2\": \"" +
        node2 + "\"" + extra + "}";
    return parse_contract(text, "np_contract_" + mode + ".json");
}

std::vector<Contract> tutorial_sample() {
    return {contract("ansible", 0.268, 934.0, 949.0, 0.0),
            contract("manual", 0.273, 934.0, 949.0, 0.0),
            contract("jupyter", 0.259, 934.0, 949.0, 0.0)};
}

TEST(Parity, TutorialSampleTablePasses) {
    const auto contracts = tutorial_sample();
    const auto r = check_parity(contracts);
    EXPECT_TRUE(r.pass);
    const auto text = render_parity(contracts, r);
    EXPECT_NE(text.find("PARITY: PASS (same experiment in all modes; all checks green)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("ansible        0.268     934.0     949.0           0.0  node1-1  node1-2"),
              std::string::npos)
        << text;
}

TEST(Parity, ThroughputMoreThanOnePercentApartFails) {
    auto contracts = tutorial_sample();
    contracts[1] = contract("manual", 0.273, 920.0, 949.0, 0.0);  // 934/920 = 1.015
    const auto r = check_parity(contracts);
    EXPECT_FALSE(r.pass);
    EXPECT_NE(render_parity(contracts, r).find("PARITY: FAIL (tcp_mbps differs)"),
              std::string::npos);
}

// A run whose own repetitions (run --repeat) spread 2 % apart: two modes 1.5 % apart differ no
// more than that run differs from itself, and the check says why it allowed more.
TEST(Parity, TheSpreadOfARunsOwnRepetitionsWidensWhatParityAllows) {
    auto contracts = tutorial_sample();
    contracts[1] = contract("manual", 0.273, 920.0, 949.0, 0.0);  // 934/920 = 1.015
    const std::string repeated =
        ", \"explain\": {\"findings\": [{\"code\": \"REPEAT_SPREAD\", \"severity\": "
        "\"info\", \"test\": \"iperf3 TCP\", \"title\": \"t\", \"evidence\": "
        "{\"spread_pct\": 2.0}}]}";
    contracts.push_back(contract("np-explain", 0.26, 930.0, 949.0, 0.0, "node1-2", repeated));
    const auto r = check_parity(contracts);
    EXPECT_TRUE(r.pass) << render_parity(contracts, r);
    EXPECT_NE(r.checks[0].summary.find("widened from 1.010 to the np-explain run's own "
                                       "repetitions, 2.00 % apart"),
              std::string::npos)
        << r.checks[0].summary;
    EXPECT_EQ(r.checks[1].summary.find("widened"), std::string::npos);  // UDP was not repeated
}

// A clean clone's parity harness (5-s tests on the 100M testbed, jumbo frames): UDP 99.25,
// 98.22 and 99.01 Mbit/s, 1.1 % apart, each mode's own explanation at 98.9 % of its 99.32
// Mbit/s ceiling or more. Each may be anywhere in the engine's line-rate band, so the check
// allows its width and says why; one mode below the band is held to 1 % as before.
TEST(Parity, ModesAllAtTheLineRateMayDifferByTheLineRateBand) {
    const auto at = [](const std::string& mode, double udp, double pct, double ceiling = 99.32) {
        const std::string explained =
            ", \"explain\": {\"verdicts\": [{\"test\": \"iperf3 TCP\", \"pct_of_ceiling\": "
            "99.9, \"ceiling_mbps\": 99.0}, {\"test\": \"iperf3 UDP\", \"pct_of_ceiling\": " +
            std::to_string(pct) + ", \"ceiling_mbps\": " + std::to_string(ceiling) + "}]}";
        return contract(mode, 0.08, 98.4, udp, 0.0, "node1-2", explained);
    };
    std::vector<Contract> contracts = {at("ansible", 99.01, 99.69), at("manual", 99.25, 99.93),
                                       at("jupyter", 98.22, 98.89)};
    auto r = check_parity(contracts);
    EXPECT_TRUE(r.pass) << render_parity(contracts, r);
    EXPECT_NE(r.checks[1].summary.find("widened from 1.010 to 1.015: each mode's own "
                                       "explanation put its UDP test within 1.5 % of its "
                                       "ceiling, the line-rate band"),
              std::string::npos)
        << r.checks[1].summary;
    EXPECT_EQ(r.checks[0].summary.find("widened"), std::string::npos);  // TCP needed no more
    // One mode under the band: 1 %, and the spread fails.
    contracts[2] = at("jupyter", 98.22, 98.40);
    r = check_parity(contracts);
    EXPECT_FALSE(r.pass) << render_parity(contracts, r);
    EXPECT_EQ(r.checks[1].summary.find("widened"), std::string::npos);
    // A mode without an explanation says nothing of the band.
    contracts[2] = contract("jupyter", 0.08, 98.4, 98.22, 0.0);
    EXPECT_FALSE(check_parity(contracts).pass);
    // Even within the band, modes further apart than it is wide fail.
    contracts[2] = at("jupyter", 97.0, 98.6);
    EXPECT_FALSE(check_parity(contracts).pass);
    // Above its ceiling is not at the line rate, nor are modes held against other ceilings.
    contracts[2] = at("jupyter", 98.22, 101.0);
    EXPECT_FALSE(check_parity(contracts).pass);
    contracts[2] = at("jupyter", 98.22, 99.5, 98.7);
    EXPECT_FALSE(check_parity(contracts).pass);
}

TEST(Parity, ThroughputWithinOnePercentPasses) {
    auto contracts = tutorial_sample();
    contracts[1] = contract("manual", 0.273, 926.0, 949.0, 0.0);  // 934/926 = 1.0086
    EXPECT_TRUE(check_parity(contracts).pass);
}

TEST(Parity, LossMoreThanHalfAPointApartFails) {
    auto contracts = tutorial_sample();
    contracts[2] = contract("jupyter", 0.259, 934.0, 949.0, 0.6);
    const auto r = check_parity(contracts);
    EXPECT_FALSE(r.pass);
    EXPECT_FALSE(r.checks[2].pass);
    EXPECT_EQ(r.checks[2].figure, "udp_loss_pct");
}

TEST(Parity, RttIsOnlyCheckedWithinFiftyPercent) {
    auto contracts = tutorial_sample();
    contracts[0] = contract("ansible", 0.380, 934.0, 949.0, 0.0);  // 0.380/0.259 = 1.47
    EXPECT_TRUE(check_parity(contracts).pass);
    contracts[0] = contract("ansible", 0.400, 934.0, 949.0, 0.0);  // 1.54
    EXPECT_FALSE(check_parity(contracts).pass);
}

// Suite runs of the parity harness: ping's averages 0.186 and 0.108 ms (1.72 apart), and 0.176,
// 0.133 and 0.107. A tenth of a millisecond is one slow wake-up of a loaded host, not a path:
// averages within 0.1 ms of each other pass whatever their ratio, and the check says why. Past
// the floor the ratio holds again, and a mode without a figure still fails.
TEST(Parity, SubMillisecondRttsWithinATenthOfAMillisecondPassWhateverTheirRatio) {
    std::vector<Contract> contracts = {contract("manual", 0.108, 98.4, 99.0, 0.0),
                                       contract("ansible", 0.133, 98.4, 99.0, 0.0),
                                       contract("jupyter", 0.186, 98.4, 99.0, 0.0)};
    auto r = check_parity(contracts);
    EXPECT_TRUE(r.pass) << render_parity(contracts, r);
    EXPECT_NE(r.checks[3].summary.find("spread 1.722"), std::string::npos) << r.checks[3].summary;
    EXPECT_NE(r.checks[3].summary.find("passed: 0.078 ms apart, within 0.1 ms"), std::string::npos)
        << r.checks[3].summary;
    // 0.109 ms apart: past the floor, and the ratio (2.0) fails it.
    contracts[2] = contract("jupyter", 0.217, 98.4, 99.0, 0.0);
    EXPECT_FALSE(check_parity(contracts).pass);
    // Past the floor, averages within the spread of one mode's own pings (its explanation's
    // mdev) pass too, saying whose: 0.187 / 0.307 / 0.396 ms in a suite run.
    const auto pinged = [](const std::string& mode, double avg, double mdev) {
        return contract(mode, avg, 98.4, 99.0, 0.0, "node1-2",
                        ", \"explain\": {\"findings\": [{\"code\": \"PING_RTT\", \"severity\": "
                        "\"info\", \"test\": \"ping 198.18.2.1\", \"title\": \"t\", "
                        "\"evidence\": {\"rtt_mdev_ms\": " +
                            std::to_string(mdev) + "}}]}");
    };
    contracts = {pinged("ansible", 0.187, 0.031), pinged("manual", 0.396, 0.522),
                 pinged("jupyter", 0.307, 0.204)};
    r = check_parity(contracts);
    EXPECT_TRUE(r.pass) << render_parity(contracts, r);
    EXPECT_NE(r.checks[3].summary.find("passed: 0.209 ms apart, within the spread of manual's own "
                                       "pings (mdev 0.522 ms)"),
              std::string::npos)
        << r.checks[3].summary;
    // Replies that all agree within a mode leave a difference between modes a difference.
    contracts[1] = pinged("manual", 0.396, 0.05);
    EXPECT_FALSE(check_parity(contracts).pass);
    // Longer round trips: the ratio alone, as for 0.259 against 0.400 ms.
    contracts = {contract("manual", 0.259, 98.4, 99.0, 0.0),
                 contract("jupyter", 0.400, 98.4, 99.0, 0.0)};
    EXPECT_FALSE(check_parity(contracts).pass);
    // Within the ratio, nothing more is said.
    contracts[1] = contract("jupyter", 0.3, 98.4, 99.0, 0.0);
    r = check_parity(contracts);
    EXPECT_TRUE(r.pass);
    EXPECT_EQ(r.checks[3].summary.find("passed:"), std::string::npos) << r.checks[3].summary;
    // A mode without its ping: it fails, named, floor or not.
    contracts[1] = parse_contract(
        R"({"mode": "jupyter", "ping_rtt_ms": null, "tcp_mbps": 98.4, "udp_mbps": 99.0,
            "udp_loss_pct": 0.0, "node1": "node1-1", "node2": "node1-2"})",
        "np_contract_jupyter.json");
    r = check_parity(contracts);
    EXPECT_FALSE(r.checks[3].pass);
    EXPECT_NE(r.checks[3].summary.find("jupyter"), std::string::npos) << r.checks[3].summary;
}

TEST(Parity, DifferentNodesFail) {
    auto contracts = tutorial_sample();
    contracts[1] = contract("manual", 0.273, 934.0, 949.0, 0.0, "node1-3");
    const auto r = check_parity(contracts);
    EXPECT_FALSE(r.pass);
    EXPECT_NE(render_parity(contracts, r).find("manual node1-1/node1-3"), std::string::npos);
}

TEST(Parity, AFigureMissingInOneModeFailsNamingTheMode) {
    auto contracts = tutorial_sample();
    contracts[2] = parse_contract(
        R"({"mode": "jupyter", "ping_rtt_ms": 0.259, "tcp_mbps": 934.0, "udp_mbps": null,
            "udp_loss_pct": 0.0, "node1": "node1-1", "node2": "node1-2"})",
        "np_contract_jupyter.json");
    const auto r = check_parity(contracts);
    EXPECT_FALSE(r.pass);
    EXPECT_NE(render_parity(contracts, r).find("udp_mbps      not measured in jupyter"),
              std::string::npos)
        << render_parity(contracts, r);
}

TEST(Parity, FailNamesTheEvidenceThatDiffers) {
    auto contracts = tutorial_sample();
    contracts[1] =
        contract("manual", 0.273, 612.0, 949.0, 0.0, "node1-2",
                 R"(, "explain": {"findings": [{"code": "WRONG_INTERFACE", "severity": "error",
              "title": "The measured traffic did not cross the data NIC"}]})");
    const auto r = check_parity(contracts);
    EXPECT_FALSE(r.pass);
    ASSERT_EQ(r.differing_evidence.size(), 1u);
    EXPECT_EQ(r.differing_evidence[0],
              "manual: WRONG_INTERFACE — The measured traffic did not cross the data NIC (not in "
              "ansible, jupyter)");
}

TEST(Contract, KeepsFieldsItDoesNotKnow) {
    const auto c =
        contract("manual", 0.27, 934, 949, 0, "node1-2", R"(, "tutorial_version": "2026.08")");
    EXPECT_EQ(c.document["tutorial_version"], "2026.08");
    EXPECT_EQ(c.node2, "node1-2");
}

TEST(Contract, MalformedOrMistypedIsAnInputErrorNamingTheField) {
    EXPECT_THROW(parse_contract("{\"mode\": \"manual\", ", "np_contract_manual.json"), InputError);
    EXPECT_THROW(parse_contract("[]", "x.json"), InputError);
    try {
        parse_contract(R"({"mode": "manual", "tcp_mbps": "fast"})", "np_contract_manual.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "np_contract_manual.json: tcp_mbps");
    }
    try {
        parse_contract(R"({"tcp_mbps": 934})", "c.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "c.json: mode");
    }
}

// link_mbps is np-explain's own key: attach and report read it only through the contract.
TEST(Contract, TheLinkRateIsReadOnceAsBitsPerSecondAndABadOneNamesTheField) {
    EXPECT_EQ(parse_contract(R"({"mode": "manual", "link_mbps": 100})", "c.json").link_bps, 1e8);
    EXPECT_FALSE(parse_contract(R"({"mode": "manual", "link_mbps": null})", "c.json").link_bps);
    EXPECT_FALSE(parse_contract(R"({"mode": "manual"})", "c.json").link_bps);
    for (const char* bad :
         {R"({"mode": "manual", "link_mbps": "1G"})", R"({"mode": "manual", "link_mbps": 0})",
          R"({"mode": "manual", "link_mbps": -100})"}) {
        try {
            parse_contract(bad, "c.json");
            ADD_FAILURE() << bad;
        } catch (const InputError& e) {
            EXPECT_EQ(e.field(), "c.json: link_mbps") << bad;
        }
    }
}

}  // namespace
}  // namespace np
