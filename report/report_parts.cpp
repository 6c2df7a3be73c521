#include "report/report_parts.hpp"

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

namespace np::report_parts {
namespace {

using nlohmann::json;

bool is_raw_control(char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n' && c != '\t') || u == 0x7f;
}

const char* kind_of(const LedgerDrop& d) {
    if (d.stage == Stage::reverse) return "other direction";
    if (d.housekeeping) return "housekeeping";
    if (d.stage == Stage::duplicate) return "duplicate";
    return "lost";
}

}  // namespace

// ---- text --------------------------------------------------------------------------------

std::string html(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                // A control character from a file (an ESC of a tool's colours) is shown as
                // U+FFFD, never written raw into the page.
                if (is_raw_control(c)) {
                    out += "&#xFFFD;";
                } else {
                    out += c;
                }
        }
    }
    return out;
}

// Control characters but the line's own (tab, newline) as U+FFFD: a report is read in a
// terminal or an editor as often as in a browser.
std::string without_controls(std::string s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        if (is_raw_control(c)) {
            out += "\uFFFD";
        } else {
            out += c;
        }
    }
    return out;
}

// Several modes: a series is named with its mode too.
std::string series_prefix(const ReportInput& in, const RunDirMode& m) {
    return in.modes.size() > 1 ? m.contract.mode + " " : std::string();
}

// ---- the ledger: where a test's packets went ----------------------------------------------

std::vector<LedgerStep> ledger_steps(const Ledger& l) {
    std::vector<LedgerStep> out;
    std::map<std::string, int> seen;
    const auto add = [&](std::string step, std::string node, std::optional<uint64_t> packets,
                         std::string kind, std::string note) {
        if (const int n = seen[step]++; n > 0) step += fmt::format(" ({})", n + 1);
        out.push_back(
            {std::move(step), std::move(node), packets, std::move(kind), std::move(note)});
    };
    const auto add_drop = [&](const LedgerDrop& d) {
        add(fmt::format("− {} on {}", d.reason.empty() ? "not seen by any kernel" : d.reason,
                        d.node.empty() ? "the wire" : d.node),
            d.node, d.packets, kind_of(d),
            d.stage == Stage::reverse ? std::string("an ACK or reply, not the measured data")
                                      : std::string("at ") + to_string(d.stage) +
                                            (d.housekeeping ? "; it cost the test nothing" : ""));
    };
    int n = 0;
    for (const auto& p : l.points) {
        for (const auto& d : p.drops) add_drop(d);
        if (p.unattributed > 0)
            add("− missing, no drop names them", p.node, uint64_t(p.unattributed), "unattributed",
                "fewer than the point before, less the drops between them");
        if (p.unattributed < 0)
            add("+ more than the point before", p.node, uint64_t(-p.unattributed), "unattributed",
                "counted here but not before");
        if (p.queued_at_end > 0)
            add(p.label == kDeliveredPoint ? "· still unread in the receiving socket"
                                           : "· still in the sender's queue",
                p.node, p.queued_at_end, "queued", "not lost: queued when the phase ended");
        if (p.after_count > 0)
            add("· arrived after the receiver's count ended", p.node, p.after_count, "queued",
                "not lost: past the last datagram the receiver's total covers");
        add(fmt::format("{}. {}", ++n, p.label), p.node, p.count,
            !p.count     ? "not measured"
            : p.inferred ? "inferred"
                         : "counted",
            !p.count     ? "no count at this point"
            : p.inferred ? "derived from the counts around it (no driver count in the trace)"
                         : "");
    }
    for (const auto& d : l.drops)
        if (d.stage == Stage::reverse) add_drop(d);
    return out;
}

std::string ledger_heading(const ReportInput& in, const RunDirMode& m, const Ledger& l) {
    return fmt::format("{}{} ({} → {}, {})", series_prefix(in, m), l.test, l.sender_node,
                       l.receiver_node, l.unit);
}

Cells verdict_cells(const Explanation& e) {
    Cells c{{"test", "measured", "ceiling", "% of ceiling", "verdict"}, {}};
    for (const auto& v : e.verdicts) {
        c.rows.push_back({v.test, v.measured, v.ceiling_bps ? format_rate(*v.ceiling_bps) : "-",
                          v.ratio ? format_pct(*v.ratio) : "-", v.verdict});
    }
    return c;
}

