// The report's charts: Vega-Lite specs with their data inline (report.hpp).
#include "report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/explanation/format.hpp"
#include "analysis/explanation/latency.hpp"
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

// Numbers in chart data: short enough to keep the page small, exact enough for a tooltip.
double round_to(double v, int decimals) {
    const double f = std::pow(10.0, decimals);
    return std::round(v * f) / f;
}

// ---- what the report models against ------------------------------------------------------

std::optional<double> mode_link_bps(const ReportInput& in, const RunDirMode& m) {
    return m.contract.link_bps ? m.contract.link_bps : report_link_bps(in);
}

// The ceiling the explanation held the mode's test of this transport against (the MTU, MSS and
// datagram size the tool reported), as its verdict carries it. An explanation written before
// verdicts carried their ceiling has it computed again here, from the tool's output, else the
// model's defaults for the link.
std::optional<Ceiling> ceiling_for(const RunDirMode& m, Transport transport,
                                   std::optional<double> link_bps) {
    if (m.explanation) {
        for (const auto& v : m.explanation->verdicts)
            if (v.ceiling && v.ceiling->transport == transport) return v.ceiling;
    }
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

// Every chart is made here: its id, title and caption, the Vega-Lite keys of its own (data,
// mark, encoding, layers, facets, size) over the shared config, and the data rows it draws in
// all (every layer's).
Chart make_chart(std::string id, std::string title, std::string caption, json own,
                 size_t data_rows) {
    Chart c{std::move(id), std::move(title), std::move(caption), base_spec(), data_rows};
    for (auto& [key, value] : own.items()) c.spec[key] = std::move(value);
    return c;
}

// A chart of one table of rows, the spec's own keys drawing them; none when the table is empty.
// Layers with data of their own add their rows to the count.
std::optional<Chart> rows_chart(std::string id, std::string title, std::string caption, json rows,
                                json own, size_t layer_rows = 0) {
    if (rows.empty()) return std::nullopt;
    const size_t data_rows = rows.size() + layer_rows;
    own["data"] = {{"values", std::move(rows)}};
    return make_chart(std::move(id), std::move(title), std::move(caption), std::move(own),
                      data_rows);
}

// A colour scale that gives each value its fixed colour, in the order given.
json colour_scale(const std::vector<std::pair<std::string, std::string>>& colours) {
    json domain = json::array(), range = json::array();
    for (const auto& [value, colour] : colours) {
        domain.push_back(value);
        range.push_back(colour);
    }
    return {{"domain", domain}, {"range", range}};
}

// The mark of the nominal link rate: a dashed grey rule.
json line_rate_mark() {
    return {{"type", "rule"}, {"strokeDash", {6, 4}}, {"color", "#888"}};
}

// One bar of the ceiling chart: the goodput a mode measured over one transport, labelled with
// its share of the model's ceiling when there is one.
json ceiling_row(const ReportInput& in, const RunDirMode& m, Transport transport, double mbps) {
    json r = {{"mode", m.contract.mode},
              {"test", transport_name(transport)},
              {"measured_mbps", round_to(mbps, 2)},
              {"ceiling_mbps", nullptr},
              {"pct_of_ceiling", nullptr},
              {"label", fmt::format("{:.1f}", mbps)}};
    if (const auto ceiling = ceiling_for(m, transport, mode_link_bps(in, m))) {
        const double c = ceiling->goodput_bps / 1e6;
        r["ceiling_mbps"] = round_to(c, 2);
        r["pct_of_ceiling"] = round_to(100 * mbps / c, 2);
        r["label"] = fmt::format("{:.1f} %", 100 * mbps / c);
    }
    return r;
}

// The ceiling chart's bars: one per mode and transport its contract measured.
json ceiling_rows(const ReportInput& in) {
    json rows = json::array();
    for (const auto& m : in.modes) {
        const std::pair<Transport, std::optional<double>> figures[] = {
            {Transport::tcp, m.contract.tcp_mbps}, {Transport::udp, m.contract.udp_mbps}};
        for (const auto& [transport, mbps] : figures)
            if (mbps) rows.push_back(ceiling_row(in, m, transport, *mbps));
    }
    return rows;
}

// The ceiling chart's layers over its bars: each measured bar, the model's ceiling as a tick
// and the bar's label, the modes in the order they ran with TCP and UDP side by side.
json ceiling_layers(const ReportInput& in) {
    json modes = json::array();
    for (const auto& m : in.modes) modes.push_back(m.contract.mode);
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
    return layers;
}

// The nominal link rate as a labelled dashed line, over one data row of its own.
json line_rate_layer(double link_bps) {
    return {
        {"data",
         {{"values",
           {{{"link_mbps", round_to(link_bps / 1e6, 3)},
             {"label", "line rate " + format_link_rate(link_bps)}}}}}},
        {"layer",
         {{{"mark", line_rate_mark()},
           {"encoding", {{"y", {{"field", "link_mbps"}, {"type", "quantitative"}}}}}},
          {{"mark", {{"type", "text"}, {"align", "left"}, {"dy", -6}, {"x", 4}, {"color", "#666"}}},
           {"encoding",
            {{"y", {{"field", "link_mbps"}, {"type", "quantitative"}}},
             {"text", {{"field", "label"}}}}}}}}};
}

std::optional<Chart> ceiling_chart(const ReportInput& in) {
    json layers = ceiling_layers(in);
    const std::optional<double> link = report_link_bps(in);
    if (link) layers.push_back(line_rate_layer(*link));
    return rows_chart(
        "ceiling", "TCP and UDP against the line-rate ceiling",
        "Bars: the goodput each mode measured (the contract's tcp_mbps and udp_mbps), labelled "
        "with the share of the model's ceiling. Black tick: the header-overhead model's goodput "
        "ceiling for that test on this link. Dashed line: the nominal link rate, which no "
        "goodput reaches because every frame also carries headers and framing.",
        ceiling_rows(in),
        json{{"width", std::max<size_t>(220, 150 * in.modes.size())},
             {"height", 260},
             {"layer", std::move(layers)}},
        link ? 1 : 0);
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

// The first mode with a known link: it holds the model the explanation used.
const RunDirMode* modelled_mode(const ReportInput& in) {
    for (const auto& m : in.modes)
        if (mode_link_bps(in, m)) return &m;
    return nullptr;
}

// The name of one unit on the wire: "TCP (1448 B MSS)", "UDP (8972 B datagram, 7 frames)".
std::string frame_unit(Transport t, const Ceiling& ceiling) {
    return ceiling.fragmented()
               ? fmt::format("{} ({} B datagram, {} frames)", transport_name(t),
                             ceiling.payload_bytes_per_unit, ceiling.frames.size())
               : fmt::format("{} ({} B {})", transport_name(t), ceiling.payload_bytes_per_unit,
                             t == Transport::tcp ? "MSS" : "datagram");
}

// The bars of one unit: the bytes of each part its frames carry, numbered in wire order.
void add_frame_rows(json& rows, const std::string& unit, const Ceiling& ceiling) {
    int order = 0;
    for (const auto& [name, label] : kFrameParts) {
        int bytes = 0;
        for (const auto& f : ceiling.frames) bytes += f.bytes_of(name);
        ++order;
        if (bytes == 0) continue;
        rows.push_back({{"unit", unit},
                        {"part", label},
                        {"bytes", bytes},
                        {"order", order},
                        {"share_pct", round_to(100.0 * bytes / ceiling.wire_bytes_per_unit, 2)}});
    }
}

// Only the parts these frames have, in wire order, each with its fixed colour.
json frame_colours(const json& rows) {
    std::vector<std::pair<std::string, std::string>> colours;
    for (size_t i = 0; i < std::size(kFrameParts); ++i) {
        const bool present = std::any_of(rows.begin(), rows.end(), [&](const json& r) {
            return r["part"] == kFrameParts[i].second;
        });
        if (present) colours.emplace_back(kFrameParts[i].second, kFrameColours[i]);
    }
    return colour_scale(colours);
}

std::optional<Chart> frame_chart(const ReportInput& in) {
    const RunDirMode* mode = modelled_mode(in);
    if (!mode) return std::nullopt;
    json rows = json::array();
    std::string caption;
    for (const Transport t : {Transport::tcp, Transport::udp}) {
        const auto ceiling = ceiling_for(*mode, t, mode_link_bps(in, *mode));
        if (!ceiling) continue;
        add_frame_rows(rows, frame_unit(t, *ceiling), *ceiling);
        caption += fmt::format(" {}: {}.", transport_name(t), describe_overhead(*ceiling));
    }
    json colours = frame_colours(rows);
    return rows_chart(
        "frame", "What one full frame carries",
        "Bytes on the wire per TCP segment and per UDP datagram, in wire order (the model "
        "behind the ceilings)." +
            caption,
        std::move(rows),
        json{{"width", 360},
             {"height", 90},
             {"mark", {{"type", "bar"}}},
             {"encoding",
              {{"y", {{"field", "unit"}, {"type", "nominal"}, {"title", nullptr}}},
               {"x",
                {{"field", "bytes"},
                 {"type", "quantitative"},
                 {"stack", "zero"},
                 {"title", "bytes on the wire"}}},
               {"color",
                {{"field", "part"},
                 {"type", "nominal"},
                 {"title", "part"},
                 {"scale", std::move(colours)}}},
               {"order", {{"field", "order"}, {"type", "quantitative"}}},
               {"tooltip",
                {{{"field", "unit"}},
                 {{"field", "part"}},
                 {{"field", "bytes"}},
                 {{"field", "share_pct"}, {"title", "% of the wire bytes"}}}}}}});
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
        layers.push_back({{"mark", line_rate_mark()},
                          {"encoding", {{"y", {{"datum", round_to(*link / 1e6, 3)}}}}}});
    }
    return make_chart(
        "throughput", "Throughput over time, per phase (probe samples)",
        fmt::format(
            "What crossed each node's data NIC per sample interval: wire bytes × 8 / interval, so "
            "headers, preamble, FCS and inter-frame gap are counted and the ceiling is the link "
            "rate itself{}. tx is what the node sent, rx what it received; the sender's tx and the "
            "receiver's rx of the measured flow should lie on top of each other.",
            link ? fmt::format(" (dashed, {})", format_link_rate(*link)) : std::string()),
        phase_facet(in, rows, std::move(layers), 200), rows.size());
}

// The bins drawn of a phase: its first this many ms (three seconds at 1 ms).
constexpr size_t kPlottedBins = 3000;

// The bins chart's rows: per phase, each node's flow in 1 ms bins as it left that node's NIC
// (tx) and arrived (rx), leaving out a series with under a twentieth of the phase's busiest
// (the ACKs beside the data).
json bin_rows(const ReportInput& in) {
    json rows = json::array();
    for (const auto& m : in.modes) {
        for (const auto& phase : plotted_phases(in)) {
            struct Series {
                std::string name;
                const std::vector<uint64_t>* bins;
                uint64_t bytes = 0;
            };
            std::vector<Series> series;
            for (const auto& t : m.traces) {
                const PhaseTrace* p = t.find_phase(phase);
                if (!p || !p->bins) continue;
                for (const auto& [dir, bins] :
                     {std::pair{"tx", &p->bins->tx_wire_bytes}, {"rx", &p->bins->rx_wire_bytes}}) {
                    Series s{fmt::format("{}{} {}", series_prefix(in, m), node_name(t), dir), bins};
                    for (const auto b : *bins) s.bytes += b;
                    series.push_back(std::move(s));
                }
            }
            uint64_t busiest = 0;
            for (const auto& s : series) busiest = std::max(busiest, s.bytes);
            for (const auto& s : series) {
                if (s.bytes == 0 || s.bytes * 20 < busiest) continue;
                // One row a series, its bins an array the spec flattens (a row a bin would be
                // most of the page).
                json mbps = json::array();
                const size_t n = std::min(s.bins->size(), kPlottedBins);
                for (size_t ms = 0; ms < n; ++ms)
                    mbps.push_back(round_to(double((*s.bins)[ms]) * 8.0 / 1000.0, 1));
                rows.push_back({{"series", s.name}, {"phase", phase}, {"mbps", std::move(mbps)}});
            }
        }
    }
    return rows;
}

std::optional<Chart> bins_chart(const ReportInput& in) {
    json rows = bin_rows(in);
    if (rows.empty()) return std::nullopt;
    const size_t n = rows.size();
    json layers = json::array();
    layers.push_back(
        {{"mark", {{"type", "line"}, {"strokeWidth", 1}, {"interpolate", "step-after"}}},
         {"encoding",
          {{"x",
            {{"field", "ms"}, {"type", "quantitative"}, {"title", "ms since the phase began"}}},
           {"y", {{"field", "mbps"}, {"type", "quantitative"}, {"title", "wire rate, Mbit/s"}}},
           {"color", {{"field", "series"}, {"type", "nominal"}, {"title", "node, direction"}}},
           {"tooltip",
            {{{"field", "series"}},
             {{"field", "ms"}},
             {{"field", "mbps"}, {"title", "wire Mbit/s"}}}}}}});
    const auto link = report_link_bps(in);
    if (link) {
        layers.push_back({{"mark", line_rate_mark()},
                          {"encoding", {{"y", {{"datum", round_to(*link / 1e6, 3)}}}}}});
    }
    json spec = phase_facet(in, std::move(rows), std::move(layers), 200);
    spec["transform"] = {
        {{"flatten", {"mbps"}}},
        {{"window", {{{"op", "row_number"}, {"as", "bin"}}}}, {"groupby", {"series", "phase"}}},
        {{"calculate", "datum.bin - 1"}, {"as", "ms"}}};
    return make_chart(
        "bins", "The flow millisecond by millisecond: bursts",
        fmt::format(
            "The measured flow's wire rate in 1 ms bins, as it left each node's NIC (tx) and "
            "arrived (rx), over the first {} s of each phase: what the probe samples' 100 ms "
            "average away. A sender whose bins stand far above what arrives sends in bursts; "
            "where the path between lost what they brought, LOSS_IN_BURSTS says so. A single bin "
            "can hold up to twice its share when a CPU's timer fired late{}.",
            kPlottedBins / 1000,
            link ? fmt::format("; the dashed line is the link's {}", format_link_rate(*link))
                 : std::string()),
        std::move(spec), n);
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
    return make_chart(
        "events", "TCP retransmits and packet drops over time",
        "Per sample interval: segments TCP retransmitted on the data NIC, and packets the "
        "kernel dropped in the node's network namespace, whatever the reason (\"Drops by kernel "
        "reason\" splits them).",
        phase_facet(in, rows, std::move(layers), 140), rows.size());
}

// What a drop of a trace was to the test: a drop of the measured flow, one that cost it nothing
// (teardown, a purged queue: the ledger's housekeeping), or other traffic's.
const char* drop_class(const DropReasonCount& d, const DropLocation& w) {
    if (w.flow != "iperf") return " (other traffic)";
    return is_housekeeping_reason(drop_label(d)) ? " (housekeeping)" : "";
}

// The drops chart's bars: per node, phase and kernel reason, the packets dropped where the trace
// places them (a reason the trace places nowhere counted as a whole).
json drop_rows(const ReportInput& in) {
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
    return rows;
}

std::optional<Chart> drops_chart(const ReportInput& in) {
    return rows_chart(
        "drops", "Drops by kernel reason",
        "Packets dropped per node and kernel drop reason (enum skb_drop_reason, read from the "
        "running kernel), coloured by phase. SOCKET_RCVBUFF is a full receive buffer; a drop "
        "the kernel gave no reason for is named by the function that freed it (\"freed in "
        "…\"), or NOT_SPECIFIED where the trace has none. Housekeeping drops (a segment "
        "after the connection closed, a queue purged at teardown) and other traffic's cost the "
        "test nothing; the ledger above places the ones that did.",
        drop_rows(in),
        json{{"width", 360},
             {"mark", {{"type", "bar"}}},
             {"encoding",
              {{"y",
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
                 {{"aggregate", "sum"}, {"field", "bytes"}, {"title", "bytes"}}}}}}});
}

