#include "analysis/explanation/finding.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_field.hpp"
#include "common/version.hpp"

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

nlohmann::json rounded(double value, int decimals) {
    if (decimals <= 0) return static_cast<int64_t>(std::llround(value));
    const double scale = std::pow(10.0, decimals);
    return std::round(value * scale) / scale;
}

std::string evidence_text(const nlohmann::json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

int exit_status_for(const std::vector<Finding>& findings) {
    for (const auto& f : findings)
        if (f.severity == Severity::error) return 1;
    return 0;
}

nlohmann::json to_json(const Finding& f) {
    nlohmann::json evidence = nlohmann::json::object();
    for (const auto& [k, v] : f.evidence) evidence[k] = v;
    return {{"code", f.code},          {"severity", to_string(f.severity)},
            {"test", f.test},          {"title", f.title},
            {"detail", f.detail},      {"evidence", evidence},
            {"next_step", f.next_step}};
}

Finding parse_finding(const nlohmann::json& document, const std::string& where) {
    const JsonField doc(document, where);
    if (!document.is_object()) doc.fail("expected a finding object");
    Finding f;
    f.code = doc.required("code").str();
    const std::string severity = doc.required("severity").str();
    if (severity == "info") {
        f.severity = Severity::info;
    } else if (severity == "warn") {
        f.severity = Severity::warn;
    } else if (severity == "error") {
        f.severity = Severity::error;
    } else {
        doc.at("severity").fail(fmt::format("'{}' is not info, warn or error", severity));
    }
    f.test = doc.optional_str("test").value_or("");
    f.title = doc.required("title").str();
    f.detail = doc.optional_str("detail").value_or("");
    f.next_step = doc.optional_str("next_step").value_or("");
    if (const auto evidence = doc.find("evidence")) {
        if (!evidence->value().is_object()) evidence->fail("expected an object of key -> value");
        // to_json's object sorts its keys, so the engine's order is already gone here.
        for (const auto& [k, v] : evidence->value().items()) {
            // A list is of plain values (a search's steps), never of objects or lists.
            const auto plain = [](const nlohmann::json& x) {
                return !x.is_object() && !x.is_array();
            };
            if (v.is_object() || (v.is_array() && !std::all_of(v.begin(), v.end(), plain)))
                evidence->at(k).fail("expected a string, a number, true/false or a list of them");
            // Documents from before findings had their own "test" named it in the evidence.
            if (k == "test" && f.test.empty() && v.is_string()) {
                f.test = v.get<std::string>();
                continue;
            }
            f.evidence.emplace_back(k, v);
        }
    }
    return f;
}

nlohmann::json findings_document(const std::vector<Finding>& findings) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : findings) list.push_back(to_json(f));
    return {
        {"schema", "np-findings/1"}, {"generator", generator("np-explain")}, {"findings", list}};
}

std::string render_findings(const std::vector<Finding>& findings) {
    std::string out;
    for (const auto& f : findings) {
        out += fmt::format("[{}] {} ({})\n", to_string(f.severity), f.title, f.code);
        if (!f.detail.empty()) out += fmt::format("    {}\n", f.detail);
        if (!f.test.empty()) out += fmt::format("      test = {}\n", f.test);
        for (const auto& [k, v] : f.evidence)
            out += fmt::format("      {} = {}\n", k, evidence_text(v));
        if (!f.next_step.empty()) out += fmt::format("    next step: {}\n", f.next_step);
    }
    return out;
}

}  // namespace np