// Latency and loss per mode: from the tools' outputs when the run dir has them, else from the
// contract's figures.
Cells loss_cells(const ReportInput& in) {
    Cells c{{"mode", "ping answered", "ping loss", "RTT min / avg / max", "UDP lost / total",
             "UDP loss"},
            {}};
    const auto ms = [](const std::optional<double>& v) {
        return v ? fmt::format("{:.3f}", *v) : std::string("-");
    };
    for (const auto& m : in.modes) {
        std::vector<std::string> row{m.contract.mode, "-", "-", "-", "-", "-"};
        if (!m.measurements.pings.empty()) {
            const auto& p = m.measurements.pings.front();
            row[1] = fmt::format("{} of {}", p.received, p.transmitted);
            if (p.transmitted > 0) {
                row[2] = format_pct(static_cast<double>(p.transmitted - p.received) /
                                    static_cast<double>(p.transmitted));
            }
            row[3] = p.rtt_avg_ms ? fmt::format("{} / {} / {} ms", ms(p.rtt_min_ms),
                                                ms(p.rtt_avg_ms), ms(p.rtt_max_ms))
                                  : "-";
        } else if (m.contract.ping_rtt_ms) {
            row[3] = fmt::format("- / {} / - ms", ms(m.contract.ping_rtt_ms));
        }
        for (const auto& t : m.measurements.throughput) {
            if (t.transport != Transport::udp || !t.datagrams_lost || !t.datagrams_total) continue;
            row[4] = fmt::format("{} / {}", format_count(static_cast<double>(*t.datagrams_lost)),
                                 format_count(static_cast<double>(*t.datagrams_total)));
            break;
        }
        if (m.contract.udp_loss_pct) row[5] = fmt::format("{:.2f} %", *m.contract.udp_loss_pct);
        c.rows.push_back(std::move(row));
    }
    return c;
}

Cells ledger_cells(const Ledger& l) {
    Cells c{{"step", "node", "packets", "what it is"}, {}};
    for (const auto& s : ledger_steps(l)) {
        const std::string what = s.note.empty() ? s.kind : s.kind + ": " + s.note;
        c.rows.push_back(
            {s.step, s.node, s.packets ? format_count(double(*s.packets)) : "-", what});
    }
    return c;
}

std::string html_table(const Cells& c, const char* css_class) {
    std::string out = fmt::format("<table class=\"{}\"><thead><tr>", css_class);
    for (const auto& h : c.header) out += "<th>" + html(h) + "</th>";
    out += "</tr></thead><tbody>\n";
    for (const auto& r : c.rows) {
        out += "<tr>";
        for (const auto& cell : r) out += "<td>" + html(cell) + "</td>";
        out += "</tr>\n";
    }
    return out + "</tbody></table>\n";
}

std::string markdown_table(const Cells& c) {
    Table t(c.header);
    for (const auto& r : c.rows) t.add_row(r);
    return t.render_markdown();
}

std::vector<Contract> contracts_of(const ReportInput& in) {
    std::vector<Contract> out;
    for (const auto& m : in.modes) out.push_back(m.contract);
    return out;
}

std::string mode_heading(const RunDirMode& m) {
    std::string s = m.contract.mode;
    if (!m.contract.node1.empty() || !m.contract.node2.empty())
        s += fmt::format(" ({} ← {})", m.contract.node1, m.contract.node2);
    return s;
}

std::string header_line(const ReportInput& in) {
    std::vector<std::string> parts;
    std::string modes;
    for (const auto& m : in.modes) modes += (modes.empty() ? "" : ", ") + mode_heading(m);
    parts.push_back(
        fmt::format("{} {}: {}", in.modes.size(), in.modes.size() == 1 ? "mode" : "modes", modes));
    const auto link = report_link_bps(in);
    parts.push_back(link ? "link " + format_link_rate(*link) : "link rate unknown");
    parts.push_back(fmt::format("generated {}by {}",
                                in.generated_at.empty() ? "" : in.generated_at + " ",
                                version_line("np-explain")));
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : " · ") + p;
    return out;
}

}  // namespace np::report_parts