// The ledger chart's bars: every counted point of each test's ledger, numbered in flow order.
json ledger_rows(const ReportInput& in) {
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
    return rows;
}

// One ledger's bars: its points top to bottom on a symmetric-log count, coloured by kind.
json ledger_bars() {
    return {{"width", 420},
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
                {"scale", colour_scale(kLedgerKinds)},
                {"title", "what it is"}}},
              {"tooltip",
               {{{"field", "step"}},
                {{"field", "node"}},
                {{"field", "packets"}, {"format", ","}},
                {{"field", "kind"}},
                {{"field", "note"}}}}}}};
}

std::optional<Chart> ledger_chart(const ReportInput& in) {
    return rows_chart(
        "ledger", "Each test's packets at every point, and the drops between",
        "The measured flow from the sending application to the receiving one, from the tool's "
        "counts and both probes: each numbered point with its count, and between two points "
        "every drop of the flow by node and kernel reason. Red is loss, green duplicates TCP "
        "resent and the receiver discarded (not loss), grey drops that cost the test nothing; "
        "orange is what no drop accounts for. The scale is symmetric-log so a handful of drops "
        "shows beside tens of thousands of packets: read the numbers in the table or tooltip.",
        ledger_rows(in),
        json{{"facet",
              {{"row",
                {{"field", "test"},
                 {"type", "nominal"},
                 {"title", nullptr},
                 {"header",
                  {{"labelAngle", 0},
                   {"labelAlign", "left"},
                   {"labelAnchor", "start"},
                   {"labelOrient", "top"},
                   {"labelFontSize", 13},
                   {"labelFontWeight", "bold"}}}}}}},
             {"spec", ledger_bars()},
             {"resolve", {{"scale", {{"y", "independent"}}}}}});
}

