// The report's charts are data: these tests read the Vega-Lite specs, the HTML and the Markdown
// built from the raw files of a complete run dir (tests/fixtures/run-report: a real `run --local`
// on the 100M profile, see its README) rather than a browser's rendering (tests/browser).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "analysis/explanation/ceiling_search.hpp"
#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "common/errors.hpp"
#include "common/trace.hpp"
#include "report/report.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using nlohmann::json;
using testing::fixture;

// What `run` leaves in a run dir, rebuilt from the fixture's raw files the way `run` builds it.
RunDirMode run_100m_mode() {
    RunDirMode m;
    m.measurements.append(
        parse_measurements(fixture("run-report/np-explain_ping.txt"), "np-explain_ping.txt"));
    for (const std::string f : {"np-explain_tcp.json", "np-explain_udp.json"})
        m.measurements.append(parse_measurements(fixture("run-report/" + f), f));
    for (const std::string node : {"node1-1", "node1-2"})
        m.traces.push_back(
            parse_trace_text(fixture("run-report/np-explain_trace_" + node + ".json")));
    const Explanation e = explain(ExplainInput{m.measurements, 100e6, m.traces});
    const json doc = build_contract("np-explain", "node1-1", "node1-2", m.measurements, e,
                                    {"np-explain_trace_node1-1.json"}, 100e6);
    m.contract = parse_contract(doc.dump(), "np_contract_np-explain.json");
    m.explanation = parse_explanation(doc.at("explain"), "explain");
    return m;
}

// A tutorial mode's own contract: its figures and nothing of np-explain's.
RunDirMode tutorial_mode(const std::string& mode, double tcp, double udp) {
    RunDirMode m;
    const json doc = {{"mode", mode},      {"ping_rtt_ms", 0.07}, {"tcp_mbps", tcp},
                      {"udp_mbps", udp},   {"udp_loss_pct", 0.5}, {"node1", "node1-1"},
                      {"node2", "node1-2"}};
    m.contract = parse_contract(doc.dump(), "np_contract_" + mode + ".json");
    return m;
}

ReportInput one_mode() {
    ReportInput in;
    in.title = "run-report";
    in.generated_at = "2026-11-30 13:05 UTC";
    in.modes.push_back(run_100m_mode());
    return in;
}

const ChartScripts kScripts{"/*vega*/", "/*vega-lite*/", "/*vega-embed*/"};

// Every "values" array in a spec (top level and layers).
size_t count_rows(const json& spec) {
    size_t n = 0;
    if (spec.is_object()) {
        for (const auto& [k, v] : spec.items()) {
            if (k == "values" && v.is_array()) {
                n += v.size();
            } else {
                n += count_rows(v);
            }
        }
    } else if (spec.is_array()) {
        for (const auto& v : spec) n += count_rows(v);
    }
    return n;
}

Chart chart(const std::vector<Chart>& charts, const std::string& id) {
    for (const auto& c : charts)
        if (c.id == id) return c;
    throw std::runtime_error("no chart " + id);
}

// Rows of a chart's main data (spec.data.values, else the first layer's).
const json& chart_rows(const Chart& c) {
    if (c.spec.contains("data")) return c.spec.at("data").at("values");
    return c.spec.at("layer").at(0).at("data").at("values");
}

size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(Report, EveryChartOfARealRunHasDataRows) {
    const auto charts = report_charts(one_mode());
    std::vector<std::string> ids;
    for (const auto& c : charts) {
        ids.push_back(c.id);
        EXPECT_GT(c.data_rows, 0u) << c.id;
        EXPECT_EQ(count_rows(c.spec), c.data_rows) << c.id;
        EXPECT_FALSE(c.caption.empty()) << c.id;
    }
    EXPECT_EQ(ids, (std::vector<std::string>{"ceiling", "frame", "ledger", "throughput", "events",
                                             "drops", "latency"}));
}

TEST(Report, CeilingChartPutsEachTestBesideTheModelsCeilingAndTheLinkRate) {
    const Chart c = chart(report_charts(one_mode()), "ceiling");
    const json& r = chart_rows(c);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0]["test"], "TCP");
    EXPECT_NEAR(r[0]["measured_mbps"].get<double>(), 91.86, 0.01);
    EXPECT_NEAR(r[0]["ceiling_mbps"].get<double>(), 94.15, 0.01);
    EXPECT_EQ(r[1]["test"], "UDP");
    EXPECT_NEAR(r[1]["ceiling_mbps"].get<double>(), 95.64, 0.01);
    EXPECT_EQ(c.spec.at("layer").back().at("data").at("values").at(0).at("link_mbps"), 100.0);
}

