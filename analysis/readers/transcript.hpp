#pragma once
// Text inputs: one tool's output, several concatenated, or a terminal transcript — prompts
// ("user@host:~$ iperf -c 192.168.1.1"), each command's output, the next command —, possibly
// pasted into a page inside Markdown fences (``` or ~~~), a MediaWiki <pre> or a Trac/Moin
// {{{ }}} block. Every run of iperf2, iperf3 (text, -J JSON or --json-stream) and ping becomes
// its own test, with the command line that produced it when a prompt shows it; the facts that
// command gives (-b, -l, -w, -p, -t) fill what the output does not say.
//
// A run that printed no result (interrupted, truncated) is left out with a note when the text
// has other runs, and is the error when it has none. The text is read a line at a time: memory
// is bounded by one run's summary, not by the length of the text.
#include <string>

#include "analysis/readers/command.hpp"
#include "analysis/readers/measurement.hpp"
#include "analysis/readers/source.hpp"

namespace np {

// Which tools a text may hold: all, or the one the user named (--iperf3, --iperf2, --ping).
struct ToolFilter {
    bool iperf3 = true, iperf2 = true, ping = true;
    bool allows(Tool t) const {
        return t == Tool::iperf3 ? iperf3 : t == Tool::iperf2 ? iperf2 : ping;
    }
};

// More runs than this in one input is refused: no session holds them, and each is a row.
inline constexpr size_t kMaxRunsPerInput = 10000;
// Interval and reply series past this many points across one input's runs are not kept for the
// later runs (their rows and figures are; only their plots' points are not).
inline constexpr size_t kMaxSeriesPointsPerInput = 1 << 18;
// Text with no tool output in its first 64 MiB is refused rather than read to its end.
inline constexpr int64_t kMaxPreambleBytes = int64_t{64} << 20;

// Reads text from `in`. `source` names the input in rows and messages ("session.md", or
// "session.md:40" for each run when it holds several). Throws InputError for bad input.
Measurements read_text(ByteSource& in, const std::string& source, ToolFilter tools = {});

// The command a terminal line runs, after its prompt: "user@host:~$ iperf -c h" → "iperf -c h".
// `strong` prompts (user@host, [user@host dir], PS C:\>, "$ ") mark a command whatever it runs;
// weak ones ("# ", "% ", "> ", "host# ") and lines with no prompt only when they run a tool.
struct PromptedCommand {
    std::string_view text;  // the command, possibly empty
    bool strong = false;
    bool windows = false;  // cmd.exe's or PowerShell's: '\' separates a path's parts
};
std::optional<PromptedCommand> prompt_command(std::string_view line);

// Fills what `t`'s output did not say from the command that produced it (-b, -l, -w, -p, -c,
// -t), and records the command.
void apply_command(ThroughputTest& t, const ToolCommand& c);

}  // namespace np
