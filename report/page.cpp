// The report as one self-contained HTML page (report.hpp).
#include "report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

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

std::string render_report_html(const ReportInput& in, const ChartScripts& js) {
    check_script(js.vega, "vega");
    check_script(js.vega_lite, "vega-lite");
    check_script(js.vega_embed, "vega-embed");
    check_script(report_embed_script(), "embed.js");
    if (report_css().find("</style") != std::string_view::npos)
        throw InputError("report.css", "the style sheet holds '</style' and cannot be inlined");
    const auto charts = report_charts(in);
    const auto chart = [&](const char* id) -> const Chart* {
        for (const auto& c : charts)
            if (c.id == id) return &c;
        return nullptr;
    };

    std::string out = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\" data-np-report=\"1\">\n<head>\n<meta "
        "charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, "
        "initial-scale=1\">\n<meta name=\"generator\" content=\"{}\">\n"
        "<title>np-explain report: {}</title>\n<style>{}</style>\n</head>\n"
        "<body>\n<h1>np-explain report: {}</h1>\n<p class=\"meta\">{}</p>\n",
        html(version_line("np-explain")), html(in.title), report_css(), html(in.title),
        html(header_line(in)));

    // Verdicts first: what each test came to, one line each.
    out += "<h2 id=\"verdicts\">Verdicts</h2>\n";
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

    if (!in.pairs.empty()) {
        const auto result = check_pairs(in.pairs);
        out +=
            fmt::format("<h2 id=\"pairs\">Pairs <span class=\"{}\">{}</span></h2>\n<pre>{}</pre>\n",
                        result.pass ? "pass" : "fail", result.pass ? "PASS" : "FAIL",
                        html(render_pairs(in.pairs, result)));
    } else if (in.modes.size() > 1) {
        const auto contracts = contracts_of(in);
        const auto result = check_parity(contracts);
        out += fmt::format(
            "<h2 id=\"parity\">Parity <span class=\"{}\">{}</span></h2>\n<pre>{}</pre>\n",
            result.pass ? "pass" : "fail", result.pass ? "PASS" : "FAIL",
            html(render_parity(contracts, result)));
    }

    out += "<h2 id=\"charts\">Throughput against the ceiling</h2>\n<div class=\"row\">\n";
    if (const Chart* c = chart("ceiling")) out += figure_html(*c, false);
    if (const Chart* c = chart("frame")) out += figure_html(*c, false);
    out += "</div>\n";
    if (const Chart* c = chart("ledger")) {
        out += "<h2 id=\"ledger\">Where the packets went</h2>\n" + figure_html(*c, true);
        for (const auto& m : in.modes) {
            if (!m.explanation) continue;
            for (const auto& l : m.explanation->ledgers)
                out += "<h3>" + html(ledger_heading(in, m, l)) + "</h3>\n" +
                       html_table(ledger_cells(l), "ledger");
        }
    }
    if (const Chart* c = chart("udp-ceiling"))
        out += "<h2 id=\"udp-ceiling\">The UDP ceiling search</h2>\n" + figure_html(*c, false);
    if (chart("throughput") || chart("events") || chart("drops")) {
        out += "<h2 id=\"time\">On the data NICs (probe traces)</h2>\n";
        if (const Chart* c = chart("throughput")) out += figure_html(*c, true);
        out += "<div class=\"row\">\n";
        if (const Chart* c = chart("events")) out += figure_html(*c, true);
        if (const Chart* c = chart("drops")) out += figure_html(*c, false);
        out += "</div>\n";
    }
    out += "<h2 id=\"latency\">Latency and loss</h2>\n<div class=\"row\">\n";
    if (const Chart* c = chart("latency")) out += figure_html(*c, false);
    out += "<div>" + html_table(loss_cells(in), "loss") + "</div>\n</div>\n";
    const auto gaps = report_gaps(in);
    if (!gaps.empty()) {
        out += "<ul class=\"gaps\">\n";
        for (const auto& g : gaps) out += "<li>" + html(g) + "</li>\n";
        out += "</ul>\n";
    }

    out += "<h2 id=\"findings\">Findings</h2>\n";
    for (const auto& m : in.modes) {
        if (in.modes.size() > 1) out += "<h3>" + html(mode_heading(m)) + "</h3>\n";
        if (!m.explanation || m.explanation->findings.empty()) {
            out += "<p class=\"gaps\">No findings attached.</p>\n";
            continue;
        }
        out += findings_html(m.explanation->findings);
    }

    out += "<script>";
    out += js.vega;
    out += "</script>\n<script>";
    out += js.vega_lite;
    out += "</script>\n<script>";
    out += js.vega_embed;
    out += "</script>\n<script>";
    out += report_embed_script();
    out += "</script>\n</body>\n</html>\n";
    return out;
}

}  // namespace np
