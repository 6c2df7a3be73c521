#include "analysis/explanation/pairs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

#include "analysis/explanation/format.hpp"
#include "analysis/readers/names.hpp"
#include "analysis/readers/params.hpp"
#include "analysis/readers/yaml_scalar.hpp"
#include "common/errors.hpp"
#include "common/json_field.hpp"

namespace np {
namespace {

// What two pairs must not share to run at the same time.
bool conflict(const Pair& a, const Pair& b) {
    const std::set<std::string> nodes{a.server, a.client};
    bool shared_address = false;
    for (const auto* x : {&a.server_ip, &a.client_ip})
        for (const auto* y : {&b.server_ip, &b.client_ip})
            shared_address = shared_address || same_address(*x, *y);
    return nodes.count(b.server) || nodes.count(b.client) || shared_address ||
           (!a.link.empty() && a.link == b.link);
}

void schedule(PairPlan& plan) {
    auto& pairs = plan.pairs;
    for (size_t i = 0; i < pairs.size(); ++i) {
        const auto earlier = pairs.begin() + static_cast<std::ptrdiff_t>(i);
        int wave = 0;
        while (std::any_of(pairs.begin(), earlier,
                           [&](const Pair& q) { return q.wave == wave && conflict(pairs[i], q); }))
            ++wave;
        pairs[i].wave = wave;
        plan.waves = std::max(plan.waves, wave + 1);
    }
}

void check_plan(const PairPlan& plan, const std::string& source) {
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < plan.pairs.size(); ++i) {
        const Pair& p = plan.pairs[i];
        const std::string at = fmt::format("pairs[{}]", i);
        check_node_name(p.server, at + ".server");
        check_node_name(p.client, at + ".client");
        if (p.server == p.client)
            throw InputError(at + ".client", fmt::format("{} is paired with itself", p.client));
        if (const auto [it, fresh] = seen.emplace(p.name, i); !fresh) {
            throw InputError(at, fmt::format("{} -> {} is listed twice (also pairs[{}])", p.server,
                                             p.client, it->second));
        }
        if (p.wave < 0 || p.wave >= plan.waves)
            throw InputError(at + ".wave", fmt::format("{} is not a wave of {}", p.wave, source));
    }
}

}  // namespace

PairPlan parse_pair_plan(std::string_view yaml_text, const std::string& source,
                         const Params& params) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml_text));
    } catch (const YAML::ParserException& e) {
        throw InputError(source, e.msg, e.mark.line + 1);
    }
    if (!root.IsMap() || !root["pairs"]) {
        throw InputError(source, "must be a mapping with a 'pairs' list (see docs/tutorial.md)");
    }
    const YAML::Node list = root["pairs"];
    if (!list.IsSequence() || list.size() == 0)
        throw InputError("pairs", "must be a list of at least one pair", yaml_line(list));

    PairPlan plan;
    for (size_t i = 0; i < list.size(); ++i) {
        const YAML::Node entry = list[i];
        const std::string at = fmt::format("pairs[{}]", i);
        if (!entry.IsMap())
            throw InputError(at, "must be a mapping with server and client", yaml_line(entry));
        Pair p;
        p.server_ip = params.server_ip;
        p.client_ip = params.client_ip;
        const std::map<std::string, std::string*> keys = {{"server", &p.server},
                                                          {"client", &p.client},
                                                          {"server_ip", &p.server_ip},
                                                          {"client_ip", &p.client_ip},
                                                          {"link", &p.link}};
        for (const auto& kv : entry) {
            const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
            const auto it = keys.find(key);
            if (it == keys.end()) {
                throw InputError(at,
                                 fmt::format("unknown key '{}' (server, client, server_ip, "
                                             "client_ip, link)",
                                             terminal_safe(key)),
                                 yaml_line(kv.first));
            }
            *it->second = yaml_scalar(at + "." + key, kv.second);
        }
        for (const char* required : {"server", "client"}) {
            if (!entry[required])
                throw InputError(at, fmt::format("has no {}", required), yaml_line(entry));
        }
        const int line = yaml_line(entry);
        check_node_name(p.server, at + ".server");
        check_node_name(p.client, at + ".client");
        check_address_pair(p.server_ip, p.client_ip, params.prefix_len, at + ".client_ip", line);
        if (p.link.size() > 64 ||
            p.link.find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
            throw InputError(at + ".link", "must be one line of at most 64 characters", line);
        p.name = p.server + "_" + p.client;
        plan.pairs.push_back(std::move(p));
    }
    schedule(plan);
    check_plan(plan, source);
    return plan;
}

nlohmann::json to_json(const PairPlan& plan) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& p : plan.pairs) {
        pairs.push_back({{"name", p.name},
                         {"server", p.server},
                         {"client", p.client},
                         {"server_ip", p.server_ip},
                         {"client_ip", p.client_ip},
                         {"link", p.link.empty() ? nlohmann::json() : nlohmann::json(p.link)},
                         {"wave", p.wave}});
    }
    return {{"schema", "np-pairs/1"}, {"waves", plan.waves}, {"pairs", pairs}};
}

