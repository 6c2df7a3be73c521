#pragma once
// The tutorial's result contract, np_contract_<mode>.json: the parity table's columns plus
// whatever else the file holds, which np-explain keeps untouched so the tutorial's own parser
// keeps reading it. np-explain's additions live under their own keys ("explain", "traces").
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/measurement.hpp"

namespace np {

struct Contract {
    std::string mode;
    std::optional<double> ping_rtt_ms;
    std::optional<double> tcp_mbps;
    std::optional<double> udp_mbps;
    std::optional<double> udp_loss_pct;
    std::string node1;
    std::string node2;
    // np-explain's own key link_mbps, in bit/s: the link rate the contract was explained
    // against (null or absent: none known). Read here only, for attach and report alike.
    std::optional<double> link_bps;
    nlohmann::json document;  // the whole file as read, including fields np-explain does not know
};

// Parses a contract; `source` names it in errors (InputError field "<source>: <key>").
// A tutorial field that is null counts as not measured; one of the wrong type is an error.
// The text is read as parse_json_document reads it (common/json_document.hpp): nested,
// long or out-of-range input is an InputError naming the source and the field.
Contract parse_contract(std::string_view text, const std::string& source);
// The same from a document already parsed (bounded) by the caller.
Contract contract_from_json(nlohmann::json document, const std::string& source);

// The tutorial's figures from what the tools measured: ping_rtt_ms is ping's average, tcp_mbps
// and udp_mbps what arrived at the receiver (what the sender sent when that is all there is),
// udp_loss_pct recomputed from the lost/total counts. A figure not measured stays null.
struct TutorialFigures {
    std::optional<double> ping_rtt_ms;
    std::optional<double> tcp_mbps;
    std::optional<double> udp_mbps;
    std::optional<double> udp_loss_pct;
};
TutorialFigures tutorial_figures(const Measurements& m);

// The keys np-explain owns in a contract; everything else belongs to the tutorial and is
// never changed.
inline constexpr const char* kContractExplainKeys[] = {"explain", "traces", "link_mbps", "model"};

// Adds (or replaces: attaching twice never duplicates) np-explain's keys in a contract
// document: "explain" (findings and verdicts), "traces" (trace files, relative to the
// contract's directory where possible), "link_mbps" and "model" (the ceilings for that link,
// over the IP version the tests ran on, IPv4 when no test names its address; both null when the
// link rate is unknown).
void attach_explanation(nlohmann::json& contract, const Explanation& e,
                        const std::vector<std::string>& trace_files, std::optional<double> link_bps,
                        const Measurements& m);

// A new contract for a run np-explain made: the tutorial's fields, then attach_explanation's.
nlohmann::json build_contract(const std::string& mode, const std::string& node1,
                              const std::string& node2, const Measurements& m, const Explanation& e,
                              const std::vector<std::string>& trace_files,
                              std::optional<double> link_bps);

// What a contract says about the tests, as measurements, for when its tool outputs are not at
// hand: a TCP and a UDP test with the received rate, and the UDP loss percentage (which a
// contract holds without counts). Tests are labelled "<mode> TCP" / "<mode> UDP". Its RTT is
// left out: without ping's counts there is nothing to reconcile it with.
Measurements measurements_from_contract(const Contract& c);

// The trace files a contract already references under "traces" (empty when none): paths
// relative to the contract's directory and inside it. InputError naming the contract's
// "traces" when an entry is not a string, is absolute or climbs out with "..".
std::vector<std::string> contract_trace_files(const Contract& c);

}  // namespace np
