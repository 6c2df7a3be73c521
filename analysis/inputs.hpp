#pragma once
// Which tool printed a text, and the one entry point from text to Measurements that
// `np-explain explain` (and later `run`) uses.
#include <string>
#include <string_view>

#include "analysis/measurement.hpp"

namespace np {

enum class InputFormat { auto_detect, iperf3_json, iperf2_text, ping_text };
const char* to_string(InputFormat f);

// iperf3 JSON starts with '{'; ping has "PING …" / "--- … ping statistics ---"; iperf2 has its
// "Client connecting to" / "Server listening on … port" header or "[  3]  0.0-10.0 sec" lines.
// Throws InputError("format") when none fits, naming what it looks like instead (e.g. iperf3
// text output, which has no counts to reconcile: rerun with -J).
InputFormat detect_format(std::string_view text);

// Parses `text` as `format` (detecting it first for auto_detect) and normalises it.
Measurements parse_measurements(std::string_view text, const std::string& source,
                                InputFormat format = InputFormat::auto_detect);

}  // namespace np
