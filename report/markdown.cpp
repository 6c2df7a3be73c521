// The report's Markdown summary (report.hpp).
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

std::string render_report_markdown(const ReportInput& in) {
    std::string out = fmt::format("# np-explain report: {}\n\n{}\n", in.title, header_line(in));
    out += "\n## Verdicts\n";
    for (const auto& m : in.modes) {
        out += "\n";
        if (in.modes.size() > 1) out += fmt::format("### {}\n\n", mode_heading(m));
        if (m.explanation && !m.explanation->verdicts.empty()) {
            out += markdown_table(verdict_cells(*m.explanation));
        } else {
            out += "No np-explain explanation in this contract (`np-explain attach` adds one).\n";
        }
    }
    std::string ledgers;
    for (const auto& m : in.modes) {
        if (!m.explanation) continue;
        for (const auto& l : m.explanation->ledgers)
            ledgers += fmt::format("\n### {}\n\n{}", ledger_heading(in, m, l),
                                   markdown_table(ledger_cells(l)));
    }
    if (!ledgers.empty()) out += "\n## Where the packets went\n" + ledgers;
    out += "\n## Latency and loss\n\n" + markdown_table(loss_cells(in));
    out += "\n## Findings\n";
    for (const auto& m : in.modes) {
        out += "\n";
        if (in.modes.size() > 1) out += fmt::format("### {}\n\n", mode_heading(m));
        if (!m.explanation || m.explanation->findings.empty()) {
            out += "No findings attached.\n";
            continue;
        }
        for (const auto& f : m.explanation->findings) {
            out += fmt::format("- **[{}] {}** (`{}`)\n", to_string(f.severity), f.title, f.code);
            if (!f.detail.empty()) out += fmt::format("  {}\n", f.detail);
            if (!f.evidence.empty()) {
                std::string ev;
                for (const auto& [k, v] : f.evidence)
                    ev += fmt::format("{}`{} = {}`", ev.empty() ? "" : ", ", k, evidence_text(v));
                out += "  - evidence: " + ev + "\n";
            }
            if (!f.next_step.empty()) out += fmt::format("  - next step: {}\n", f.next_step);
        }
    }
    if (!in.pairs.empty()) {
        out += "\n## Pairs\n\n```text\n" + render_pairs(in.pairs, check_pairs(in.pairs)) + "```\n";
    } else if (in.modes.size() > 1) {
        const auto contracts = contracts_of(in);
        out += "\n## Parity\n\n```text\n" + render_parity(contracts, check_parity(contracts)) +
               "```\n";
    }
    return without_controls(std::move(out));
}

}  // namespace np