// run --find-udp-ceiling's finding carries its steps: the chart draws the loss each offered load
// met, beside the threshold and the model's ceiling, and gets a section of its own.
TEST(Report, TheUdpCeilingSearchIsDrawnAsLossAgainstOfferedLoad) {
    ReportInput in = one_mode();
    CeilingSearch search(95.64e6, 0.1);
    for (const auto& [offered, lost] : {std::pair{95.64e6, 500}, std::pair{47.82e6, 0}}) {
        ThroughputTest t;
        t.transport = Transport::udp;
        t.datagrams_total = 10'000;
        t.datagrams_lost = lost;
        t.received_bps = offered;
        search.record(CeilingStep{offered, "udp-ceiling", "f.json", t});
    }
    in.modes[0].explanation->findings.push_back(udp_ceiling_finding(search, {}));
    const Chart c = chart(report_charts(in), "udp-ceiling");
    EXPECT_EQ(count_rows(c.spec), c.data_rows);
    const json& steps = c.spec.at("layer").at(0).at("data").at("values");
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0]["offered_mbps"], 95.64);
    EXPECT_EQ(steps[0]["loss_pct"], 5.0);
    EXPECT_EQ(steps[1]["loss_pct"], 0.0);
    EXPECT_EQ(c.spec.at("layer").at(1).at("data").at("values").at(0).at("threshold_pct"), 0.1);
    const std::string page = render_report_html(in, {"", "", ""});
    EXPECT_NE(page.find("<h2 id=\"udp-ceiling\">"), std::string::npos);
}

TEST(Report, FrameBreakdownAddsUpToTheWireBytesOfOneFrame) {
    const Chart c = chart(report_charts(one_mode()), "frame");
    int tcp = 0, udp = 0;
    for (const auto& r : chart_rows(c)) {
        const std::string unit = r["unit"];
        (unit.starts_with("TCP") ? tcp : udp) += r["bytes"].get<int>();
    }
    EXPECT_EQ(tcp, 1538);
    EXPECT_EQ(udp, 1514);
    EXPECT_NE(c.caption.find("of every 1538 bytes on the wire, 1448 carry data"),
              std::string::npos);
}

TEST(Report, ThroughputOverTimeIsWireBytesTimesEightOverTheInterval) {
    const auto in = one_mode();
    const Chart c = chart(report_charts(in), "throughput");
    // node1-2 (client), sample at t_ms 5100 of the tcp phase (started at 2652 ms): 1255008 B
    // in 100 ms = 100.40 Mbit/s on the wire.
    bool found = false;
    for (const auto& r : chart_rows(c)) {
        if (r["series"] == "node1-2 (client) tx" && r["phase"] == "tcp" &&
            std::abs(r["t_s"].get<double>() - 2.448) < 1e-9) {
            EXPECT_NEAR(r["mbps"].get<double>(), 100.40, 0.01);
            found = true;
        }
    }
    EXPECT_TRUE(found);
    // The ceiling drawn in is the link rate: wire bytes include every frame's overhead.
    EXPECT_EQ(c.spec.at("spec").at("layer").at(1).at("encoding").at("y").at("datum"), 100.0);
    // The setup time before the first phase is not plotted.
    for (const auto& r : chart_rows(c)) EXPECT_NE(r["phase"], "default");
}

TEST(Report, ALongPhaseIsPlottedWithSamplesMergedAndItsBytesKept) {
    auto in = one_mode();
    Trace& t = in.modes[0].traces[0];
    PhaseTrace* tcp = nullptr;
    for (auto& p : t.phases)
        if (p.name == "tcp") tcp = &p;
    ASSERT_NE(tcp, nullptr);
    // An hour of 100 ms samples at a steady 100 Mbit/s on the wire.
    std::vector<TraceSample> hour;
    for (int i = 1; i <= 36000; ++i)
        hour.push_back({tcp->start_ms + i * 100, 100, "tcp", 0, 0, 1250000, 0, 0,
                        static_cast<uint64_t>(i % 2)});
    t.samples = hour;
    const Chart c = chart(report_charts(in), "throughput");
    size_t points = 0;
    for (const auto& r : chart_rows(c)) {
        if (r["series"] != "node1-1 (server) tx") continue;
        ++points;
        EXPECT_NEAR(r["mbps"].get<double>(), 100.0, 1e-9);
    }
    EXPECT_EQ(points, 600u);
    uint64_t drops = 0;
    const Chart events = chart(report_charts(in), "events");
    for (const auto& r : chart_rows(events))
        if (r["series"] == "node1-1 (server) drops") drops += r["count"].get<uint64_t>();
    EXPECT_EQ(drops, 18000u);
}

