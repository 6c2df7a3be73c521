#pragma once
// The tutorial's result contract, np_contract_<mode>.json: the parity table's columns plus
// whatever else the file holds, which np-explain keeps untouched so the tutorial's own parser
// keeps reading it. np-explain's additions live under their own keys ("explain", "traces").
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

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

}  // namespace np
