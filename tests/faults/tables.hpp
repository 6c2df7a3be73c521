#pragma once
// The two tables of tests/faults: the fault suite's truth table (scenario × expected × got) and
// the fault matrix (phase × fault → exit status). Each scenario and each cell is a test of its
// own under ctest — one process each, on whichever testbed slot is free — so no process sees a
// whole table: each saves its rows beside the run's testbed slots, in NP_TESTBED_STATES.tables
// (one file per process; testbed.up empties it when a run on the testbeds starts:
// tests/testbed/slots.sh), and np_fault_tables (print_tables.cpp) prints both tables from
// them; scripts/test.sh does at the end. A test binary run directly runs all its scenarios or
// cells on a testbed of its own and prints its table from what it holds.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/explanation/format.hpp"
#include "common/trace.hpp"

namespace np::testing {

// ------------------------------------------------------------------ rows shared by processes

// Adds this process's rows of `table` to the run's shared dir; false outside ctest's slots.
inline bool save_table_rows(const std::string& table, const std::vector<nlohmann::json>& rows) {
    const char* slots = std::getenv("NP_TESTBED_STATES");
    if (!slots) return false;
    const std::string dir = std::string(slots) + ".tables";
    std::filesystem::create_directories(dir);
    std::ofstream out(dir + "/" + table + "." + std::to_string(getpid()) + ".jsonl", std::ios::app);
    for (const auto& r : rows) out << r.dump() << "\n";
    return true;
}

// Every row any process saved for `table` in `dir`.
inline std::vector<nlohmann::json> load_table_rows(const std::string& dir,
                                                   const std::string& table) {
    std::vector<nlohmann::json> rows;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (!e.path().filename().string().starts_with(table + ".")) continue;
        std::ifstream in(e.path());
        for (std::string line; std::getline(in, line);) {
            auto j = nlohmann::json::parse(line, nullptr, false);
            if (j.is_object()) rows.push_back(std::move(j));
        }
    }
    return rows;
}

// ------------------------------------------------------------------ the fault suite

struct ScenarioRow {
    int order = 0;  // the scenario's place in test_faults.cpp, for the table
    std::string scenario, fault, expected, got;
    bool pass = false;
    std::string tier = "full";  // the probe tier it ran at
};

inline nlohmann::json to_json(const ScenarioRow& r) {
    return {{"order", r.order},       {"scenario", r.scenario}, {"fault", r.fault},
            {"expected", r.expected}, {"got", r.got},           {"pass", r.pass},
            {"tier", r.tier}};
}

inline ScenarioRow scenario_row(const nlohmann::json& j) {
    return {j.value("order", 0),     j.value("scenario", ""), j.value("fault", ""),
            j.value("expected", ""), j.value("got", ""),      j.value("pass", false),
            j.value("tier", "full")};
}

// The truth table, full tier first; a tier column once any row ran at a lower tier.
inline void print_truth_table(std::vector<ScenarioRow> rows) {
    const auto rank = [](const ScenarioRow& r) {
        const auto t = np::parse_tier(r.tier);
        return t ? static_cast<int>(*t) : 0;
    };
    std::sort(rows.begin(), rows.end(), [&](const ScenarioRow& a, const ScenarioRow& b) {
        return std::pair(rank(a), a.order) < std::pair(rank(b), b.order);
    });
    const bool tiers = std::any_of(rows.begin(), rows.end(),
                                   [](const ScenarioRow& r) { return r.tier != "full"; });
    std::vector<std::string> head = {"scenario", "fault injected", "expected",
                                     "got (warn/error, then info)", "result"};
    if (tiers) head.insert(head.begin() + 1, "probe tier");
    np::Table t(head);
    for (const auto& r : rows) {
        std::vector<std::string> row = {r.scenario, r.fault, r.expected, r.got,
                                        r.pass ? "pass" : "FAIL"};
        if (tiers) row.insert(row.begin() + 1, r.tier);
        t.add_row(row);
    }
    std::cout << "\nGround-truth fault suite (tests/faults/test_faults.cpp):\n"
              << t.render_markdown() << "\n";
}

// ------------------------------------------------------------------ the fault matrix

inline const std::vector<std::string> kMatrixPhases = {
    "preflight", "configure", "upload", "probe start", "ping", "tcp", "udp", "collect", "teardown"};
inline const std::vector<std::string> kMatrixFaults = {
    "SIGINT",         "SIGKILL+teardown", "SSH to B cut", "server killed", "server stopped",
    "probe killed",   "link down",        "disk full",    "second run",    "client floods",
    "server wrapper", "second probe",     "undo fails"};

struct Outcome {
    std::string cell;    // "130 ok", "n/a", "FAIL"
    std::string detail;  // the message, the reason for n/a, or what failed
    double seconds = 0;
};
using MatrixTable = std::map<std::pair<std::string, std::string>, Outcome>;  // (phase, fault)

inline nlohmann::json to_json(const std::pair<std::string, std::string>& cell, const Outcome& o) {
    return {{"phase", cell.first},
            {"fault", cell.second},
            {"cell", o.cell},
            {"detail", o.detail},
            {"seconds", o.seconds}};
}

inline void add_cell(MatrixTable& t, const nlohmann::json& j) {
    t[{j.value("phase", ""), j.value("fault", "")}] = {j.value("cell", ""), j.value("detail", ""),
                                                       j.value("seconds", 0.0)};
}

inline void print_matrix(const MatrixTable& t) {
    std::ostringstream out;
    out << "\nFault matrix: phase x fault -> exit status (ok: every check of the cell "
           "held)\n\n| phase |";
    for (const auto& name : kMatrixFaults) out << " " << name << " |";
    out << "\n|---|";
    for (size_t i = 0; i < kMatrixFaults.size(); ++i) out << "---|";
    out << "\n";
    double total = 0;
    for (const auto& phase : kMatrixPhases) {
        out << "| " << phase << " |";
        for (const auto& name : kMatrixFaults) {
            const auto it = t.find({phase, name});
            out << " " << (it == t.end() ? "not run" : it->second.cell) << " |";
            if (it != t.end()) total += it->second.seconds;
        }
        out << "\n";
    }
    out << "\nPer cell: what it said (or why n/a), and its wall time:\n";
    for (const auto& phase : kMatrixPhases)
        for (const auto& name : kMatrixFaults) {
            const auto it = t.find({phase, name});
            if (it == t.end()) continue;
            char secs[32];
            std::snprintf(secs, sizeof secs, "%.1f s", it->second.seconds);
            out << "  " << phase << " x " << name << ": " << it->second.cell << " — "
                << it->second.detail
                << (it->second.seconds > 0 ? " (" + std::string(secs) + ")" : "") << "\n";
        }
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.0f", total);
    out << "\ncells' wall time in total: " << secs << " s\n";
    std::cout << out.str();
}

}  // namespace np::testing
