#include "analysis/explanation/repeats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"

namespace np {
namespace {

const Verdict* verdict_of(const Explanation& e, const std::string& test) {
    for (const auto& v : e.verdicts)
        if (v.test == test) return &v;
    return nullptr;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

constexpr std::string_view kNoResult = "no result";

// Each repetition of one test, in order: its rate where it measured one, its verdict ("no
// result" where its tool failed), a line for the detail, and the same as evidence.
struct Runs {
    std::vector<double> rates;
    std::vector<std::string> verdicts, lines;
    nlohmann::json rates_json = nlohmann::json::array(), verdicts_json = nlohmann::json::array();
};

// The runs of `test`, one per repetition.
Runs runs_of(const std::string& test, const std::vector<Repetition>& reps) {
    Runs out;
    for (const auto& r : reps) {
        const Verdict* v = verdict_of(r.explanation, test);
        const std::string verdict = v && v->measured_bps ? v->verdict : std::string(kNoResult);
        out.verdicts.push_back(verdict);
        out.verdicts_json.push_back(verdict);
        if (v && v->measured_bps) {
            out.rates.push_back(*v->measured_bps);
            out.rates_json.push_back(rounded(*v->measured_bps / 1e6, 2));
            out.lines.push_back(
                fmt::format("{}: {}, {}", r.number, format_rate(*v->measured_bps), verdict));
        } else {
            out.rates_json.push_back(nullptr);
            out.lines.push_back(fmt::format("{}: {}", r.number, verdict));
        }
    }
    return out;
}

// The median of the rates measured and their spread (highest less lowest) as a share of it.
struct Spread {
    double mid = 0, spread = 0;
    std::string figures;  // "median …, from … to … (a spread of … of the median)"; empty: no rate
};

// The spread of the rates, its evidence added to `f`; all zero and no figures without a rate.
Spread spread_of(const std::vector<double>& rates, Finding& f) {
    Spread s;
    if (rates.empty()) return s;
    s.mid = median(rates);
    const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
    s.spread = s.mid > 0 ? (*hi - *lo) / s.mid : 0;
    s.figures =
        fmt::format("median {}, from {} to {} (a spread of {} of the median)", format_rate(s.mid),
                    format_rate(*lo), format_rate(*hi), format_pct(s.spread));
    f.evidence.emplace_back("median_mbps", rounded(s.mid / 1e6, 2));
    f.evidence.emplace_back("min_mbps", rounded(*lo / 1e6, 2));
    f.evidence.emplace_back("max_mbps", rounded(*hi / 1e6, 2));
    f.evidence.emplace_back("spread_pct", rounded(100 * s.spread, 2));
    return s;
}

// A verdict that flipped: the title that says so, and how to find out why.
void say_flipped(const std::string& test, size_t repetitions, Finding& f) {
    f.title = fmt::format("{}: the verdict changed between the {} repetitions", test, repetitions);
    f.detail +=
        " The first repetition's explanation is the one shown in full; the others' "
        "verdicts rest on the same rules over their own counts and phases.";
    f.next_step =
        "Read the repetitions that differ in their outputs and phases in the run dir "
        "(<mode>_tcp-K.json, phase tcp-K of each trace); a verdict that flips is a path or a "
        "host whose state changed during the run: repeat with more repetitions, or longer "
        "tests (-t), before drawing a conclusion from one.";
}

Finding test_finding(const std::string& test, const std::vector<Repetition>& reps) {
    const Runs runs = runs_of(test, reps);
    // A repetition without a result (its tool failed) is not a verdict that changed: only the
    // verdicts the repetitions reached are compared.
    std::vector<std::string> reached;
    for (const auto& v : runs.verdicts)
        if (v != kNoResult) reached.push_back(v);
    const bool flips = std::any_of(reached.begin(), reached.end(),
                                   [&](const std::string& v) { return v != reached.front(); });
    const size_t missing = runs.verdicts.size() - reached.size();
    Finding f = make_finding(flips ? "VERDICT_FLIPS" : "REPEAT_SPREAD", test);
    f.evidence = {{"repetitions", reps.size()},
                  {"runs_mbps", runs.rates_json},
                  {"verdicts", runs.verdicts_json}};
    const Spread s = spread_of(runs.rates, f);
    f.detail = fmt::format("{} repetitions: {}. Each: {}.", reps.size(),
                           s.figures.empty() ? "none measured a rate" : s.figures,
                           fmt::join(runs.lines, "; "));
    if (missing > 0)
        f.detail += fmt::format(
            " {} of the {} gave no result (the tool failed: see that repetition's output); the "
            "others are compared.",
            missing, reps.size());
    if (flips) {
        say_flipped(test, reps.size(), f);
        return f;
    }
    f.title = missing == 0
                  ? fmt::format("{}: {} in all {} repetitions", test, reached.front(), reps.size())
                  : fmt::format("{}: {} in the {} of {} repetitions with a result", test,
                                reached.front(), reached.size(), reps.size());
    if (!runs.rates.empty())
        f.title += fmt::format(" (median {}, spread {})", format_rate(s.mid), format_pct(s.spread));
    return f;
}

}  // namespace

std::vector<Finding> repeat_findings(const std::vector<Repetition>& repetitions) {
    std::vector<Finding> out;
    if (repetitions.size() < 2) return out;
    // Every throughput test some repetition measured (a ping's result is a time), in the order
    // first seen: the first repetition's may have failed.
    std::vector<std::string> tests;
    for (const auto& r : repetitions)
        for (const auto& v : r.explanation.verdicts)
            if (v.measured_bps && std::find(tests.begin(), tests.end(), v.test) == tests.end())
                tests.push_back(v.test);
    for (const auto& t : tests) out.push_back(test_finding(t, repetitions));
    return out;
}

void mark_flipped_verdicts(const std::vector<Finding>& repeats, std::vector<Verdict>& verdicts) {
    for (const auto& f : repeats) {
        if (f.code != "VERDICT_FLIPS") continue;
        for (auto& v : verdicts)
            if (v.test == f.test) {
                v.verdict += ", flips between repetitions";
                v.codes.push_back(f.code);
            }
    }
}

}  // namespace np
