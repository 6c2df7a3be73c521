// Every document np-explain and np-probe write records the build that wrote it under one key,
// "generator" (common/version.hpp); documents written before that key existed stay readable.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "common/trace.hpp"
#include "common/version.hpp"
#include "report/report.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using nlohmann::json;
using testing::fixture;

Explanation explained_tcp() {
    ExplainInput in;
    in.measurements = parse_measurements(fixture("iperf3/tcp-100m.json"), "tcp-100m.json");
    in.link_bps = 100e6;
    return explain(in);
}

TEST(Version, IsTheCMakeProjectVersion) {
    EXPECT_EQ(version(), NP_PROJECT_VERSION);
}

TEST(Version, RevisionIsAnAbbreviatedCommitOrUnknown) {
    EXPECT_TRUE(std::regex_match(revision(), std::regex("[0-9a-f]{7,40}(-dirty)?|unknown")))
        << revision();
}

TEST(Version, LineNamesTheProgramTheVersionAndTheRevision) {
    EXPECT_EQ(version_line("np-probe"),
              std::string("np-probe ") + NP_PROJECT_VERSION + " (git " + revision() + ")");
}

TEST(Version, FindingsDocumentRecordsItsGenerator) {
    const json doc = to_json(explained_tcp());
    EXPECT_EQ(doc.at("generator"),
              json({{"program", "np-explain"}, {"version", version()}, {"revision", revision()}}));
}

TEST(Version, ContractAdditionsRecordTheirGenerator) {
    const Explanation e = explained_tcp();
    json contract = {{"mode", "ansible"}, {"tcp_mbps", 94.1}};
    attach_explanation(contract, e, {}, 100e6, {});
    EXPECT_EQ(contract.at("explain").at("generator").at("program"), "np-explain");
    EXPECT_EQ(contract.at("explain").at("generator").at("version"), version());
}

TEST(Version, FindingsWrittenBeforeTheGeneratorKeyStillRead) {
    json doc = to_json(explained_tcp());
    doc.erase("generator");
    EXPECT_EQ(parse_explanation(doc, "explain").findings.size(), explained_tcp().findings.size());
}

TEST(Version, TraceRecordsNpProbeAsItsGenerator) {
    // The fixture predates the key: it reads, and writing it out again adds it.
    const std::string text = fixture("probe/udp-overload-server.json");
    ASSERT_FALSE(json::parse(text).contains("generator"));
    const json doc = to_json(parse_trace_text(text));
    EXPECT_EQ(doc.at("generator"),
              json({{"program", "np-probe"}, {"version", version()}, {"revision", revision()}}));
}

TEST(Version, ReportShowsItsGenerator) {
    RunDirMode m;
    m.contract = parse_contract(R"({"mode": "ansible", "tcp_mbps": 94.1})", "c.json");
    ReportInput in;
    in.title = "run";
    in.generated_at = "2026-11-30 13:05 UTC";
    in.modes.push_back(m);
    const std::string line = version_line("np-explain");
    EXPECT_NE(render_report_markdown(in).find("generated 2026-11-30 13:05 UTC by " + line),
              std::string::npos);
    const std::string html = render_report_html(in, ChartScripts{"", "", ""});
    EXPECT_NE(html.find("<meta name=\"generator\" content=\"" + line + "\">"), std::string::npos);
}

}  // namespace
}  // namespace np
