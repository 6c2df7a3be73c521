#pragma once
// Reading a run dir (its layout: common/run_dir.hpp): the result contracts, each mode's tool
// outputs and traces, a fan-out's pairs. `report`, `parity` and `attach` read through here;
// the writer is rundir/writer.hpp.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/explain.hpp"
#include "analysis/explanation/pairs.hpp"
#include "analysis/readers/measurement.hpp"
#include "common/trace.hpp"

namespace np {

// The tutorial's run dir: $NETWORK_PERFORMANCE_RUN_DIR, else /tmp/network-performance-$USER/.
std::filesystem::path default_run_dir();

// A contract (InputError naming the path and the key) and a trace (InputError
// "<path> (<field>)" when it does not parse), each read within its size limit.
Contract read_contract_file(const std::filesystem::path& path);
Trace read_trace_file(const std::filesystem::path& path);

// Every np_contract_<mode>.json in a run dir, in the tutorial's order of modes (ansible,
// manual, jupyter, then the others by name). InputError when the directory does not exist or
// holds no contract, or a contract does not parse.
std::vector<Contract> read_run_dir_contracts(const std::filesystem::path& dir);

// A directory the fan-out over pairs gathered (np_pairs.json beside a run dir per pair): every
// pair of np_pairs.json in its order, with its contract and explanation when it was measured,
// else what its np_failed.json says (or that nothing was gathered). Empty when `dir` holds no
// np_pairs.json; InputError when it or a pair's files do not parse.
std::optional<std::vector<PairOutcome>> read_pairs_dir(const std::filesystem::path& dir);

// One mode of a run dir: its contract and what the run dir holds beside it.
struct RunDirMode {
    Contract contract;
    std::optional<Explanation> explanation;  // the contract's "explain"; empty when none
    Measurements measurements;  // <mode>_ping.txt, _tcp.json, _udp.json, when they are there
    std::vector<Trace> traces;  // the probes' traces of the data NICs
};

// A whole run dir, or a fan-out's gathered dir.
struct RunDirContents {
    std::vector<RunDirMode> modes;  // in the tutorial's order; at least one
    // A fan-out's gathered dir: every pair, measured or not. Each measured pair is also one of
    // `modes`, named by the pair.
    std::vector<PairOutcome> pairs;
    // Files left out because they did not parse ("<file> (<field>): <why>"): a run that stopped
    // early leaves such files behind, and its contract already says so. The contracts must
    // parse: they are what the run dir is read for.
    std::vector<std::string> left_out;
};
RunDirContents read_run_dir(const std::filesystem::path& dir);

}  // namespace np
