#include "analysis/contract.hpp"

#include <fmt/format.h>

#include "analysis/error.hpp"

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
    Contract c;
    try {
        c.document = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw InputError(source, fmt::format("not a JSON result contract: {}", e.what()));
    }
    if (!c.document.is_object()) {
        throw InputError(source, "not a result contract: the top level is not a JSON object");
    }
    c.mode = string_field(c.document, "mode", source, true);
    c.ping_rtt_ms = number_field(c.document, "ping_rtt_ms", source);
    c.tcp_mbps = number_field(c.document, "tcp_mbps", source);
    c.udp_mbps = number_field(c.document, "udp_mbps", source);
    c.udp_loss_pct = number_field(c.document, "udp_loss_pct", source);
    c.node1 = string_field(c.document, "node1", source, false);
    c.node2 = string_field(c.document, "node2", source, false);
    return c;
}

}  // namespace np