// run --find-udp-ceiling's search as its findings' evidence holds it: the steps (each offered
// load with the loss it met) and, per mode, the loss threshold and the model's ceiling.
struct CeilingSearch {
    json steps = json::array();
    json rules = json::array();
};

// Adds one UDP_CEILING_FOUND / _NOT_FOUND finding's steps and rules to the search.
void add_search(CeilingSearch& search, const std::string& mode, const Finding& f) {
    json offered, loss, received, threshold, ceiling;
    for (const auto& [key, value] : f.evidence) {
        if (key == "step_offered_mbps") offered = value;
        if (key == "step_loss_pct") loss = value;
        if (key == "step_received_mbps") received = value;
        if (key == "max_loss_pct") threshold = value;
        if (key == "ceiling_mbps") ceiling = value;
    }
    if (!offered.is_array() || !loss.is_array() || loss.size() != offered.size()) return;
    for (size_t i = 0; i < offered.size(); ++i)
        if (loss[i].is_number())
            search.steps.push_back(
                {{"mode", mode},
                 {"step", i + 1},
                 {"offered_mbps", offered[i]},
                 {"loss_pct", loss[i]},
                 {"received_mbps",
                  received.is_array() && i < received.size() ? received[i] : json(nullptr)}});
    if (threshold.is_number() && ceiling.is_number())
        search.rules.push_back(
            {{"mode", mode}, {"threshold_pct", threshold}, {"ceiling_mbps", ceiling}});
}