PairPlan pair_plan_from_json(const nlohmann::json& doc, const std::string& source) {
    const JsonField top = JsonField::document(doc, source);
    if (top.at("schema").str() != "np-pairs/1") top.at("schema").fail("is not np-pairs/1");
    const auto wave = [](const JsonField& f) {
        const int64_t w = f.i64();
        if (w < 0 || w > 10000) f.fail("must be a whole number 0 … 10000");
        return static_cast<int>(w);
    };
    PairPlan plan;
    plan.waves = wave(top.at("waves"));
    const JsonField list = top.at("pairs");
    for (size_t i = 0; i < list.array_size(); ++i) {
        const JsonField f = list.at(i);
        Pair p;
        p.name = f.at("name").str();
        p.server = f.at("server").str();
        p.client = f.at("client").str();
        p.server_ip = f.at("server_ip").str();
        p.client_ip = f.at("client_ip").str();
        p.link = f.optional_str("link").value_or("");
        p.wave = wave(f.at("wave"));
        if (p.name != p.server + "_" + p.client) f.at("name").fail("is not <server>_<client>");
        plan.pairs.push_back(std::move(p));
    }
    check_plan(plan, source);
    return plan;
}

std::string render_pair_plan(const PairPlan& plan) {
    Table t({"pair (server -> client)", "wave", "addresses", "link", "runs beside"});
    for (int wave = 0; wave < plan.waves; ++wave) {
        for (const auto& p : plan.pairs) {
            if (p.wave != wave) continue;
            std::vector<std::string> beside;
            for (const auto& q : plan.pairs)
                if (q.wave == wave && q.name != p.name) beside.push_back(q.name);
            t.add_row({fmt::format("{} -> {}", p.server, p.client), std::to_string(wave + 1),
                       fmt::format("{} -> {}", p.server_ip, p.client_ip),
                       p.link.empty() ? "-" : terminal_safe(p.link),
                       beside.empty() ? "-" : fmt::format("{}", fmt::join(beside, ", "))});
        }
    }
    return fmt::format("=== {} pair{} in {} wave{} (a wave's pairs run at the same time) ===\n{}",
                       plan.pairs.size(), plan.pairs.size() == 1 ? "" : "s", plan.waves,
                       plan.waves == 1 ? "" : "s", t.render());
}

namespace {

// The verdict of the pair's test of that protocol ("TCP" or "UDP"), if the explanation has one.
const Verdict* verdict_for(const PairOutcome& o, std::string_view protocol) {
    if (!o.explanation) return nullptr;
    for (const auto& v : o.explanation->verdicts) {
        if (v.test.find(std::string(" ") + std::string(protocol)) != std::string::npos) return &v;
    }
    return nullptr;
}

std::string rate_cell(const std::optional<double>& mbps, const Verdict* v) {
    if (!mbps) return "-";
    std::string s = fmt::format("{:.1f}", *mbps);
    if (v && v->ceiling_bps && *v->ceiling_bps > 0)
        s += fmt::format(" / {:.1f} ({:.0f} %)", *v->ceiling_bps / 1e6,
                         *mbps * 1e8 / *v->ceiling_bps);
    return s;
}

// The pair's findings at warn or error, as codes.
std::vector<std::string> problem_codes(const PairOutcome& o, Severity at_least) {
    std::vector<std::string> codes;
    if (!o.explanation) return codes;
    for (const auto& f : o.explanation->findings)
        if (f.severity >= at_least) codes.push_back(f.code);
    return codes;
}

}  // namespace

PairsResult check_pairs(const std::vector<PairOutcome>& outcomes) {
    PairsResult r;
    for (const auto& o : outcomes) {
        if (!o.contract) {
            r.problems.push_back(fmt::format("{} -> {}: not measured: {}", o.pair.server,
                                             o.pair.client,
                                             o.failure.empty() ? "no contract" : o.failure));
            continue;
        }
        const auto errors = problem_codes(o, Severity::error);
        if (!errors.empty()) {
            r.problems.push_back(
                fmt::format("{} -> {}: {}", o.pair.server, o.pair.client, fmt::join(errors, ", ")));
        }
    }
    r.pass = r.problems.empty();
    return r;
}

std::string render_pairs(const std::vector<PairOutcome>& outcomes, const PairsResult& result) {
    Table t({"pair (server -> client)", "wave", "ping_rtt_ms", "tcp Mbit/s / ceiling",
             "tcp verdict", "udp Mbit/s / ceiling", "udp verdict", "udp_loss_pct", "warnings"});
    size_t measured = 0;
    for (const auto& o : outcomes) {
        const std::string pair = fmt::format("{} -> {}", o.pair.server, o.pair.client);
        const std::string wave = std::to_string(o.pair.wave + 1);
        if (!o.contract) {
            t.add_row({pair, wave, "-", "-", "not measured", "-", "-", "-", "-"});
            continue;
        }
        ++measured;
        const Contract& c = *o.contract;
        const Verdict* tcp = verdict_for(o, "TCP");
        const Verdict* udp = verdict_for(o, "UDP");
        const auto warnings = problem_codes(o, Severity::warn);
        t.add_row({pair, wave, c.ping_rtt_ms ? fmt::format("{:.3f}", *c.ping_rtt_ms) : "-",
                   rate_cell(c.tcp_mbps, tcp), tcp ? tcp->verdict : "-", rate_cell(c.udp_mbps, udp),
                   udp ? udp->verdict : "-",
                   c.udp_loss_pct ? fmt::format("{:.2f}", *c.udp_loss_pct) : "-",
                   warnings.empty() ? "-" : fmt::format("{}", fmt::join(warnings, ", "))});
    }
    std::string out = "=== network-performance pairs ===\n" + t.render();
    if (result.pass) {
        out += fmt::format("PAIRS: PASS ({} of {} pairs measured, none with an error finding)\n",
                           measured, outcomes.size());
    } else {
        out += fmt::format("PAIRS: FAIL ({} of {} pairs measured; {} with a problem)\n", measured,
                           outcomes.size(), result.problems.size());
    }
    for (const auto& p : result.problems) out += "  " + terminal_safe(p) + "\n";
    return out;
}

}  // namespace np
