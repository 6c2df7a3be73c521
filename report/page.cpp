// The report as one self-contained HTML page (report.hpp).
#include "report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "analysis/explanation/format.hpp"
#include "analysis/explanation/ledger.hpp"
#include "analysis/explanation/parity.hpp"
#include "common/errors.hpp"
#include "common/version.hpp"
#include "report/embedded_scripts.hpp"
#include "report/report_parts.hpp"

namespace np {
using namespace report_parts;
namespace {

using nlohmann::json;

// JSON inside <script type="application/json">: '<' only occurs inside strings there, where
// \u003c means the same and cannot close the element or open a comment.
std::string json_in_script(const json& j) {
    const std::string text = j.dump();
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        if (c == '<') {
            out += "\\u003c";
        } else {
            out += c;
        }
    }
    return out;
}

// ---- the page ----------------------------------------------------------------------------

void check_script(std::string_view js, const char* name) {
    // Inside <script>, "</script" ends the element and "<!--" changes how the rest is parsed.
    if (js.find("</script") != std::string_view::npos || js.find("<!--") != std::string_view::npos)
        throw InputError(name, "the script holds '</script' or '<!--' and cannot be inlined");
}

std::string figure_html(const Chart& c, bool wide) {
    return fmt::format(
        "<figure class=\"chart{}\" id=\"figure-{}\"><h3>{}</h3>\n"
        "<div class=\"vega\" id=\"{}\" data-rows=\"{}\"></div>\n"
        "<figcaption>{}</figcaption></figure>\n"
        "<script type=\"application/json\" id=\"spec-{}\">{}</script>\n",
        wide ? " wide" : "", c.id, html(c.title), c.id, c.data_rows, html(c.caption), c.id,
        json_in_script(c.spec));
}

std::string findings_html(const std::vector<Finding>& findings) {
    std::string out;
    for (const auto& f : findings) {
        out += fmt::format(
            "<div class=\"finding {}\"><p><span class=\"sev\">{}</span> <strong>{}</strong> "
            "<code>{}</code></p>\n",
            to_string(f.severity), to_string(f.severity), html(f.title), html(f.code));
        if (!f.detail.empty()) out += "<p>" + html(f.detail) + "</p>\n";
        if (!f.evidence.empty()) {
            out += "<table class=\"evidence\"><tbody>";
            for (const auto& [k, v] : f.evidence)
                out += "<tr><td>" + html(k) + "</td><td>" + html(evidence_text(v)) + "</td></tr>";
            out += "</tbody></table>\n";
        }
        if (!f.next_step.empty())
            out += "<p class=\"next\">Next step: " + html(f.next_step) + "</p>\n";
        out += "</div>\n";
    }
    return out;
}

}  // namespace

namespace {

// The page template with each {{name}} replaced by its value. The values are not scanned again
// (a script may hold braces); a name with no value is this program's own error.
std::string fill_page(std::string_view page,
                      const std::map<std::string_view, std::string_view>& values) {
    std::string out;
    size_t at = 0;
    while (true) {
        const size_t open = page.find("{{", at);
        if (open == std::string_view::npos) break;
        const size_t close = page.find("}}", open);
        if (close == std::string_view::npos) break;
        const auto name = page.substr(open + 2, close - open - 2);
        const auto value = values.find(name);
        if (value == values.end())
            throw std::logic_error("report/page.html: no value for {{" + std::string(name) + "}}");
        out.append(page.substr(at, open - at)).append(value->second);
        at = close + 2;
    }
    return out.append(page.substr(at));
}

// What each test came to, one line each, per mode.
std::string verdicts_html(const ReportInput& in) {
    std::string out;
    for (const auto& m : in.modes) {
        if (in.modes.size() > 1) out += "<h3>" + html(mode_heading(m)) + "</h3>\n";
        if (m.explanation && !m.explanation->verdicts.empty()) {
            out += html_table(verdict_cells(*m.explanation), "verdicts");
        } else {
            out +=
                "<p class=\"gaps\">No np-explain explanation in this contract (<code>np-explain "
                "attach</code> adds one).</p>\n";
        }
    }
    return out;
}

// A fan-out's pairs, or several modes' parity; nothing for one mode.
std::string comparison_html(const ReportInput& in) {
    if (!in.pairs.empty()) {
        const auto result = check_pairs(in.pairs);
        return fmt::format(
            "<h2 id=\"pairs\">Pairs <span class=\"{}\">{}</span></h2>\n<pre>{}</pre>\n",
            result.pass ? "pass" : "fail", result.pass ? "PASS" : "FAIL",
            html(render_pairs(in.pairs, result)));
    }
    if (in.modes.size() < 2) return {};
    const auto contracts = contracts_of(in);
    const auto result = check_parity(contracts);
    return fmt::format(
        "<h2 id=\"parity\">Parity <span class=\"{}\">{}</span></h2>\n<pre>{}</pre>\n",
        result.pass ? "pass" : "fail", result.pass ? "PASS" : "FAIL",
        html(render_parity(contracts, result)));
}

// The charts the page draws, by id, each as its figure (empty when there is no such chart).
class PageCharts {
  public:
    explicit PageCharts(const ReportInput& in) : charts_(report_charts(in)) {}
    const Chart* find(std::string_view id) const {
        for (const auto& c : charts_)
            if (c.id == id) return &c;
        return nullptr;
    }
    std::string figure(std::string_view id, bool wide) const {
        const Chart* c = find(id);
        return c ? figure_html(*c, wide) : std::string();
    }

