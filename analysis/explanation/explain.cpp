#include "analysis/explanation/explain.hpp"

#include <fmt/format.h>

#include <cmath>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"
#include "common/errors.hpp"
#include "common/json_field.hpp"

namespace np {

std::optional<int> nic_mtu(const std::vector<Trace>& traces) {
    std::optional<int> mtu;
    for (const auto& t : traces)
        if (t.link.mtu_bytes >= 576 && t.link.mtu_bytes <= 65535)
            mtu = std::min(mtu.value_or(t.link.mtu_bytes), t.link.mtu_bytes);
    return mtu;
}

std::optional<double> resolve_link_bps(std::optional<double> given, std::optional<double> recorded,
                                       std::optional<int64_t> nic_speed_mbps) {
    if (given) return given;
    if (recorded) return recorded;
    if (nic_speed_mbps && *nic_speed_mbps > 0) return double(*nic_speed_mbps) * 1e6;
    return std::nullopt;
}

std::optional<int64_t> nic_speed_mbps(const std::vector<Trace>& traces) {
    for (const auto& t : traces)
        if (t.link.speed_mbps && *t.link.speed_mbps > 0) return t.link.speed_mbps;
    return std::nullopt;
}

namespace {

// The throughput tests to judge: the tools' own, or — for traces given without any tool output —
// one per traced phase named after a transport, so their ledgers still place the loss.
std::vector<ThroughputTest> tests_of(const ExplainInput& in) {
    if (!in.measurements.throughput.empty() || in.traces.empty()) return in.measurements.throughput;
    std::vector<ThroughputTest> tests;
    for (const Transport transport : {Transport::tcp, Transport::udp}) {
        const std::string name = transport == Transport::tcp ? "tcp" : "udp";
        for (const auto& trace : in.traces) {
            const PhaseTrace* p = trace.find_phase(name);
            if (!p) continue;
            ThroughputTest t;
            t.label = "phase " + name;
            t.transport = transport;
            t.duration_s = p->duration_ms() / 1000.0;
            tests.push_back(std::move(t));
            break;
        }
    }
    return tests;
}

}  // namespace

const Rules& default_rules() {
    static const Rules rules{
        {rules::tool_failures, rules::link_unknown, rules::probe_tiers},
        {rules::trace_short, rules::wrong_interface, rules::path_slower_than_link,
         rules::offered_above_ceiling, rules::bottleneck, rules::sender_limited, rules::udp_loss,
         rules::printed_loss, rules::loss_counters, rules::reordering, rules::line_rate,
         rules::offered_rate_reached, rules::bidir_acks, rules::below_ceiling, rules::loss_located,
         rules::retransmits, rules::uneven_streams, rules::rtt_under_load, rules::loss_in_bursts},
        {rules::ping, rules::client_server_loss},
    };
    return rules;
}

Explanation explain(const ExplainInput& in, const Rules& rules) {
    Explanation e;
    for (auto r : rules.before) r(in, e);
    // Failures' rows were added by their rule; throughput rows come first in the table.
    std::vector<Verdict> failure_rows = std::move(e.verdicts);
    e.verdicts.clear();
    const std::optional<double> path = rules::slower_path_bps(in);
    e.link_bps = in.link_bps;
    e.path_bps = path;
    for (const auto& t : tests_of(in)) {
        TestEvidence v{.test = t, .input = in};
        v.link_bps = in.link_bps;
        v.path_bps = path;
        if (const auto rate = v.path_bps ? v.path_bps : v.link_bps)
            v.model = model_for(t, *rate, nic_mtu(in.traces));
        if (v.model) v.ceiling = t.transport == Transport::tcp ? &v.model->tcp : &v.model->udp;
        v.measured_bps = t.received_bps ? t.received_bps : t.sent_bps;
        v.traces = traces_for(t, in.traces);
        if (v.traces.sender || v.traces.receiver) v.ledger = build_ledger(t, v.traces);

        std::vector<Finding> found;
        for (auto r : rules.per_test) r(v, found);
        found = without_superseded(std::move(found));

        Verdict row;
        row.test = t.label;
        row.source = t.source;
        row.command = t.command;
        row.tool = tool_text(t.tool_version, t.platform);
        row.measured_bps = v.measured_bps;
        row.measured =
            v.measured_bps ? rules::rate_text(*v.measured_bps, t.rate_resolution_bps) : "-";
        if (v.ceiling) {
            row.ceiling = *v.ceiling;
            row.ceiling_bps = v.ceiling->goodput_bps;
            if (v.measured_bps) row.ratio = *v.measured_bps / v.ceiling->goodput_bps;
        }
        for (const auto& f : found) row.codes.push_back(f.code);
        row.verdict = verdict_for(found, v.ceiling ? "-" : "needs --link");
        for (auto& f : found) {
            if (!t.source.empty()) f.evidence.insert(f.evidence.begin(), {"file", t.source});
            e.findings.push_back(std::move(f));
        }
        e.verdicts.push_back(std::move(row));
        if (v.ledger) e.ledgers.push_back(std::move(*v.ledger));
    }
    for (auto r : rules.after) r(in, e);
    for (auto& f : failure_rows) e.verdicts.push_back(std::move(f));
    return e;
}

nlohmann::json to_json(const Explanation& e) {
    nlohmann::json doc = findings_document(e.findings);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& v : e.verdicts) {
        nlohmann::json r{{"test", v.test},          {"source", v.source},
                         {"command", nullptr},      {"tool", nullptr},
                         {"measured", v.measured},  {"verdict", v.verdict},
                         {"codes", v.codes},        {"measured_mbps", nullptr},
                         {"ceiling_mbps", nullptr}, {"pct_of_ceiling", nullptr}};
        if (!v.command.empty()) r["command"] = v.command;
        if (!v.tool.empty()) r["tool"] = v.tool;
        if (v.measured_bps) r["measured_mbps"] = *v.measured_bps / 1e6;
        if (v.ceiling_bps) r["ceiling_mbps"] = *v.ceiling_bps / 1e6;
        if (v.ratio) r["pct_of_ceiling"] = *v.ratio * 100;
        if (v.ceiling) r["ceiling"] = to_json(*v.ceiling);
        rows.push_back(std::move(r));
    }
    doc["verdicts"] = std::move(rows);
    nlohmann::json ledgers = nlohmann::json::array();
    for (const auto& l : e.ledgers) ledgers.push_back(to_json(l));
    doc["ledgers"] = std::move(ledgers);
    doc["link_mbps"] = e.link_bps ? nlohmann::json(*e.link_bps / 1e6) : nlohmann::json(nullptr);
    doc["path_mbps"] = e.path_bps ? nlohmann::json(*e.path_bps / 1e6) : nlohmann::json(nullptr);
    return doc;
}

