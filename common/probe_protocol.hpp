#pragma once
// np-probe's protocol, in one place for the probe that speaks it (src/probe) and the code that
// drives it on a node (src/experiment): the commands it takes, one per line, on stdin or its
// control socket, and the types of the NDJSON messages it prints on stdout and answers on the
// control socket. Each message is one JSON object with "type" set to one of kMessage*.
//
//   commands                     answer on the control socket (one line)
//   phase NAME  (NAME one word)  {"type":"phase", …}   the phase just closed (np-trace/1 phase)
//   status                       {"type":"status", "phase", "t_ms", "last_sample": {…}|null}
//   stop                         {"type":"trace", …}   the whole np-trace/1 document
//   anything else                {"type":"error", "message"}
//
// stdout (foreground only): "ready" once attached, "sample" every interval, "phase" when a
// phase closes, "trace" last. `--background` prints only "ready", then detaches.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/json_document.hpp"

namespace np::probe_protocol {

inline constexpr std::string_view kTypeKey = "type";

inline constexpr std::string_view kMessageReady = "ready";
inline constexpr std::string_view kMessageSample = "sample";
inline constexpr std::string_view kMessagePhase = "phase";
inline constexpr std::string_view kMessageStatus = "status";
inline constexpr std::string_view kMessageTrace = "trace";
inline constexpr std::string_view kMessageError = "error";

inline constexpr std::string_view kCommandPhase = "phase";  // followed by a space and the name
inline constexpr std::string_view kCommandStatus = "status";
inline constexpr std::string_view kCommandStop = "stop";

// The name of the phase counted before the first `phase` command.
inline constexpr std::string_view kFirstPhase = "default";

// A command line is short; anything longer on the control socket is refused.
inline constexpr size_t kMaxCommandBytes = 256;

// One message from a node's probe (its reply is the node's, so not trusted): parsed with the
// bounds of a trace (common/json_document.hpp) — a message nested 100,000 deep or holding
// 1e400 is refused there, never printed back with the recursion of dump(). None when it is
// not a JSON object within those bounds: a reply that is no message is not an error of
// np-explain's, and each caller says what its absence means.
inline std::optional<nlohmann::json> parse_message(std::string_view text) {
    try {
        auto j = parse_json_document(text, "probe message");
        if (j.is_object()) return j;
    } catch (const InputError&) {
    }
    return std::nullopt;
}

// A message's type: its `type` string, or "" when there is no message or its `type` is missing
// or not a string (`{"type": 71}` from a node is a message of no type, not an exception).
inline std::string message_type(const std::optional<nlohmann::json>& m) {
    if (!m) return "";
    const auto it = m->find(kTypeKey);
    return it != m->end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A numeric field of a message, or 0 when it is missing or not a number.
inline double number_field(const nlohmann::json& j, std::string_view key) {
    if (!j.is_object()) return 0;
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

}  // namespace np::probe_protocol
