#pragma once
// The explanation engine: holds what the tools measured against the header-overhead model for
// the link and the probes' traces of both data NICs, and concludes why the numbers are what
// they are, as findings (finding.hpp, codes declared in codes.hpp) plus a one-line verdict per
// test.
//
// Each throughput test is judged on all its evidence at once (TestEvidence): the tool's output,
// the model, and one ledger (ledger.hpp) built from the tool's counts and both traces, in
// which every drop of the measured flow sits in exactly one stage. Rules read that evidence
// and add findings; codes.hpp declares which findings make which redundant.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "analysis/explanation/evidence.hpp"

namespace np {

const Rules& default_rules();

Explanation explain(const ExplainInput& in, const Rules& rules = default_rules());

// {"schema": "np-findings/1", "findings": [...], "verdicts": [...], "ledgers": [...],
// "link_mbps": the link rate or null, "path_mbps": null or the slower path's rate}; verdict keys:
// test, source, command (null when not shown), measured, measured_mbps, ceiling_mbps,
// pct_of_ceiling, verdict, codes.
nlohmann::json to_json(const Explanation& e);
// The reverse of to_json: an explanation read back from a contract's "explain" or a
// <mode>_findings.json. Throws InputError whose field is `where` plus the key that is wrong.
Explanation parse_explanation(const nlohmann::json& doc, const std::string& where);

// What the tests were held against, the verdict table (np::Table), the ledgers in a line each,
// then render_findings.
std::string render_explanation(const Explanation& e);

}  // namespace np
