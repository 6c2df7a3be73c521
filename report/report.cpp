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

namespace np {
namespace {

using nlohmann::json;

// ---- text --------------------------------------------------------------------------------

bool is_raw_control(char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n' && c != '\t') || u == 0x7f;
}

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

// Numbers in chart data: short enough to keep the page small, exact enough for a tooltip.
double round_to(double v, int decimals) {
    const double f = std::pow(10.0, decimals);
    return std::round(v * f) / f;
}

// ---- what the report models against ------------------------------------------------------

std::optional<double> mode_link_bps(const ReportInput& in, const ReportMode& m) {
    return m.link_bps ? m.link_bps : report_link_bps(in);
}

// The ceiling the explanation used for a test of this transport when the mode has one (the
// MTU, MSS and datagram size the tool reported), else the model's defaults for the link.
std::optional<Ceiling> ceiling_for(const ReportMode& m, Transport transport,
                                   std::optional<double> link_bps) {
    if (!link_bps) return std::nullopt;
    for (const auto& t : m.measurements.throughput) {
        if (t.transport != transport) continue;
        if (const auto model = model_for(t, *link_bps, nic_mtu(m.traces)))
            return transport == Transport::tcp ? model->tcp : model->udp;
    }
    try {
        ModelParams p;
        p.link_bps = *link_bps;
        const Model model = compute_model(p);
        return transport == Transport::tcp ? model.tcp : model.udp;
    } catch (const InputError&) {
        return std::nullopt;
    }
}

const char* transport_name(Transport t) {
    return t == Transport::tcp ? "TCP" : "UDP";
}

// Several modes: a series is named with its mode too.
std::string series_prefix(const ReportInput& in, const ReportMode& m) {
    return in.modes.size() > 1 ? m.contract.mode + " " : std::string();
}

std::string node_name(const Trace& t) {
    return t.role.empty() ? t.node : fmt::format("{} ({})", t.node, t.role);
}

// The phases to plot, in the order the probes ran them. "default" is the time before the first
// phase command (setup); it is left out when the run had phases of its own.
std::vector<std::string> plotted_phases(const ReportInput& in) {
    std::vector<std::string> names;
    for (const auto& m : in.modes) {
        for (const auto& t : m.traces) {
            for (const auto& p : t.phases)
                if (std::find(names.begin(), names.end(), p.name) == names.end())
                    names.push_back(p.name);
        }
    }
    if (names.size() > 1) std::erase(names, std::string("default"));
    return names;
}

double seconds_into_phase(const Trace& t, const TraceSample& s) {
    const PhaseTrace* p = t.find_phase(s.phase);
    const int64_t start = p ? p->start_ms : 0;
    return round_to(static_cast<double>(s.t_ms - start) / 1000.0, 3);
}

// A browser draws a few hundred points per line quickly, not the 36,000 a one-hour test at
// 100 ms leaves: longer phases are plotted with consecutive samples merged (their bytes and
// intervals added, so a rate stays bytes over time).
constexpr size_t kMaxPointsPerPhase = 600;

std::vector<TraceSample> plotted_samples(const Trace& t, const std::vector<std::string>& phases) {
    std::map<std::string, size_t> per_phase;
    for (const auto& s : t.samples) ++per_phase[s.phase];
    std::vector<TraceSample> out;
    size_t merged = 0;  // samples in out.back() so far
    for (const auto& s : t.samples) {
        if (std::find(phases.begin(), phases.end(), s.phase) == phases.end()) continue;
        const size_t factor = (per_phase[s.phase] + kMaxPointsPerPhase - 1) / kMaxPointsPerPhase;
        if (out.empty() || out.back().phase != s.phase || merged >= factor) {
            out.push_back(s);
            merged = 1;
            continue;
        }
        TraceSample& b = out.back();
        b.t_ms = s.t_ms;
        b.interval_ms += s.interval_ms;
        b.tx_wire_packets += s.tx_wire_packets;
        b.rx_wire_packets += s.rx_wire_packets;
        b.tx_wire_bytes += s.tx_wire_bytes;
        b.rx_wire_bytes += s.rx_wire_bytes;
        b.retransmits += s.retransmits;
        b.drops += s.drops;
        ++merged;
    }
    return out;
}

// ---- the charts --------------------------------------------------------------------------

const json kConfig = {
    {"view", {{"stroke", "#ddd"}}},
    {"axis", {{"labelFontSize", 11}, {"titleFontSize", 12}}},
    {"legend", {{"labelFontSize", 11}, {"titleFontSize", 12}, {"labelLimit", 320}}}};

json base_spec() {
    return {{"config", kConfig}};
}

std::optional<Chart> ceiling_chart(const ReportInput& in) {
    json rows = json::array();
    json modes = json::array();
    std::optional<double> link = report_link_bps(in);
    for (const auto& m : in.modes) {
        modes.push_back(m.contract.mode);
        const std::pair<Transport, std::optional<double>> figures[] = {
            {Transport::tcp, m.contract.tcp_mbps}, {Transport::udp, m.contract.udp_mbps}};
        for (const auto& [transport, mbps] : figures) {
            if (!mbps) continue;
            const auto ceiling = ceiling_for(m, transport, mode_link_bps(in, m));
            json r = {{"mode", m.contract.mode},
                      {"test", transport_name(transport)},
                      {"measured_mbps", round_to(*mbps, 2)},
                      {"ceiling_mbps", nullptr},
                      {"pct_of_ceiling", nullptr},
                      {"label", fmt::format("{:.1f}", *mbps)}};
            if (ceiling) {
                const double c = ceiling->goodput_bps / 1e6;
                r["ceiling_mbps"] = round_to(c, 2);
                r["pct_of_ceiling"] = round_to(100 * *mbps / c, 2);
                r["label"] = fmt::format("{:.1f} %", 100 * *mbps / c);
            }
            rows.push_back(std::move(r));
        }
    }
    if (rows.empty()) return std::nullopt;
    const json x = {{"field", "mode"},
                    {"type", "nominal"},
                    {"title", nullptr},
                    {"sort", modes},
                    {"axis", {{"labelAngle", 0}}}};
    const json x_offset = {{"field", "test"}, {"sort", {"TCP", "UDP"}}};
    const json y_title = "goodput, Mbit/s";
    json layers = json::array();
    layers.push_back(
        {{"mark", {{"type", "bar"}, {"width", {{"band", 0.9}}}}},
         {"encoding",
          {{"x", x},
           {"xOffset", x_offset},
           {"y", {{"field", "measured_mbps"}, {"type", "quantitative"}, {"title", y_title}}},
           {"color",
            {{"field", "test"},
             {"type", "nominal"},
             {"title", "measured"},
             {"scale", {{"domain", {"TCP", "UDP"}}, {"range", {"#4e79a7", "#f28e2b"}}}}}},
           {"tooltip",
            {{{"field", "mode"}},
             {{"field", "test"}},
             {{"field", "measured_mbps"}, {"title", "measured Mbit/s"}},
             {{"field", "ceiling_mbps"}, {"title", "model ceiling Mbit/s"}},
             {{"field", "pct_of_ceiling"}, {"title", "% of ceiling"}}}}}}});
    layers.push_back({{"transform", {{{"filter", "datum.ceiling_mbps != null"}}}},
                      {"mark", {{"type", "tick"}, {"thickness", 3}, {"color", "#222"}}},
                      {"encoding",
                       {{"x", x},
                        {"xOffset", x_offset},
                        {"y", {{"field", "ceiling_mbps"}, {"type", "quantitative"}}}}}});
    layers.push_back({{"mark", {{"type", "text"}, {"dy", -12}, {"fontSize", 10}}},
                      {"encoding",
                       {{"x", x},
                        {"xOffset", x_offset},
                        {"y", {{"field", "measured_mbps"}, {"type", "quantitative"}}},
                        {"text", {{"field", "label"}}}}}});
    size_t extra_rows = 0;
    if (link) {
        layers.push_back(
            {{"data",
              {{"values",
                {{{"link_mbps", round_to(*link / 1e6, 3)},
                  {"label", "line rate " + format_link_rate(*link)}}}}}},
             {"layer",
              {{{"mark", {{"type", "rule"}, {"strokeDash", {6, 4}}, {"color", "#888"}}},
                {"encoding", {{"y", {{"field", "link_mbps"}, {"type", "quantitative"}}}}}},
               {{"mark",
                 {{"type", "text"}, {"align", "left"}, {"dy", -6}, {"x", 4}, {"color", "#666"}}},
                {"encoding",
                 {{"y", {{"field", "link_mbps"}, {"type", "quantitative"}}},
                  {"text", {{"field", "label"}}}}}}}}});
        extra_rows = 1;
    }
    Chart c;
    c.id = "ceiling";
    c.title = "TCP and UDP against the line-rate ceiling";
    c.caption =
        "Bars: the goodput each mode measured (the contract's tcp_mbps and udp_mbps), labelled "
        "with the share of the model's ceiling. Black tick: the header-overhead model's goodput "
        "ceiling for that test on this link. Dashed line: the nominal link rate, which no "
        "goodput reaches because every frame also carries headers and framing.";
    c.spec = base_spec();
    c.spec["data"] = {{"values", rows}};
    c.spec["width"] = std::max<size_t>(220, 150 * in.modes.size());
    c.spec["height"] = 260;
    c.spec["layer"] = std::move(layers);
    c.data_rows = rows.size() + extra_rows;
    return c;
}

const std::pair<const char*, const char*> kFrameParts[] = {
    {"preamble_sfd", "preamble+SFD"},
    {"mac_header", "MAC header"},
    {"vlan_tag", "VLAN tag"},
    {"ip_header", "IP header"},
    {"ipv6_fragment_header", "IPv6 fragment header"},
    {"tcp_header", "TCP header"},
    {"tcp_timestamps", "TCP timestamps"},
    {"udp_header", "UDP header"},
    {"payload", "payload"},
    {"padding", "padding"},
    {"fcs", "FCS"},
    {"inter_frame_gap", "inter-frame gap"}};
const char* kFrameColours[] = {"#bab0ac", "#4e79a7", "#76b7b2", "#f28e2b", "#ffbe7d", "#e15759",
                               "#ff9d9a", "#e15759", "#59a14f", "#d4d4d4", "#b07aa1", "#8c8c8c"};

std::optional<Chart> frame_chart(const ReportInput& in) {
    // The first mode with a known link holds the model the explanation used.
    const ReportMode* mode = nullptr;
    for (const auto& m : in.modes)
        if (mode_link_bps(in, m)) {
            mode = &m;
            break;
        }
    if (!mode) return std::nullopt;
    json rows = json::array();
    std::string caption;
    for (const Transport t : {Transport::tcp, Transport::udp}) {
        const auto ceiling = ceiling_for(*mode, t, mode_link_bps(in, *mode));
        if (!ceiling) continue;
        const std::string unit =
            ceiling->fragmented()
                ? fmt::format("{} ({} B datagram, {} frames)", transport_name(t),
                              ceiling->payload_bytes_per_unit, ceiling->frames.size())
                : fmt::format("{} ({} B {})", transport_name(t), ceiling->payload_bytes_per_unit,
                              t == Transport::tcp ? "MSS" : "datagram");
        int order = 0;
        for (const auto& [name, label] : kFrameParts) {
            int bytes = 0;
            for (const auto& f : ceiling->frames) bytes += f.bytes_of(name);
            ++order;
            if (bytes == 0) continue;
            rows.push_back(
                {{"unit", unit},
                 {"part", label},
                 {"bytes", bytes},
                 {"order", order},
                 {"share_pct", round_to(100.0 * bytes / ceiling->wire_bytes_per_unit, 2)}});
        }
        caption += fmt::format(" {}: {}.", transport_name(t), describe_overhead(*ceiling));
    }
    if (rows.empty()) return std::nullopt;
    // Only the parts these frames have, in wire order, each with its fixed colour.
    json domain = json::array(), range = json::array();
    for (size_t i = 0; i < std::size(kFrameParts); ++i) {
        const bool present = std::any_of(rows.begin(), rows.end(), [&](const json& r) {
            return r["part"] == kFrameParts[i].second;
        });
        if (!present) continue;
        domain.push_back(kFrameParts[i].second);
        range.push_back(kFrameColours[i]);
    }
    Chart c;
    c.id = "frame";
    c.title = "What one full frame carries";
    c.caption =
        "Bytes on the wire per TCP segment and per UDP datagram, in wire order (the model "
        "behind the ceilings)." +
        caption;
    c.spec = base_spec();
    c.spec["data"] = {{"values", rows}};
    c.spec["width"] = 360;
    c.spec["height"] = 90;
    c.spec["mark"] = {{"type", "bar"}};
    c.spec["encoding"] = {{"y", {{"field", "unit"}, {"type", "nominal"}, {"title", nullptr}}},
                          {"x",
                           {{"field", "bytes"},
                            {"type", "quantitative"},
                            {"stack", "zero"},
                            {"title", "bytes on the wire"}}},
                          {"color",
                           {{"field", "part"},
                            {"type", "nominal"},
                            {"title", "part"},
                            {"scale", {{"domain", domain}, {"range", range}}}}},
                          {"order", {{"field", "order"}, {"type", "quantitative"}}},
                          {"tooltip",
                           {{{"field", "unit"}},
                            {{"field", "part"}},
                            {{"field", "bytes"}},
                            {{"field", "share_pct"}, {"title", "% of the wire bytes"}}}}};
    c.data_rows = rows.size();
    return c;
}

// A time series faceted by phase, the time axis counting from each phase's start (each
// node's probe has its own clock, so phases are what lines them up).
json phase_facet(const ReportInput& in, json rows, json layers, int height) {
    json spec = base_spec();
    spec["data"] = {{"values", std::move(rows)}};
    spec["facet"] = {{"column",
                      {{"field", "phase"},
                       {"type", "nominal"},
                       {"sort", plotted_phases(in)},
                       {"title", nullptr},
                       {"header", {{"labelFontSize", 13}, {"labelFontWeight", "bold"}}}}}};
    spec["spec"] = {{"width", 210}, {"height", height}, {"layer", std::move(layers)}};
    spec["resolve"] = {{"scale", {{"x", "independent"}}}};
    return spec;
}

json time_x() {
    return {{"field", "t_s"}, {"type", "quantitative"}, {"title", "s since the phase began"}};
}

std::optional<Chart> throughput_chart(const ReportInput& in) {
    const auto phases = plotted_phases(in);
    json rows = json::array();
    for (const auto& m : in.modes) {
        for (const auto& t : m.traces) {
            for (const auto& s : plotted_samples(t, phases)) {
                if (s.interval_ms <= 0) continue;
                const double t_s = seconds_into_phase(t, s);
                const std::pair<const char*, uint64_t> dirs[] = {{"tx", s.tx_wire_bytes},
                                                                 {"rx", s.rx_wire_bytes}};
                for (const auto& [dir, bytes] : dirs) {
                    rows.push_back(
                        {{"series",
                          fmt::format("{}{} {}", series_prefix(in, m), node_name(t), dir)},
                         {"phase", s.phase},
                         {"t_s", t_s},
                         {"mbps", round_to(static_cast<double>(bytes) * 8.0 /
                                               static_cast<double>(s.interval_ms) / 1000.0,
                                           3)}});
                }
            }
        }
    }
    if (rows.empty()) return std::nullopt;
    json layers = json::array();
    layers.push_back(
        {{"mark", {{"type", "line"}, {"strokeWidth", 1.5}}},
         {"encoding",
          {{"x", time_x()},
           {"y", {{"field", "mbps"}, {"type", "quantitative"}, {"title", "wire rate, Mbit/s"}}},
           {"color", {{"field", "series"}, {"type", "nominal"}, {"title", "node, direction"}}},
           {"tooltip",
            {{{"field", "series"}},
             {{"field", "t_s"}, {"title", "s"}},
             {{"field", "mbps"}, {"title", "wire Mbit/s"}}}}}}});
    const auto link = report_link_bps(in);
    if (link) {
        layers.push_back({{"mark", {{"type", "rule"}, {"strokeDash", {6, 4}}, {"color", "#888"}}},
                          {"encoding", {{"y", {{"datum", round_to(*link / 1e6, 3)}}}}}});
    }
    Chart c;
    c.id = "throughput";
    c.title = "Throughput over time, per phase (probe samples)";
    c.caption = fmt::format(
        "What crossed each node's data NIC per sample interval: wire bytes × 8 / interval, so "
        "headers, preamble, FCS and inter-frame gap are counted and the ceiling is the link "
        "rate itself{}. tx is what the node sent, rx what it received; the sender's tx and the "
        "receiver's rx of the measured flow should lie on top of each other.",
        link ? fmt::format(" (dashed, {})", format_link_rate(*link)) : std::string());
    c.spec = phase_facet(in, rows, std::move(layers), 200);
    c.data_rows = rows.size();
    return c;
}

std::optional<Chart> events_chart(const ReportInput& in) {
    const auto phases = plotted_phases(in);
    json rows = json::array();
    for (const auto& m : in.modes) {
        for (const auto& t : m.traces) {
            for (const auto& s : plotted_samples(t, phases)) {
                const double t_s = seconds_into_phase(t, s);
                const std::pair<const char*, uint64_t> counts[] = {{"retransmits", s.retransmits},
                                                                   {"drops", s.drops}};
                for (const auto& [what, n] : counts) {
                    rows.push_back({{"series", fmt::format("{}{} {}", series_prefix(in, m),
                                                           node_name(t), what)},
                                    {"phase", s.phase},
                                    {"t_s", t_s},
                                    {"count", n}});
                }
            }
        }
    }
    if (rows.empty()) return std::nullopt;
    json layers = json::array();
    layers.push_back(
        {{"mark", {{"type", "line"}, {"point", {{"size", 14}}}, {"strokeWidth", 1}}},
         {"encoding",
          {{"x", time_x()},
           {"y", {{"field", "count"}, {"type", "quantitative"}, {"title", "per sample interval"}}},
           {"color", {{"field", "series"}, {"type", "nominal"}, {"title", "node, event"}}},
           {"tooltip",
            {{{"field", "series"}}, {{"field", "t_s"}, {"title", "s"}}, {{"field", "count"}}}}}}});
    Chart c;
    c.id = "events";
    c.title = "TCP retransmits and packet drops over time";
    c.caption =
        "Per sample interval: segments TCP retransmitted on the data NIC, and packets the "
        "kernel dropped in the node's network namespace, whatever the reason (\"Drops by kernel "
        "reason\" splits them).";
    c.spec = phase_facet(in, rows, std::move(layers), 140);
    c.data_rows = rows.size();
    return c;
}

// What a drop of a trace was to the test: a drop of the measured flow, one that cost it nothing
// (teardown, a purged queue: the ledger's housekeeping), or other traffic's.
const char* drop_class(const DropReasonCount& d, const DropLocation& w) {
    if (w.flow != "iperf") return " (other traffic)";
    return is_housekeeping_reason(drop_label(d)) ? " (housekeeping)" : "";
}

std::optional<Chart> drops_chart(const ReportInput& in) {
    json rows = json::array();
    for (const auto& m : in.modes) {
        for (const auto& t : m.traces) {
            for (const auto& p : t.phases) {
                for (const auto& d : p.drops) {
                    const auto add = [&](const std::string& what, uint64_t packets, uint64_t bytes,
                                         const std::string& location) {
                        if (packets == 0) return;
                        rows.push_back({{"where", fmt::format("{}{} · {}{}", series_prefix(in, m),
                                                              t.node, drop_label(d), what)},
                                        {"phase", p.name},
                                        {"packets", packets},
                                        {"bytes", bytes},
                                        {"locations", location}});
                    };
                    if (d.where.empty())
                        add(d.unattributed ? " (unattributed)" : "", d.packets, d.bytes, "");
                    for (const auto& w : d.where)
                        add(drop_class(d, w), w.packets, w.bytes,
                            fmt::format("{} {} {}", w.iface.empty() ? "(socket)" : w.iface,
                                        w.protocol, w.flow));
                }
            }
        }
    }
    if (rows.empty()) return std::nullopt;
    Chart c;
    c.id = "drops";
    c.title = "Drops by kernel reason";
    c.caption =
        "Packets dropped per node and kernel drop reason (enum skb_drop_reason, read from the "
        "running kernel), coloured by phase. SOCKET_RCVBUFF is a full receive buffer; a drop "
        "the kernel gave no reason for is named by the function that freed it (\"freed in "
        "…\"), or NOT_SPECIFIED where the trace has none. Housekeeping drops (a segment "
        "after the connection closed, a queue purged at teardown) and other traffic's cost the "
        "test nothing; the ledger above places the ones that did.";
    c.spec = base_spec();
    c.spec["data"] = {{"values", rows}};
    c.spec["width"] = 360;
    c.spec["mark"] = {{"type", "bar"}};
    c.spec["encoding"] = {{"y",
                           {{"field", "where"},
                            {"type", "nominal"},
                            {"title", nullptr},
                            {"sort", "-x"},
                            {"axis", {{"labelLimit", 320}}}}},
                          {"x",
                           {{"aggregate", "sum"},
                            {"field", "packets"},
                            {"type", "quantitative"},
                            {"title", "packets dropped"}}},
                          {"color",
                           {{"field", "phase"},
                            {"type", "nominal"},
                            {"sort", plotted_phases(in)},
                            {"title", "phase"}}},
                          {"tooltip",
                           {{{"field", "where"}},
                            {{"field", "phase"}},
                            {{"field", "locations"}, {"title", "where"}},
                            {{"aggregate", "sum"}, {"field", "packets"}, {"title", "packets"}},
                            {{"aggregate", "sum"}, {"field", "bytes"}, {"title", "bytes"}}}}};
    c.data_rows = rows.size();
    return c;
}

// ---- the ledger: where a test's packets went ----------------------------------------------

// One step of a test's ledger in path order: a point with its count, or what happened between
// two points (a drop by node and kernel reason, the unattributed rest, frames still queued).
struct LedgerStep {
    std::string step;  // unique within its ledger
    std::string node;
    std::optional<uint64_t> packets;
    std::string kind;  // kLedgerKinds
    std::string note;
};

// The kinds of step, each with its colour: counts in blues, loss red, what is not loss grey
// or green, what nobody could place orange.
const std::vector<std::pair<std::string, std::string>> kLedgerKinds = {
    {"counted", "#4c78a8"},      {"inferred", "#9ecae9"},        {"lost", "#d62728"},
    {"unattributed", "#f58518"}, {"duplicate", "#54a24b"},       {"queued", "#bab0ac"},
    {"housekeeping", "#bab0ac"}, {"other direction", "#d8d8d8"},
};

const char* kind_of(const LedgerDrop& d) {
    if (d.stage == Stage::reverse) return "other direction";
    if (d.housekeeping) return "housekeeping";
    if (d.stage == Stage::duplicate) return "duplicate";
    return "lost";
}

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

std::string ledger_heading(const ReportInput& in, const ReportMode& m, const Ledger& l) {
    return fmt::format("{}{} ({} → {}, {})", series_prefix(in, m), l.test, l.sender_node,
                       l.receiver_node, l.unit);
}

std::optional<Chart> ledger_chart(const ReportInput& in) {
    json rows = json::array();
    for (const auto& m : in.modes) {
        if (!m.explanation) continue;
        for (const auto& l : m.explanation->ledgers) {
            const std::string test = ledger_heading(in, m, l);
            int order = 0;
            for (const auto& s : ledger_steps(l)) {
                ++order;
                if (!s.packets) continue;
                rows.push_back({{"test", test},
                                {"order", order},
                                {"step", s.step},
                                {"node", s.node},
                                {"packets", *s.packets},
                                {"kind", s.kind},
                                {"note", s.note}});
            }
        }
    }
    if (rows.empty()) return std::nullopt;
    json domain = json::array(), range = json::array();
    for (const auto& [kind, colour] : kLedgerKinds) {
        domain.push_back(kind);
        range.push_back(colour);
    }
    Chart c;
    c.id = "ledger";
    c.title = "Each test's packets at every point, and the drops between";
    c.caption =
        "The measured flow from the sending application to the receiving one, from the tool's "
        "counts and both probes: each numbered point with its count, and between two points "
        "every drop of the flow by node and kernel reason. Red is loss, green duplicates TCP "
        "resent and the receiver discarded (not loss), grey drops that cost the test nothing; "
        "orange is what no drop accounts for. The scale is symmetric-log so a handful of drops "
        "shows beside tens of thousands of packets: read the numbers in the table or tooltip.";
    c.spec = base_spec();
    c.spec["data"] = {{"values", rows}};
    c.spec["facet"] = {{"row",
                        {{"field", "test"},
                         {"type", "nominal"},
                         {"title", nullptr},
                         {"header",
                          {{"labelAngle", 0},
                           {"labelAlign", "left"},
                           {"labelAnchor", "start"},
                           {"labelOrient", "top"},
                           {"labelFontSize", 13},
                           {"labelFontWeight", "bold"}}}}}};
    c.spec["spec"] = {{"width", 420},
                      {"mark", {{"type", "bar"}}},
                      {"encoding",
                       {{"y",
                         {{"field", "step"},
                          {"type", "nominal"},
                          {"sort", {{"field", "order"}}},
                          {"title", nullptr},
                          {"axis", {{"labelLimit", 380}}}}},
                        {"x",
                         {{"field", "packets"},
                          {"type", "quantitative"},
                          {"scale", {{"type", "symlog"}}},
                          {"title", "packets (symmetric-log scale)"}}},
                        {"color",
                         {{"field", "kind"},
                          {"type", "nominal"},
                          {"scale", {{"domain", domain}, {"range", range}}},
                          {"title", "what it is"}}},
                        {"tooltip",
                         {{{"field", "step"}},
                          {{"field", "node"}},
                          {{"field", "packets"}, {"format", ","}},
                          {{"field", "kind"}},
                          {{"field", "note"}}}}}}};
    c.spec["resolve"] = {{"scale", {{"y", "independent"}}}};
    c.data_rows = rows.size();
    return c;
}

std::optional<Chart> latency_chart(const ReportInput& in) {
    json replies = json::array();
    json averages = json::array();
    for (const auto& m : in.modes) {
        const std::string series = in.modes.size() > 1 ? m.contract.mode : "RTT";
        bool averaged = false;
        for (const auto& p : m.measurements.pings) {
            for (const auto& r : p.replies) {
                replies.push_back({{"series", series},
                                   {"seq", r.seq},
                                   {"rtt_ms", r.rtt_ms},
                                   {"reply", r.duplicate ? "duplicate" : "reply"}});
            }
            if (p.rtt_avg_ms && !averaged) {
                averages.push_back({{"series", series},
                                    {"avg_ms", *p.rtt_avg_ms},
                                    {"label", fmt::format("avg {:.3f} ms", *p.rtt_avg_ms)}});
                averaged = true;
            }
        }
        if (!averaged && m.contract.ping_rtt_ms) {
            averages.push_back({{"series", series},
                                {"avg_ms", *m.contract.ping_rtt_ms},
                                {"label", fmt::format("{} avg {:.3f} ms", m.contract.mode,
                                                      *m.contract.ping_rtt_ms)}});
        }
    }
    if (replies.empty() && averages.empty()) return std::nullopt;
    const json colour = {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}};
    json layers = json::array();
    if (!replies.empty()) {
        layers.push_back(
            {{"data", {{"values", replies}}},
             {"mark", {{"type", "line"}, {"point", {{"size", 40}}}}},
             {"encoding",
              {{"x",
                {{"field", "seq"},
                 {"type", "quantitative"},
                 {"title", "echo request (icmp_seq)"},
                 {"axis", {{"tickMinStep", 1}, {"format", "d"}}}}},
               {"y", {{"field", "rtt_ms"}, {"type", "quantitative"}, {"title", "RTT, ms"}}},
               {"color", colour},
               {"tooltip",
                {{{"field", "series"}},
                 {{"field", "seq"}},
                 {{"field", "rtt_ms"}, {"title", "RTT ms"}},
                 {{"field", "reply"}}}}}}});
    }
    if (!averages.empty()) {
        layers.push_back(
            {{"data", {{"values", averages}}},
             {"layer",
              {{{"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}}},
                {"encoding",
                 {{"y", {{"field", "avg_ms"}, {"type", "quantitative"}, {"title", "RTT, ms"}}},
                  {"color", colour}}}},
               {{"mark", {{"type", "text"}, {"align", "right"}, {"dy", -6}, {"x", "width"}}},
                {"encoding",
                 {{"y", {{"field", "avg_ms"}, {"type", "quantitative"}}},
                  {"text", {{"field", "label"}}},
                  {"color", colour}}}}}}});
    }
    Chart c;
    c.id = "latency";
    c.title = "Latency: ping round-trip time per echo request";
    c.caption =
        "Each reply's round-trip time as ping printed it, and the average of the run (dashed). "
        "The first request often takes longer: it waits for ARP. A mode whose contract holds "
        "only its average shows just the dashed line.";
    c.spec = base_spec();
    c.spec["width"] = 420;
    c.spec["height"] = 200;
    c.spec["layer"] = std::move(layers);
    c.data_rows = replies.size() + averages.size();
    return c;
}

// ---- tables ------------------------------------------------------------------------------

struct Cells {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

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

std::string html_table(const Cells& c, const char* css_class = "") {
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

std::string mode_heading(const ReportMode& m) {
    std::string s = m.contract.mode;
    if (!m.contract.node1.empty() || !m.contract.node2.empty())
        s += fmt::format(" ({} ← {})", m.contract.node1, m.contract.node2);
    return s;
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

}  // namespace

std::optional<double> report_link_bps(const ReportInput& in) {
    for (const auto& m : in.modes)
        if (m.link_bps) return m.link_bps;
    return std::nullopt;
}

std::vector<Chart> report_charts(const ReportInput& in) {
    std::vector<Chart> charts;
    for (auto make : {ceiling_chart, frame_chart, ledger_chart, throughput_chart, events_chart,
                      drops_chart, latency_chart}) {
        if (auto c = make(in)) charts.push_back(std::move(*c));
    }
    return charts;
}

std::vector<std::string> report_gaps(const ReportInput& in) {
    std::vector<std::string> gaps;
    bool traces = false, samples = false, drops = false, pings = false;
    for (const auto& m : in.modes) {
        for (const auto& t : m.traces) {
            traces = true;
            samples = samples || !t.samples.empty();
            for (const auto& p : t.phases) drops = drops || p.drops_total() > 0;
        }
        pings = pings || !m.measurements.pings.empty() || m.contract.ping_rtt_ms;
    }
    if (!report_link_bps(in))
        gaps.push_back(
            "No link rate in any contract (link_mbps): no ceiling is drawn and the "
            "frame breakdown is left out.");
    if (!traces) {
        gaps.push_back(
            "No probe traces: throughput over time, retransmits and drops need the "
            "np-trace/1 files `np-explain run` writes (or `np-explain attach --trace`).");
    } else if (!samples) {
        gaps.push_back("The traces hold no samples: nothing to plot over time.");
    }
    if (traces && !drops) gaps.push_back("No packet was dropped in any traced phase.");
    if (!pings) gaps.push_back("No ping output and no ping_rtt_ms: no latency chart.");
    return gaps;
}

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
