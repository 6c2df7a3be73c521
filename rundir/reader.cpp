#include "rundir/reader.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "analysis/readers/inputs.hpp"
#include "common/errors.hpp"
#include "common/input_file.hpp"
#include "common/json_field.hpp"
#include "common/run_dir.hpp"

namespace np {

namespace fs = std::filesystem;

Contract read_contract_file(const fs::path& path) {
    return contract_from_json(read_json_file(path, kMaxContractBytes), path.string());
}

Trace read_trace_file(const fs::path& path) {
    const nlohmann::json doc = read_json_file(path, kMaxTraceBytes);
    try {
        return parse_trace(doc);
    } catch (const InputError& e) {
        throw InputError(fmt::format("{} ({})", path.string(), e.field()), e.what());
    }
}

namespace {
// The tutorial lists its modes in this order; others follow by name.
int mode_rank(const std::string& mode) {
    static const char* order[] = {"ansible", "manual", "jupyter"};
    for (int i = 0; i < 3; ++i)
        if (mode == order[i]) return i;
    return 3;
}

bool is_contract_name(const std::string& name) {
    return name.starts_with(run_dir::kContractPrefix) && name.ends_with(run_dir::kContractSuffix);
}

// A directory that holds at least one np_contract_<mode>.json (false when it is no directory).
bool holds_contract(const fs::path& dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (is_contract_name(it->path().filename().string())) return true;
    return false;
}

}  // namespace

std::vector<Contract> read_run_dir_contracts(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        throw InputError(dir.string(),
                         "no such run directory (set NETWORK_PERFORMANCE_RUN_DIR or "
                         "name the directory)");
    }
    std::vector<Contract> contracts;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (!is_contract_name(entry.path().filename().string())) continue;
        contracts.push_back(read_contract_file(entry.path()));
    }
    if (contracts.empty()) {
        throw InputError(dir.string(), "holds no np_contract_<mode>.json result contracts");
    }
    std::sort(contracts.begin(), contracts.end(), [](const Contract& a, const Contract& b) {
        return std::pair(mode_rank(a.mode), a.mode) < std::pair(mode_rank(b.mode), b.mode);
    });
    return contracts;
}

std::optional<std::vector<PairOutcome>> read_pairs_dir(const fs::path& dir) {
    const fs::path plan_file = dir / run_dir::kPairs;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(plan_file, ec))) return {};
    const PairPlan plan =
        pair_plan_from_json(read_json_file(plan_file, kMaxContractBytes), plan_file.string());
    std::vector<PairOutcome> outcomes;
    for (const Pair& p : plan.pairs) {
        PairOutcome o{p, {}, {}, {}};
        const fs::path pair_dir = dir / p.name;
        const fs::path failed = pair_dir / run_dir::kFailed;
        if (fs::exists(fs::symlink_status(failed, ec))) {
            const nlohmann::json doc = read_json_file(failed, kMaxContractBytes);
            const JsonField f = JsonField::document(doc, failed.string());
            o.failure = fmt::format("{}: {}", f.at("step").str(), f.at("message").str());
        } else if (!holds_contract(pair_dir)) {
            o.failure = fs::is_directory(pair_dir, ec)
                            ? "no contract and no np_failed.json: the pair's run stopped (a "
                              "node unreachable mid-run, or the fan-out interrupted)"
                            : "nothing gathered (the fan-out did not reach this pair)";
        } else {
            std::vector<Contract> contracts = read_run_dir_contracts(pair_dir);
            if (contracts.size() > 1) {
                throw InputError(pair_dir.string(),
                                 "holds more than one np_contract_<mode>.json; a pair's run dir "
                                 "holds one");
            }
            o.contract = std::move(contracts.front());
            if (const auto it = o.contract->document.find("explain");
                it != o.contract->document.end() && !it->is_null()) {
                o.explanation = parse_explanation(
                    *it, (pair_dir / run_dir::contract(o.contract->mode)).string() + ": explain");
            }
        }
        outcomes.push_back(std::move(o));
    }
    return outcomes;
}

