#pragma once
// What each libFuzzer target runs on its input (fuzz/readers.cpp): one function per reader.
#include <string_view>

namespace np::fuzz {

// iperf3 -J documents (and iperf3's text output, which --iperf3 also takes).
void iperf3_json(std::string_view input);

// iperf3 --json-stream NDJSON. The input follows a start event, so the reader
// stays in NDJSON mode however the fuzzer mutates the first line.
void iperf3_ndjson(std::string_view input);

// iperf2 client and server text output, banners included.
void iperf2(std::string_view input);

// ping output of every platform ping.hpp reads.
void ping(std::string_view input);

// terminal transcripts and pages — prompts, commands, fences, <pre>, and the
// outputs of every tool inside them, JSON included.
void transcript(std::string_view input);

// network-performance_params.yml (YAML), as `run` reads it.
void params(std::string_view input);

// the fan-out's inventory of pairs (network-performance_pairs.yml, YAML) as
// `np-explain pairs` reads and schedules it, and the np-pairs/1 schedule it writes read back as
// `parity` and `report` read a gathered dir's np_pairs.json. An input that starts with '{' is
// also read as such a schedule directly.
void pairs(std::string_view input);

// a result contract, np_contract_<mode>.json, as attach, report and parity read
// it: parsed (bounded), its trace references checked, its figures explained, the explanation
// attached and the document printed again, as attach writes it.
void contract(std::string_view input);

// a probe's trace (np-trace/1), as explain --trace, attach and report read it;
// what parses is written back (to_json) and printed, as run saves a node's trace.
void trace(std::string_view input);

// one NDJSON message from a node's np-probe, as src/experiment/node.cpp reads
// it (the node's reply is not trusted): parsed with parse_message, its fields looked up as
// node.cpp looks them up, a trace message printed back and read as a trace.
void probe_message(std::string_view input);

}  // namespace np::fuzz