TEST(Report, DropsByReasonShowTheReceiversFullSocketBuffer) {
    const Chart c = chart(report_charts(one_mode()), "drops");
    uint64_t rcvbuf = 0;
    for (const auto& r : chart_rows(c))
        if (r["where"] == "node1-1 · SOCKET_RCVBUFF") rcvbuf += r["packets"].get<uint64_t>();
    EXPECT_EQ(rcvbuf, 102u);
    // Beside it, what cost the test nothing is labelled so: TCP's teardown, ping's ICMP.
    std::set<std::string> labels;
    for (const auto& r : chart_rows(c)) labels.insert(r["where"].get<std::string>());
    EXPECT_TRUE(labels.count("node1-1 · TCP_FLAGS (housekeeping)")) << c.spec.dump();
    EXPECT_TRUE(labels.count("node1-2 · NO_SOCKET (other traffic)")) << c.spec.dump();
}

TEST(Report, TheLedgerShowsEachTestsPacketsPointByPointWithTheDropsBetween) {
    const Chart c = chart(report_charts(one_mode()), "ledger");
    std::vector<std::string> udp;
    for (const auto& r : chart_rows(c)) {
        if (r["test"] != "iperf3 UDP (node1-2 → node1-1, datagrams)") continue;
        udp.push_back(fmt::format("{} {} {}", r["step"].get<std::string>(),
                                  r["packets"].get<uint64_t>(), r["kind"].get<std::string>()));
    }
    EXPECT_EQ(udp, (std::vector<std::string>{
                       "1. sent by the application 23973 counted",
                       "2. passed the sender's egress hook (before its queue) 23974 counted",
                       "3. left the sender's NIC (after its queue) 23974 inferred",
                       "4. arrived at the receiver's NIC (its ingress hook) 23974 counted",
                       "− SOCKET_RCVBUFF on node1-1 102 lost",
                       // Taken by the socket, read by no one when the phase was cut
                       // (UdpInDatagrams): not lost.
                       "· still unread in the receiving socket 1 queued",
                       // Counted by the sender past the receiver's total (23,973 against
                       // 23,972): arrived after iperf3 stopped counting, not lost.
                       "· arrived after the receiver's count ended 1 queued",
                       "5. delivered to the application 23870 counted"}));
    // TCP's drops at teardown and on the ACK path are drawn, as what they are: not loss.
    std::set<std::string> tcp_kinds;
    for (const auto& r : chart_rows(c))
        if (r["step"].get<std::string>().starts_with("− ") &&
            r["test"].get<std::string>().starts_with("iperf3 TCP"))
            tcp_kinds.insert(r["kind"].get<std::string>());
    EXPECT_EQ(tcp_kinds, (std::set<std::string>{"housekeeping", "other direction"}));
}

TEST(Report, TheMarkdownHasEachTestsLedgerAsATable) {
    const std::string md = render_report_markdown(one_mode());
    EXPECT_NE(md.find("## Where the packets went"), std::string::npos) << md;
    EXPECT_NE(md.find("| − SOCKET_RCVBUFF on node1-1 | node1-1 | 102 | lost: at the receiving "
                      "socket |"),
              std::string::npos)
        << md;
}

TEST(Report, LatencyChartHasEveryReplyAndTheAverage) {
    const Chart c = chart(report_charts(one_mode()), "latency");
    const auto& layers = c.spec.at("layer");
    const auto& replies = layers.at(0).at("data").at("values");
    ASSERT_EQ(replies.size(), 10u);
    EXPECT_EQ(replies[0]["seq"], 1);
    EXPECT_EQ(replies[0]["rtt_ms"], 0.149);
    EXPECT_EQ(layers.at(1).at("data").at("values").at(0).at("avg_ms"), 0.063);
}