  private:
    std::vector<Chart> charts_;
};

// Every test's packets point by point: the chart, then each ledger as a table.
std::string ledger_html(const ReportInput& in, const PageCharts& charts) {
    if (!charts.find("ledger")) return {};
    std::string out =
        "<h2 id=\"ledger\">Where the packets went</h2>\n" + charts.figure("ledger", true);
    for (const auto& m : in.modes) {
        if (!m.explanation) continue;
        for (const auto& l : m.explanation->ledgers)
            out += "<h3>" + html(ledger_heading(in, m, l)) + "</h3>\n" +
                   html_table(ledger_cells(l), "ledger");
    }
    return out;
}

// What the probes saw on the data NICs over time, and the drops by reason.
std::string nics_html(const PageCharts& charts) {
    if (!charts.find("throughput") && !charts.find("events") && !charts.find("drops")) return {};
    return "<h2 id=\"time\">On the data NICs (probe traces)</h2>\n" +
           charts.figure("throughput", true) + charts.figure("bins", true) +
           "<div class=\"row\">\n" + charts.figure("events", true) + charts.figure("drops", false) +
           "</div>\n";
}

std::string gaps_html(const ReportInput& in) {
    const auto gaps = report_gaps(in);
    if (gaps.empty()) return {};
    std::string out = "<ul class=\"gaps\">\n";
    for (const auto& g : gaps) out += "<li>" + html(g) + "</li>\n";
    return out + "</ul>\n";
}

std::string all_findings_html(const ReportInput& in) {
    std::string out;
    for (const auto& m : in.modes) {
        if (in.modes.size() > 1) out += "<h3>" + html(mode_heading(m)) + "</h3>\n";
        if (!m.explanation || m.explanation->findings.empty()) {
            out += "<p class=\"gaps\">No findings attached.</p>\n";
            continue;
        }
        out += findings_html(m.explanation->findings);
    }
    return out;
}

}  // namespace

std::string render_report_html(const ReportInput& in, const ChartScripts& js) {
    check_script(js.vega, "vega");
    check_script(js.vega_lite, "vega-lite");
    check_script(js.vega_embed, "vega-embed");
    check_script(report_embed_script(), "embed.js");
    if (report_css().find("</style") != std::string_view::npos)
        throw InputError("report.css", "the style sheet holds '</style' and cannot be inlined");
    const PageCharts charts(in);
    const std::string generator = html(version_line("np-explain")), title = html(in.title),
                      meta = html(header_line(in)), verdicts = verdicts_html(in),
                      comparison = comparison_html(in),
                      ceiling = charts.figure("ceiling", false) + charts.figure("frame", false),
                      ledger = ledger_html(in, charts),
                      udp_ceiling = charts.find("udp-ceiling")
                                        ? "<h2 id=\"udp-ceiling\">The UDP ceiling search</h2>\n" +
                                              charts.figure("udp-ceiling", false)
                                        : std::string(),
                      nics = nics_html(charts),
                      latency =
                          charts.figure("latency", false) + charts.figure("round-trip", false),
                      loss = html_table(loss_cells(in), "loss"), gaps = gaps_html(in),
                      findings = all_findings_html(in);
    return fill_page(report_page_template(), {{"generator", generator},
                                              {"title", title},
                                              {"style", report_css()},
                                              {"meta", meta},
                                              {"verdicts", verdicts},
                                              {"comparison", comparison},
                                              {"ceiling_charts", ceiling},
                                              {"ledger", ledger},
                                              {"udp_ceiling", udp_ceiling},
                                              {"nics", nics},
                                              {"latency_chart", latency},
                                              {"loss_table", loss},
                                              {"gaps", gaps},
                                              {"findings", findings},
                                              {"vega", js.vega},
                                              {"vega_lite", js.vega_lite},
                                              {"vega_embed", js.vega_embed},
                                              {"embed", report_embed_script()}});
}

}  // namespace np
