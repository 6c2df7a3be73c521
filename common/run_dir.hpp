#pragma once
// The run dir's layout, in one place for the code that writes it (src/experiment) and every
// reader (report, parity, attach, the contract's own name in findings). A run of mode M on
// nodes A and B leaves (docs/formats.md, docs/hardening.md):
//
//   np_contract_M.json          the result contract (the tutorial's keys + np-explain's)
//   M_ping.txt, M_tcp.json, M_udp.json   each tool's raw output
//   M_trace_NODE.json           each node's trace (np-trace/1)
//   M_findings.json             the explanation (np-findings/1)
//   M_commands.log              every command run on the nodes
//   M_phases.json               the phases finished and the one in progress (np-run-phases/1)
//   M_partial-trace_NODE.json   the phases a probe closed, until its trace is saved
//   report.html                 the report of every mode in the dir
//   np_failed.json              a run that stopped: {"step", "message"} (the tutorial's playbook)
//
// The fan-out over pairs gathers one such run dir per pair, named <server>_<client>, into one
// directory beside np_pairs.json (np-pairs/1: the pairs and their waves).
#include <string>
#include <string_view>

namespace np::run_dir {

inline constexpr std::string_view kContractPrefix = "np_contract_";
inline constexpr std::string_view kContractSuffix = ".json";
inline constexpr std::string_view kReport = "report.html";
inline constexpr std::string_view kFailed = "np_failed.json";
inline constexpr std::string_view kPairs = "np_pairs.json";

// The tools' raw outputs, by the suffix after "M_".
inline constexpr std::string_view kPing = "ping.txt";
inline constexpr std::string_view kTcp = "tcp.json";
inline constexpr std::string_view kUdp = "udp.json";

inline std::string contract(std::string_view mode) {
    return std::string(kContractPrefix).append(mode).append(kContractSuffix);
}
// M_ping.txt, M_tcp.json, M_udp.json
inline std::string output(std::string_view mode, std::string_view which) {
    return std::string(mode).append("_").append(which);
}
// What names a trace of mode M starts with: M_trace_
inline std::string trace_prefix(std::string_view mode) {
    return std::string(mode).append("_trace_");
}
inline std::string trace(std::string_view mode, std::string_view node) {
    return trace_prefix(mode).append(node).append(".json");
}
inline std::string partial_trace(std::string_view mode, std::string_view node) {
    return std::string(mode).append("_partial-trace_").append(node).append(".json");
}
inline std::string findings(std::string_view mode) {
    return std::string(mode).append("_findings.json");
}
inline std::string commands_log(std::string_view mode) {
    return std::string(mode).append("_commands.log");
}
inline std::string phases(std::string_view mode) {
    return std::string(mode).append("_phases.json");
}

}  // namespace np::run_dir
