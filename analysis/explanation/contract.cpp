#include "analysis/explanation/contract.hpp"

#include <cmath>

#include "analysis/explanation/model.hpp"
#include "analysis/readers/names.hpp"
#include "common/errors.hpp"
#include "common/json_document.hpp"
#include "common/json_field.hpp"
#include "common/run_dir.hpp"

namespace np {
Contract parse_contract(std::string_view text, const std::string& source) {
    return contract_from_json(parse_json_document(text, source), source);
}

Contract contract_from_json(nlohmann::json document, const std::string& source) {
    Contract c;
    c.document = std::move(document);
    if (!c.document.is_object()) {
        throw InputError(source, "not a result contract: the top level is not a JSON object");
    }
    const JsonField doc = JsonField::document(c.document, source);
    const JsonField mode = doc.required("mode");
    c.mode = mode.str();
    // The mode becomes part of file names (np_contract_<mode>.json, <mode>_tcp.json, …).
    check_mode_name(c.mode, mode.path());
    c.ping_rtt_ms = doc.optional_number("ping_rtt_ms");
    c.tcp_mbps = doc.optional_number("tcp_mbps");
    c.udp_mbps = doc.optional_number("udp_mbps");
    c.udp_loss_pct = doc.optional_number("udp_loss_pct");
    c.node1 = doc.optional_str("node1").value_or("");
    c.node2 = doc.optional_str("node2").value_or("");
    if (const auto mbps = doc.optional_number("link_mbps")) {
        if (!(*mbps > 0) || !std::isfinite(*mbps))
            doc.required("link_mbps").fail("the link rate must be a positive number of Mbit/s");
        c.link_bps = *mbps * 1e6;
    }
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
                        const std::vector<std::string>& trace_files, std::optional<double> link_bps,
                        const Measurements& m) {
    contract["explain"] = to_json(e);
    contract["traces"] = trace_files;
    contract["link_mbps"] = link_bps ? nlohmann::json(*link_bps / 1e6) : nlohmann::json(nullptr);
    contract["model"] = nullptr;
    if (link_bps) {
        try {
            ModelParams p;
            p.link_bps = *link_bps;
            for (const auto& t : m.throughput) {
                if (const auto ip = ip_version_of_address(t.server_host)) {
                    p.ip = *ip;
                    break;
                }
            }
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
    attach_explanation(doc, e, trace_files, link_bps, m);
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
    const auto traces = JsonField::document(c.document, run_dir::contract(c.mode)).find("traces");
    if (!traces) return files;
    for (size_t i = 0; i < traces->array_size(); ++i) {
        const JsonField f = traces->at(i);
        files.push_back(f.str());
        check_contained_path(files.back(), f.path());
    }
    return files;
}

}  // namespace np