// Ping's echoes stamped by both probes: one bar per phase, stacked by the stage each part of the
// round trip was spent in, the pinging node's queue first; a run without echoes has no such chart.
TEST(Report, TheRoundTripIsStackedByStagePerPhase) {
    ReportInput in = one_mode();
    EXPECT_THROW(chart(report_charts(in), "round-trip"), std::runtime_error);
    auto& traces = in.modes[0].traces;  // node1-1 answered, node1-2 pinged
    for (const auto& [phase, queue_ns] : {std::pair{"ping", 10000}, {"udp", 5500000}}) {
        for (auto* t : {&traces[0], &traces[1]}) {
            for (auto& p : t->phases) {
                if (p.name != phase) continue;
                EchoTrace e{.id = 3, .seq = 1, .family = 4};
                if (t == &traces[1]) {
                    e.ns = {
                        0, queue_ns, std::nullopt, std::nullopt, std::nullopt, queue_ns + 40000};
                } else {
                    e.ns = {std::nullopt, std::nullopt, 0, 18000, 20000, std::nullopt};
                }
                p.echoes = {e};
            }
        }
    }
    const Chart c = chart(report_charts(in), "round-trip");
    const json& rows = chart_rows(c);
    ASSERT_EQ(rows.size(), 8u);  // two phases, four stages each
    EXPECT_EQ(rows[0]["phase"], "ping");
    EXPECT_EQ(rows[0]["stage"], "node1-2's egress queue");
    EXPECT_EQ(rows[0]["ms"], 0.01);
    EXPECT_EQ(rows[4]["phase"], "udp");
    EXPECT_EQ(rows[4]["ms"], 5.5);
    double udp = 0;
    for (const auto& r : rows)
        if (r["phase"] == "udp") udp += r["ms"].get<double>();
    EXPECT_NEAR(udp, 5.54, 1e-9);  // the round trip at node1-2's hooks
    EXPECT_EQ(rows[5]["stage"], "path beyond both NICs");
    EXPECT_EQ(rows[5]["ms"], 0.02);
    EXPECT_EQ(rows[6]["stage"], "node1-1 answering");
    EXPECT_EQ(rows[7]["stage"], "node1-1's egress queue");
}

// The flow's 1 ms bins: a row per node and direction that carried the flow (the ACKs' left
// out), its bins an array the spec flattens into one point a millisecond, the first 3 s of each.
TEST(Report, TheBinsAreDrawnPerPhaseAsEachNodeSentAndReceivedThem) {
    ReportInput in = one_mode();
    EXPECT_THROW(chart(report_charts(in), "bins"), std::runtime_error);
    auto& traces = in.modes[0].traces;  // node1-1 the server, node1-2 the client
    for (auto& p : traces[1].phases)
        if (p.name == "udp") p.bins = PhaseBins{1, std::vector<uint64_t>(5000, 12500), {0, 10}};
    for (auto& p : traces[0].phases)
        if (p.name == "udp") p.bins = PhaseBins{1, {0, 10}, std::vector<uint64_t>(4000, 12000)};
    const Chart c = chart(report_charts(in), "bins");
    const json& rows = c.spec.at("data").at("values");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(c.data_rows, 2u);
    EXPECT_EQ(rows[0]["series"], "node1-1 (server) rx");
    EXPECT_EQ(rows[0]["mbps"].size(), 3000u);
    EXPECT_EQ(rows[0]["mbps"][0], 96.0);
    EXPECT_EQ(rows[1]["series"], "node1-2 (client) tx");
    EXPECT_EQ(rows[1]["mbps"][2999], 100.0);
    EXPECT_EQ(c.spec.at("transform").at(0).at("flatten"), json::array({"mbps"}));
}

TEST(Report, HtmlIsOnePageThatFetchesNothing) {
    const std::string page = render_report_html(one_mode(), kScripts);
    EXPECT_EQ(occurrences(page, "<div class=\"vega\""), 7u);
    EXPECT_EQ(occurrences(page, "<script type=\"application/json\""), 7u);
    for (const char* script : {"/*vega*/", "/*vega-lite*/", "/*vega-embed*/"})
        EXPECT_EQ(occurrences(page, script), 1u) << script;
    // No external resource: no src=, no href=, no stylesheet link, no URL.
    EXPECT_EQ(occurrences(page, " src="), 0u);
    EXPECT_EQ(occurrences(page, "href="), 0u);
    EXPECT_EQ(occurrences(page, "http://"), 0u);
    EXPECT_EQ(occurrences(page, "https://"), 0u);
    EXPECT_NE(page.find("data-charts-rendered"), std::string::npos);
}

TEST(Report, HtmlPutsTheVerdictsFirstAndEveryFindingWithItsEvidence) {
    const auto in = one_mode();
    const std::string page = render_report_html(in, kScripts);
    const size_t verdicts = page.find("id=\"verdicts\"");
    const size_t charts = page.find("id=\"charts\"");
    const size_t findings = page.find("id=\"findings\"");
    ASSERT_NE(verdicts, std::string::npos);
    EXPECT_LT(verdicts, charts);
    EXPECT_LT(charts, findings);
    EXPECT_NE(page.find("line-rate bound"), std::string::npos);
    for (const auto& f : in.modes[0].explanation->findings) {
        EXPECT_NE(page.find("<code>" + f.code + "</code>"), std::string::npos) << f.code;
        for (const auto& [k, v] : f.evidence)
            EXPECT_NE(page.find("<td>" + k + "</td>"), std::string::npos) << f.code << " " << k;
    }
    EXPECT_EQ(page.find("id=\"parity\""), std::string::npos);  // one mode: nothing to compare
}