fs::path default_run_dir() {
    if (const char* dir = std::getenv("NETWORK_PERFORMANCE_RUN_DIR"); dir && *dir) return dir;
    std::string user;
    if (const char* u = std::getenv("USER"); u && *u) {
        user = u;
    } else if (const passwd* pw = getpwuid(getuid())) {
        user = pw->pw_name;
    }
    return fs::path("/tmp") / ("network-performance-" + user);
}

namespace {

// What `warning` says of a file left out, as the CLI prints it after "warning: ".
std::string left_out_note(const InputError& e, const std::string& what) {
    return fmt::format("{}: {} ({})", e.field(), e.what(), what);
}

// The trace files of a mode: those its contract references, else (a contract written before
// traces were referenced) those the run dir's naming gives.
std::vector<fs::path> mode_trace_files(const fs::path& dir, const Contract& c) {
    std::vector<fs::path> traces;
    for (const auto& ref : contract_trace_files(c)) traces.push_back(dir / ref);
    if (!traces.empty()) return traces;
    const std::string prefix = run_dir::trace_prefix(c.mode);
    for (const auto& entry : fs::directory_iterator(dir)) {
        const auto name = entry.path().filename().string();
        if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".json")
            traces.push_back(entry.path());
    }
    std::sort(traces.begin(), traces.end());
    return traces;
}

// What the run dir holds for one mode. A tool output or trace that does not parse is left out
// with a note.
RunDirMode read_mode(const fs::path& dir, Contract c, std::vector<std::string>& left_out) {
    RunDirMode m;
    const std::string source = run_dir::contract(c.mode);
    if (const auto it = c.document.find("explain"); it != c.document.end() && !it->is_null())
        m.explanation = parse_explanation(*it, source + ": explain");

    for (const std::string_view which : {run_dir::kPing, run_dir::kTcp, run_dir::kUdp}) {
        const fs::path path = dir / run_dir::output(c.mode, which);
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) continue;
        try {
            InputFile in(path, which == run_dir::kPing ? kMaxPingBytes : kMaxToolOutputBytes);
            m.measurements.append(parse_measurements(in, path.filename().string()));
        } catch (const InputError& e) {
            // The reader names what it read ("format", "json", a key); the note names the file.
            const std::string file = path.filename().string();
            left_out.push_back(e.field() == file
                                   ? left_out_note(e, "left out of the report")
                                   : fmt::format("{} ({}): {} (left out of the report)", file,
                                                 e.field(), e.what()));
        }
    }
    for (const auto& path : mode_trace_files(dir, c)) {
        try {
            m.traces.push_back(read_trace_file(path));
        } catch (const InputError& e) {
            left_out.push_back(
                left_out_note(e, fmt::format("trace {} left out of the report", path.string())));
        }
    }
    m.contract = std::move(c);
    return m;
}

}  // namespace

RunDirContents read_run_dir(const fs::path& dir) {
    RunDirContents in;
    if (auto pairs = read_pairs_dir(dir)) {
        // A fan-out's gathered dir: each measured pair's run dir is a mode named by the pair.
        for (const auto& o : *pairs) {
            if (!o.contract) continue;
            RunDirMode m = read_mode(dir / o.pair.name, *o.contract, in.left_out);
            m.contract.mode = o.pair.name;
            in.modes.push_back(std::move(m));
        }
        if (in.modes.empty()) {
            throw InputError(dir.string(),
                             fmt::format("no pair of {} was measured", run_dir::kPairs));
        }
        in.pairs = std::move(*pairs);
        return in;
    }
    for (auto& c : read_run_dir_contracts(dir))
        in.modes.push_back(read_mode(dir, std::move(c), in.left_out));
    return in;
}

}  // namespace np
