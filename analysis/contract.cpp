#include "analysis/contract.hpp"

#include <fmt/format.h>

#include "analysis/model.hpp"
#include "analysis/names.hpp"
#include "src/common/errors.hpp"
#include "src/common/json_document.hpp"
#include "src/common/run_dir.hpp"

namespace np {
namespace {

std::optional<double> number_field(const nlohmann::json& doc, const char* key,
                                   const std::string& source) {
    const auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) {
        throw InputError(fmt::format("{}: {}", source, key),
                         fmt::format("expected a number, found {}", it->type_name()));
    }
    return it->get<double>();
}

std::string string_field(const nlohmann::json& doc, const char* key, const std::string& source,
                         bool required) {
    const auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) {
        if (required) throw InputError(fmt::format("{}: {}", source, key), "missing");
        return {};
    }
    if (!it->is_string()) {
        throw InputError(fmt::format("{}: {}", source, key),
                         fmt::format("expected a string, found {}", it->type_name()));
    }
    return it->get<std::string>();
}

}  // namespace

Contract parse_contract(std::string_view text, const std::string& source) {
    return contract_from_json(parse_json_document(text, source), source);
}

Contract contract_from_json(nlohmann::json document, const std::string& source) {
    Contract c;
    c.document = std::move(document);
    if (!c.document.is_object()) {
        throw InputError(source, "not a result contract: the top level is not a JSON object");
    }
    c.mode = string_field(c.document, "mode", source, true);
    // The mode becomes part of file names (np_contract_<mode>.json, <mode>_tcp.json, …).
    check_mode_name(c.mode, fmt::format("{}: mode", source));
    c.ping_rtt_ms = number_field(c.document, "ping_rtt_ms", source);
    c.tcp_mbps = number_field(c.document, "tcp_mbps", source);
    c.udp_mbps = number_field(c.document, "udp_mbps", source);
    c.udp_loss_pct = number_field(c.document, "udp_loss_pct", source);
    c.node1 = string_field(c.document, "node1", source, false);
    c.node2 = string_field(c.document, "node2", source, false);
    return c;
}

TutorialFigures tutorial_figures(const Measurements& m) {
    TutorialFigures f;
    if (!m.pings.empty()) f.ping_rtt_ms = m.pings.front().rtt_avg_ms;
    for (const auto& t : m.throughput) {
        const auto goodput = t.received_bps ? t.received_bps : t.sent_bps;
        if (t.transport == Transport::tcp && !f.tcp_mbps && goodput) f.tcp_mbps = *goodput / 1e6;
        if (t.transport == Transport::udp && !f.udp_mbps && goodput) {
            f.udp_mbps = *goodput / 1e6;
            if (t.datagrams_lost && t.datagrams_total && *t.datagrams_total > 0) {
                f.udp_loss_pct = 100.0 * static_cast<double>(*t.datagrams_lost) /
                                 static_cast<double>(*t.datagrams_total);
            } else {
                f.udp_loss_pct = t.printed_loss_pct;
            }
        }
    }
    return f;
}

void attach_explanation(nlohmann::json& contract, const Explanation& e,
                        const std::vector<std::string>& trace_files,
                        std::optional<double> link_bps) {
    contract["explain"] = to_json(e);
    contract["traces"] = trace_files;
    contract["link_mbps"] = link_bps ? nlohmann::json(*link_bps / 1e6) : nlohmann::json(nullptr);
    contract["model"] = nullptr;
    if (link_bps) {
        try {
            ModelParams p;
            p.link_bps = *link_bps;
            contract["model"] = to_json(compute_model(p));
        } catch (const InputError&) {
            // a link rate the model does not accept: no ceilings to attach
        }
    }
}

nlohmann::json build_contract(const std::string& mode, const std::string& node1,
                              const std::string& node2, const Measurements& m, const Explanation& e,
                              const std::vector<std::string>& trace_files,
                              std::optional<double> link_bps) {
    const auto f = tutorial_figures(m);
    const auto value = [](const std::optional<double>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    nlohmann::json doc = nlohmann::json::object();
    doc["mode"] = mode;
    doc["ping_rtt_ms"] = value(f.ping_rtt_ms);
    doc["tcp_mbps"] = value(f.tcp_mbps);
    doc["udp_mbps"] = value(f.udp_mbps);
    doc["udp_loss_pct"] = value(f.udp_loss_pct);
    doc["node1"] = node1;
    doc["node2"] = node2;
    attach_explanation(doc, e, trace_files, link_bps);
    return doc;
}

Measurements measurements_from_contract(const Contract& c) {
    Measurements m;
    const std::string source = run_dir::contract(c.mode);
    if (c.tcp_mbps) {
        ThroughputTest t;
        t.source = source;
        t.label = c.mode + " TCP";
        t.transport = Transport::tcp;
        t.received_bps = *c.tcp_mbps * 1e6;
        m.throughput.push_back(std::move(t));
    }
    if (c.udp_mbps) {
        ThroughputTest t;
        t.source = source;
        t.label = c.mode + " UDP";
        t.transport = Transport::udp;
        t.received_bps = *c.udp_mbps * 1e6;
        t.printed_loss_pct = c.udp_loss_pct;
        m.throughput.push_back(std::move(t));
    }
    return m;
}

std::vector<std::string> contract_trace_files(const Contract& c) {
    std::vector<std::string> files;
    const auto it = c.document.find("traces");
    if (it == c.document.end() || it->is_null()) return files;
    const std::string field = fmt::format("np_contract_{}.json: traces", c.mode);
    if (!it->is_array())
        throw InputError(field,
                         fmt::format("expected an array of file names, found {}", it->type_name()));
    for (const auto& f : *it) {
        if (!f.is_string())
            throw InputError(field, fmt::format("expected a file name, found {}", f.type_name()));
        check_contained_path(f.get_ref<const std::string&>(), field);
        files.push_back(f.get<std::string>());
    }
    return files;
}

}  // namespace np