// The search of every mode that ran one.
CeilingSearch ceiling_search(const ReportInput& in) {
    CeilingSearch search;
    for (const auto& m : in.modes) {
        if (!m.explanation) continue;
        for (const auto& f : m.explanation->findings)
            if (f.code == "UDP_CEILING_FOUND" || f.code == "UDP_CEILING_NOT_FOUND")
                add_search(search, m.contract.mode, f);
    }
    return search;
}

// The search drawn: loss over offered load, the threshold dashed, the model's ceiling in grey.
json ceiling_search_layers(const CeilingSearch& search) {
    const json x = {{"field", "offered_mbps"},
                    {"type", "quantitative"},
                    {"title", "offered load (Mbit/s, all streams)"}};
    return json::array(
        {{{"data", {{"values", search.steps}}},
          {"mark", {{"type", "line"}, {"point", true}}},
          {"encoding",
           {{"x", x},
            {"y",
             {{"field", "loss_pct"},
              {"type", "quantitative"},
              {"scale", {{"type", "symlog"}, {"constant", 0.01}}},
              {"title", "datagrams lost (%)"}}},
            {"order", {{"field", "offered_mbps"}}},
            {"color", {{"field", "mode"}, {"type", "nominal"}}},
            {"tooltip",
             {{{"field", "step"}},
              {{"field", "offered_mbps"}},
              {{"field", "received_mbps"}},
              {{"field", "loss_pct"}}}}}}},
         {{"data", {{"values", search.rules}}},
          {"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}}},
          {"encoding", {{"y", {{"field", "threshold_pct"}, {"type", "quantitative"}}}}}},
         {{"data", {{"values", search.rules}}},
          {"mark", {{"type", "rule"}, {"color", "#999"}}},
          {"encoding", {{"x", {{"field", "ceiling_mbps"}, {"type", "quantitative"}}}}}}});
}

// run --find-udp-ceiling's steps (the evidence of UDP_CEILING_FOUND / _NOT_FOUND): the loss each
// offered load met, against the threshold and the model's ceiling.
std::optional<Chart> udp_ceiling_chart(const ReportInput& in) {
    const CeilingSearch search = ceiling_search(in);
    if (search.steps.empty()) return std::nullopt;
    return make_chart(
        "udp-ceiling", "The UDP ceiling search: loss at each offered load",
        "Each short UDP test of run --find-udp-ceiling: the load offered and the share of its "
        "datagrams lost, numbered in the order run (the model's ceiling first, then halving the "
        "gap). The dashed line is the loss threshold, the grey one the model's ceiling; the "
        "ceiling found is the highest load at or under the threshold. The loss scale is "
        "symmetric-log so 0.1 % shows beside 10 %.",
        json{{"width", 520}, {"height", 260}, {"layer", ceiling_search_layers(search)}},
        search.steps.size() + 2 * search.rules.size());
}

// What ping measured, per mode: each reply's round-trip time, and the run's average (the
// first ping's that printed one, else the contract's).
struct PingSeries {
    json replies = json::array();
    json averages = json::array();
};

// Adds one mode's replies and average to the series.
void add_ping_series(PingSeries& ping, const ReportInput& in, const RunDirMode& m) {
    const std::string series = in.modes.size() > 1 ? m.contract.mode : "RTT";
    bool averaged = false;
    for (const auto& p : m.measurements.pings) {
        for (const auto& r : p.replies) {
            ping.replies.push_back({{"series", series},
                                    {"seq", r.seq},
                                    {"rtt_ms", r.rtt_ms},
                                    {"reply", r.duplicate ? "duplicate" : "reply"}});
        }
        if (p.rtt_avg_ms && !averaged) {
            ping.averages.push_back({{"series", series},
                                     {"avg_ms", *p.rtt_avg_ms},
                                     {"label", fmt::format("avg {:.3f} ms", *p.rtt_avg_ms)}});
            averaged = true;
        }
    }
    if (!averaged && m.contract.ping_rtt_ms) {
        ping.averages.push_back(
            {{"series", series},
             {"avg_ms", *m.contract.ping_rtt_ms},
             {"label", fmt::format("{} avg {:.3f} ms", m.contract.mode, *m.contract.ping_rtt_ms)}});
    }
}

// The series drawn: the replies as a line over icmp_seq, each average as a labelled dashed rule.
json ping_layers(const PingSeries& ping) {
    const json colour = {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}};
    json layers = json::array();
    if (!ping.replies.empty()) {
        layers.push_back(
            {{"data", {{"values", ping.replies}}},
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
    if (!ping.averages.empty()) {
        layers.push_back(
            {{"data", {{"values", ping.averages}}},
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
    return layers;
}

std::optional<Chart> latency_chart(const ReportInput& in) {
    PingSeries ping;
    for (const auto& m : in.modes) add_ping_series(ping, in, m);
    if (ping.replies.empty() && ping.averages.empty()) return std::nullopt;
    return make_chart(
        "latency", "Latency: ping round-trip time per echo request",
        "Each reply's round-trip time as ping printed it, and the average of the run (dashed). "
        "The first request often takes longer: it waits for ARP. A mode whose contract holds "
        "only its average shows just the dashed line.",
        json{{"width", 420}, {"height", 200}, {"layer", ping_layers(ping)}},
        ping.replies.size() + ping.averages.size());
}

// The round-trip chart's bars: per mode and phase whose echoes both traces stamped, the mean
// round trip at the pinging node's NIC, stacked by the stage it was spent in (latency.hpp).
json round_trip_rows(const ReportInput& in) {
    json rows = json::array();
    for (const auto& m : in.modes) {
        if (m.traces.size() != 2) continue;
        for (const auto& p : m.traces[0].phases) {
            const PhaseTrace* q = m.traces[1].find_phase(p.name);
            if (!q) continue;
            const auto pinged = split_either_way(p, *q);
            if (!pinged) continue;
            const Trace& pinger = m.traces[pinged->first_pinged ? 0 : 1];
            const Trace& responder = m.traces[pinged->first_pinged ? 1 : 0];
            const RttSplit* split = &pinged->split;
            const std::string phase = series_prefix(in, m) + p.name;
            for (const auto s : kRttStages) {
                const auto us = split->stage(s);
                if (!us) continue;
                const std::string stage =
                    s == RttStage::pinger_queue     ? pinger.node + "'s egress queue"
                    : s == RttStage::path           ? "path beyond both NICs"
                    : s == RttStage::responder_host ? responder.node + " answering"
                                                    : responder.node + "'s egress queue";
                rows.push_back({{"phase", phase},
                                {"stage", stage},
                                {"order", static_cast<int>(s)},
                                {"ms", round_to(std::max(0.0, *us) / 1000, 4)},
                                {"echoes", split->echoes}});
            }
        }
    }
    return rows;
}

std::optional<Chart> round_trip_chart(const ReportInput& in) {
    return rows_chart(
        "round-trip", "Round trip by stage: idle and under each test's load",
        "Ping's echoes, stamped by the probes of both nodes, split by where their round trip "
        "was spent: the pinging node's egress queue (between its tc hook and the driver), the "
        "path beyond both NICs (with each receiving NIC's ring before its ingress hook), the "
        "answering node's host and its egress queue. The ping phase "
        "is idle; in the others ping ran beside the test. A queue that grows under load holds "
        "the echoes behind the test's own packets (bufferbloat); RTT_UNDER_LOAD says so.",
        round_trip_rows(in),
        json{{"width", 420},
             {"mark", {{"type", "bar"}}},
             {"encoding",
              {{"y",
                {{"field", "phase"},
                 {"type", "nominal"},
                 {"title", nullptr},
                 {"sort", nullptr}}},  // the order the probes ran the phases in
               {"x",
                {{"aggregate", "sum"},
                 {"field", "ms"},
                 {"type", "quantitative"},
                 {"title", "mean round trip, ms"}}},
               {"color", {{"field", "stage"}, {"type", "nominal"}, {"title", "stage"}}},
               {"order", {{"field", "order"}}},
               {"tooltip",
                {{{"field", "phase"}},
                 {{"field", "stage"}},
                 {{"field", "ms"}, {"title", "ms"}},
                 {{"field", "echoes"}}}}}}});
}

}  // namespace

std::optional<double> report_link_bps(const ReportInput& in) {
    for (const auto& m : in.modes)
        if (m.contract.link_bps) return m.contract.link_bps;
    return std::nullopt;
}

std::vector<Chart> report_charts(const ReportInput& in) {
    std::vector<Chart> charts;
    for (auto make : {ceiling_chart, frame_chart, ledger_chart, udp_ceiling_chart, throughput_chart,
                      bins_chart, events_chart, drops_chart, latency_chart, round_trip_chart}) {
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

}  // namespace np
