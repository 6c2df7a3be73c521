#pragma once
// The tutorial's result contract, np_contract_<mode>.json: the parity table's columns plus
// whatever else the file holds, which np-explain keeps untouched so the tutorial's own parser
// keeps reading it. np-explain's additions live under their own keys ("explain", "traces").
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/explain.hpp"
#include "analysis/measurement.hpp"

namespace np {

struct Contract {
    std::string mode;
    std::optional<double> ping_rtt_ms;
    std::optional<double> tcp_mbps;
    std::optional<double> udp_mbps;
    std::optional<double> udp_loss_pct;
    std::string node1;
    std::string node2;
    nlohmann::json document;  // the whole file as read, including fields np-explain does not know
};

// Parses a contract; `source` names it in errors (InputError field "<source>: <key>").
// A tutorial field that is null counts as not measured; one of the wrong type is an error.
Contract parse_contract(std::string_view text, const std::string& source);

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

// A new contract for a run np-explain made: the tutorial's fields, then np-explain's own under
// "explain" (findings and verdicts), "traces" (file names in the run dir) and "link_mbps".
nlohmann::json build_contract(const std::string& mode, const std::string& node1,
                              const std::string& node2, const Measurements& m, const Explanation& e,
                              const std::vector<std::string>& trace_files,
                              std::optional<double> link_bps);

}  // namespace np
