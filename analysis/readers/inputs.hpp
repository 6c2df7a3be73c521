#pragma once
// The one entry point from a tool's output to Measurements that `np-explain explain` (files),
// `run` and `report` (outputs in memory) use: iperf3 JSON and --json-stream NDJSON are read by
// the streaming JSON reader (iperf3.hpp); any other text — iperf2, iperf3 text, ping, alone or
// in a terminal transcript — by transcript.hpp. Either way the input is pulled in chunks and
// never held whole.
#include <string>
#include <string_view>

#include "analysis/readers/measurement.hpp"
#include "analysis/readers/source.hpp"

namespace np {

// auto_detect: JSON when the input starts with '{', else text with every tool; the others
// restrict a text to one tool (iperf3 also takes JSON) and give its own error when it is not.
enum class InputFormat { auto_detect, iperf3, iperf2, ping };
const char* to_string(InputFormat f);

// Reads and normalises one input; `source` names it in rows and messages. Throws InputError
// (field: "json", a JSON path, "iperf2", "ping", "format"…, with the line) for bad input.
Measurements parse_measurements(ByteSource& in, const std::string& source,
                                InputFormat format = InputFormat::auto_detect);
Measurements parse_measurements(std::string_view text, const std::string& source,
                                InputFormat format = InputFormat::auto_detect);

// Gives each client test the facts its server printed about itself (Measurements::servers):
// the server's socket buffer — its receive side, unless -R — and its datagram size. A banner
// matches a test of the same tool, transport and port (iperf2's default 5001, iperf3's 5201),
// preferring one from the same source. A banner that matches no test gets a note; inputs that
// hold only banners and nothing to explain are an InputError.
void use_server_banners(Measurements& m);

}  // namespace np