Explanation parse_explanation(const nlohmann::json& document, const std::string& where) {
    const JsonField doc(document, where);
    if (!document.is_object()) doc.fail("expected an object with findings and verdicts");
    // A list that is absent or null is empty.
    const auto list_size = [](const std::optional<JsonField>& list) {
        return list ? list->array_size() : size_t{0};
    };
    Explanation e;
    const auto findings = doc.find("findings");
    for (size_t i = 0; i < list_size(findings); ++i) {
        const JsonField f = findings->at(i);
        e.findings.push_back(parse_finding(f.value(), f.path()));
    }
    const auto verdicts = doc.find("verdicts");
    for (size_t i = 0; i < list_size(verdicts); ++i) {
        const JsonField r = verdicts->at(i);
        if (!r.value().is_object()) r.fail("expected a verdict object");
        Verdict v;
        v.test = r.optional_str("test").value_or("");
        v.source = r.optional_str("source").value_or("");
        v.command = r.optional_str("command").value_or("");
        v.tool = r.optional_str("tool").value_or("");
        v.measured = r.optional_str("measured").value_or("");
        v.verdict = r.optional_str("verdict").value_or("");
        if (const auto m = r.optional_number("measured_mbps")) v.measured_bps = *m * 1e6;
        if (const auto c = r.optional_number("ceiling_mbps")) v.ceiling_bps = *c * 1e6;
        if (const auto p = r.optional_number("pct_of_ceiling")) v.ratio = *p / 100;
        if (const auto c = r.find("ceiling")) v.ceiling = parse_ceiling(*c);  // absent before
        const auto codes = r.value().find("codes");
        if (codes != r.value().end() && codes->is_array()) {
            for (const auto& c : *codes)
                if (c.is_string()) v.codes.push_back(c.get<std::string>());
        }
        e.verdicts.push_back(std::move(v));
    }
    const auto ledgers = doc.find("ledgers");
    for (size_t i = 0; i < list_size(ledgers); ++i) {
        const JsonField l = ledgers->at(i);
        e.ledgers.push_back(parse_ledger(l.value(), l.path()));
    }
    // Absent in explanations written before they carried it; null: unknown.
    if (const auto link = doc.find("link_mbps"); link && !link->is_null()) {
        const double mbps = link->number();
        if (mbps <= 0 || !std::isfinite(mbps)) link->fail("expected a positive number");
        e.link_bps = mbps * 1e6;
    }
    if (const auto path = doc.find("path_mbps")) {
        const double mbps = path->number();
        if (mbps <= 0 || !std::isfinite(mbps)) path->fail("expected a positive number");
        e.path_bps = mbps * 1e6;
    }
    return e;
}

std::string render_explanation(const Explanation& e) {
    const std::optional<double>& link_bps = e.link_bps;
    std::string out =
        e.path_bps && link_bps
            ? fmt::format(
                  "Explained against a {} path on a {} link: the numbers show the slower path "
                  "(PATH_SLOWER_THAN_LINK); MTU from the output, else the NICs', else 1500\n\n",
                  format_link_rate(*e.path_bps), format_link_rate(*link_bps))
        : link_bps ? fmt::format(
                         "Explained against a {} link (MTU from the output, else the NICs', "
                         "else 1500)\n\n",
                         format_link_rate(*link_bps))
                   : std::string("No --link given: no ceiling claimed\n\n");
    Table t({"test", "measured", "ceiling", "% of ceiling", "verdict"});
    for (const auto& v : e.verdicts) {
        t.add_row({v.test, v.measured, v.ceiling_bps ? format_rate(*v.ceiling_bps) : "-",
                   v.ratio ? format_pct(*v.ratio) : "-", v.verdict});
        // Under the row: the command that produced it and the tool that printed it.
        const std::string tool = v.tool.empty() ? "" : "printed by " + v.tool;
        if (!v.command.empty())
            t.add_note("$ " + v.command + (tool.empty() ? "" : "   (" + tool + ")"));
        else if (!tool.empty())
            t.add_note(tool);
    }
    out += t.render() + "\n";
    out += render_ledgers(e.ledgers);
    out += render_findings(e.findings);
    return out;
}

}  // namespace np
