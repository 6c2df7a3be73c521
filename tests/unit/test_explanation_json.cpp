// An explanation read back from JSON (a contract's "explain", <mode>_findings.json) is the one
// the engine wrote: the report and other readers of a run dir rely on it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "common/errors.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;

TEST(ExplanationJson, ReadsBackWhatToJsonWrote) {
    ExplainInput in;
    in.link_bps = 100e6;
    for (const std::string f :
         {"iperf3/tcp-100m.json", "iperf3/udp-100m-b200M.json", "ping/iputils-ok.txt"})
        in.measurements.append(parse_measurements(fixture(f), f));
    const auto e = explain(in);
    const auto back = parse_explanation(nlohmann::json::parse(to_json(e).dump()), "explain");
    EXPECT_EQ(to_json(back), to_json(e));
    ASSERT_EQ(back.verdicts.size(), e.verdicts.size());
    EXPECT_NEAR(*back.verdicts[0].ratio, *e.verdicts[0].ratio, 1e-12);
    EXPECT_EQ(back.findings.at(0).code, e.findings.at(0).code);
}

TEST(ExplanationJson, AMalformedFindingNamesItsPath) {
    const auto doc = nlohmann::json::parse(
        R"({"findings": [{"code": "X", "severity": "fatal", "title": "t"}], "verdicts": []})");
    try {
        parse_explanation(doc, "np_contract_manual.json: explain");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "np_contract_manual.json: explain.findings[0].severity");
    }
}

TEST(ExplanationJson, MissingListsAreEmpty) {
    const auto e = parse_explanation(nlohmann::json::object(), "explain");
    EXPECT_TRUE(e.findings.empty());
    EXPECT_TRUE(e.verdicts.empty());
}

}  // namespace
}  // namespace np