TEST(Report, ParitySectionOnlyWithSeveralModes) {
    auto in = one_mode();
    EXPECT_EQ(render_report_markdown(in).find("## Parity"), std::string::npos);
    const Contract& run = in.modes[0].contract;  // the manual mode measured the same
    in.modes.insert(in.modes.begin(),
                    tutorial_mode("manual", *run.tcp_mbps * 1.002, *run.udp_mbps * 0.999));
    const std::string page = render_report_html(in, kScripts);
    EXPECT_NE(page.find("id=\"parity\""), std::string::npos);
    EXPECT_NE(page.find("=== network-performance parity ==="), std::string::npos);
    EXPECT_NE(page.find("PARITY: PASS"), std::string::npos);
    const std::string md = render_report_markdown(in);
    EXPECT_NE(md.find("## Parity\n\n```text\n=== network-performance parity ==="),
              std::string::npos);
    // Both modes' bars, the tutorial's against the ceiling np-explain's run measured.
    const Chart c = chart(report_charts(in), "ceiling");
    ASSERT_EQ(chart_rows(c).size(), 4u);
    EXPECT_EQ(chart_rows(c)[0]["mode"], "manual");
    EXPECT_NEAR(chart_rows(c)[0]["ceiling_mbps"].get<double>(), 94.15, 0.01);
}

TEST(Report, ATutorialContractAloneGetsTheChartsItHasDataFor) {
    ReportInput in;
    in.title = "tutorial";
    in.modes.push_back(tutorial_mode("ansible", 934.0, 949.0));
    std::vector<std::string> ids;
    for (const auto& c : report_charts(in)) ids.push_back(c.id);
    EXPECT_EQ(ids, (std::vector<std::string>{"ceiling", "latency"}));
    const auto gaps = report_gaps(in);
    const auto mentions = [&](const std::string& what) {
        for (const auto& g : gaps)
            if (g.find(what) != std::string::npos) return true;
        return false;
    };
    EXPECT_TRUE(mentions("No link rate"));
    EXPECT_TRUE(mentions("No probe traces"));
    const std::string page = render_report_html(in, kScripts);
    EXPECT_NE(page.find("No np-explain explanation in this contract"), std::string::npos);
}

TEST(Report, MarkdownHasTheVerdictTableAndFindingsWithEvidence) {
    const std::string md = render_report_markdown(one_mode());
    EXPECT_NE(md.find("| test | measured | ceiling | % of ceiling | verdict |"), std::string::npos);
    EXPECT_NE(md.find("| iperf3 TCP | 91.86 Mbit/s | 94.15 Mbit/s | 97.57 % |"), std::string::npos);
    EXPECT_NE(md.find("(`LINE_RATE_BOUND`)"), std::string::npos);
    EXPECT_NE(md.find("  - evidence: "), std::string::npos);
    EXPECT_NE(md.find("`ceiling_mbps = 94.15`"), std::string::npos);
    EXPECT_NE(md.find("| np-explain | 10 of 10 | 0.00 % | 0.051 / 0.063 / 0.149 ms |"),
              std::string::npos);
}

TEST(Report, TextFromTheRunDirIsEscaped) {
    auto in = one_mode();
    in.modes[0].explanation->findings[0].title = "</script><script>alert(1)</script>";
    in.modes[0].explanation->findings[0].code = "X&Y";
    const std::string page = render_report_html(in, kScripts);
    EXPECT_EQ(page.find("<script>alert(1)"), std::string::npos);
    EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
    EXPECT_NE(page.find("<code>X&amp;Y</code>"), std::string::npos);
    // Inside a spec's JSON, '<' is written as \u003c and cannot end the element.
    in.modes[0].contract.mode = "</script>";
    const std::string again = render_report_html(in, kScripts);
    EXPECT_NE(again.find("\\u003c/script>"), std::string::npos);
}

TEST(Report, AScriptThatWouldEndItsElementIsRefused) {
    const ChartScripts bad{"var s = '</script>';", "", ""};
    EXPECT_THROW(render_report_html(one_mode(), bad), InputError);
}

}  // namespace
}  // namespace np
