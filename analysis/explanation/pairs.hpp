#pragma once
// The tutorial's fan-out over pairs (docs/tutorial.md): when a row of nodes outgrows one pair,
// an inventory of pairs (network-performance_pairs.yml) is measured pair by pair — pairs that
// share a node, an address or a link one after another, disjoint pairs at the same time — and
// every pair's contract is gathered into one directory. Here: the inventory read and checked,
// the schedule (waves of pairs that may run together), and the pairs × tests table over what
// was gathered.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/explain.hpp"
#include "analysis/readers/params.hpp"

namespace np {

struct Pair {
    std::string name;  // "<server>_<client>": the pair's directory in the gathered dir
    std::string server;
    std::string client;
    std::string server_ip;  // on the data iface; the params' np_server_ip when not given
    std::string client_ip;
    std::string link;  // optional label: pairs naming the same link never run together
    int wave = 0;      // pairs of one wave run at the same time; waves one after another
};

struct PairPlan {
    std::vector<Pair> pairs;  // in the inventory's order
    int waves = 0;
};

// Reads an inventory of pairs:
//   pairs:
//     - {server: node1-1, client: node1-2, server_ip: 192.168.200.1, client_ip: 192.168.200.2}
//     - {server: node1-3, client: node1-4, link: sw1-port7}
// server_ip/client_ip default to the params' addresses, and are checked as the params' are
// (np_prefix_len). Node names are checked as everywhere (names.hpp); a pair listed twice, a
// node paired with itself or an unknown key is an InputError naming "pairs[i].key" and the
// line. Then schedules it: each pair, in order, joins the first wave holding no pair that
// shares a node, an address or a link with it.
PairPlan parse_pair_plan(std::string_view yaml_text, const std::string& source,
                         const Params& params);

// {"schema": "np-pairs/1", "waves": N, "pairs": [{name, server, client, server_ip, client_ip,
// link (null when none), wave}]}: what the playbook schedules by and what the gathered dir
// keeps as np_pairs.json.
nlohmann::json to_json(const PairPlan& plan);
// The reverse, for np_pairs.json; InputError naming `source` and the key otherwise.
PairPlan pair_plan_from_json(const nlohmann::json& doc, const std::string& source);

// The schedule as a table: wave, pair, addresses, link, and which pairs it runs beside.
std::string render_pair_plan(const PairPlan& plan);

// What the gathered dir holds for one pair.
struct PairOutcome {
    Pair pair;
    std::optional<Contract> contract;        // its np_contract_<mode>.json, when measured
    std::optional<Explanation> explanation;  // the contract's "explain"
    std::string failure;  // why it has no contract (the failed step and its message)
};

struct PairsResult {
    bool pass = true;                   // every pair measured and none with an error finding
    std::vector<std::string> problems;  // one line per pair that was not
};

PairsResult check_pairs(const std::vector<PairOutcome>& outcomes);

// The pairs × tests table — per pair its wave, ping RTT, TCP and UDP against their ceilings
// with the verdicts, UDP loss — then "PAIRS: PASS (…)" or "PAIRS: FAIL (…)" and the problems.
std::string render_pairs(const std::vector<PairOutcome>& outcomes, const PairsResult& result);

}  // namespace np
