#include "analysis/finding.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace np {

const char* to_string(Severity s) {
    switch (s) {
        case Severity::info:
            return "info";
        case Severity::warn:
            return "warn";
        case Severity::error:
            return "error";
    }
    return "info";
}

int exit_status_for(const std::vector<Finding>& findings) {
    for (const auto& f : findings)
        if (f.severity == Severity::error) return 1;
    return 0;
}

nlohmann::json to_json(const Finding& f) {
    nlohmann::json evidence = nlohmann::json::object();
    for (const auto& [k, v] : f.evidence) evidence[k] = v;
    return {{"code", f.code},       {"severity", to_string(f.severity)},
            {"title", f.title},     {"detail", f.detail},
            {"evidence", evidence}, {"next_step", f.next_step}};
}

nlohmann::json findings_document(const std::vector<Finding>& findings) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : findings) list.push_back(to_json(f));
    return {{"schema", "np-findings/1"}, {"findings", list}};
}

std::string render_findings(const std::vector<Finding>& findings) {
    std::string out;
    for (const auto& f : findings) {
        out += fmt::format("[{}] {} ({})\n", to_string(f.severity), f.title, f.code);
        if (!f.detail.empty()) out += fmt::format("    {}\n", f.detail);
        for (const auto& [k, v] : f.evidence) out += fmt::format("      {} = {}\n", k, v);
        if (!f.next_step.empty()) out += fmt::format("    next step: {}\n", f.next_step);
    }
    return out;
}

}  // namespace np
