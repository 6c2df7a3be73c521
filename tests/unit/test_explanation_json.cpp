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
    // It carries the link rate and each test's model, so no reader computes them again.
    EXPECT_EQ(back.link_bps, 100e6);
    ASSERT_TRUE(back.verdicts[0].ceiling.has_value());
    EXPECT_EQ(back.verdicts[0].ceiling->wire_bytes_per_unit,
              e.verdicts[0].ceiling->wire_bytes_per_unit);
    EXPECT_EQ(back.verdicts[0].ceiling->frames.size(), e.verdicts[0].ceiling->frames.size());
    EXPECT_DOUBLE_EQ(back.verdicts[0].ceiling->goodput_bps, e.verdicts[0].ceiling->goodput_bps);
    // (Evidence reads back in its keys' order, so only the header is compared whole.)
    const auto header = [](const std::string& text) { return text.substr(0, text.find('\n')); };
    EXPECT_EQ(header(render_explanation(back)), header(render_explanation(e)));
}

TEST(ExplanationJson, AVerdictsCeilingThatCannotBeIsRefusedNamingIt) {
    ExplainInput in;
    in.link_bps = 100e6;
    in.measurements.append(parse_measurements(fixture("iperf3/tcp-100m.json"), "tcp.json"));
    nlohmann::json doc = to_json(explain(in));
    doc["verdicts"][0]["ceiling"]["frames"] = nlohmann::json::array();
    try {
        parse_explanation(doc, "explain");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "explain.verdicts[0].ceiling.frames");
    }
    doc = to_json(explain(in));
    doc["link_mbps"] = -1;
    EXPECT_THROW(parse_explanation(doc, "explain"), InputError);
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
