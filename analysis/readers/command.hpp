#pragma once
// The command lines of a terminal transcript: which tool ran, and what it was asked to do.
// The output does not always say it — iperf3's text output omits -b and -l, iperf 2.0.x prints
// no offered rate — but the command the user typed does.
//
// A command is read as a shell would split it (quotes, backslashes), up to the first pipe,
// redirection, `;`, `&&` or comment, and through the wrappers people put in front of a tool:
// sudo, time, env and VAR=value, stdbuf, timeout, nice, taskset, systemd-run, `ip netns exec
// NS`, `ssh [options] HOST "iperf3 …"`.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/readers/measurement.hpp"

namespace np {

struct ToolCommand {
    std::string text;  // the command line as typed, blanks trimmed
    Tool tool = Tool::iperf3;
    // iperf2 / iperf3
    bool server = false;                  // -s
    std::string host;                     // -c HOST, or ping's destination
    bool udp = false;                     // -u
    std::optional<double> bandwidth_bps;  // -b, per stream, in the tool's units
    std::string bandwidth_text;           // as typed: "9gbps", "1G"
    std::optional<int> parallel;          // -P
    std::optional<int64_t> window_bytes;  // -w
    std::string window_text;
    std::optional<int> length_bytes;  // -l: UDP datagram payload / TCP write size
    std::optional<int> port;          // -p
    bool reverse = false;             // -R
    bool bidir = false;               // iperf3 --bidir, iperf2 -d / --full-duplex
    std::optional<double> time_s;     // -t
    std::optional<int> omit_s;        // iperf3 -O
    bool udp_counters_64bit = false;  // iperf3 --udp-counters-64bit
    bool json = false;                // iperf3 -J / --json
    bool json_stream = false;         // iperf3 --json-stream
    // ping
    std::optional<int64_t> count;  // -c
    std::string interface;         // -I
};

// The tool command in a line, or nothing when the line runs no iperf, iperf3 or ping (or runs
// one without what makes it a run: iperf without -c or -s, ping without a destination). Typed at
// cmd.exe or PowerShell (`windows_shell`), a '\' is a path separator, not an escape.
std::optional<ToolCommand> parse_tool_command(std::string_view line, bool windows_shell = false);

// Splits a command line as a shell would (quotes, backslash escapes), stopping at the first
// unquoted |, ;, &, >, <, or a # that starts a word.
std::vector<std::string> shell_words(std::string_view line);

// iperf's size and rate suffixes: iperf2 reads an uppercase K/M/G as binary and a lowercase one
// as decimal ("-b 90M" is 90 × 2^20 bit/s, "-b 9g" 9e9); iperf3 reads -b in decimal and -w/-l in
// binary, whatever the case. Empty when `text` is not a number with an optional suffix.
std::optional<double> iperf_quantity(std::string_view text, Tool tool, bool rate);

}  // namespace np
