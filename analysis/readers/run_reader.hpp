#pragma once
// What the transcript reader (transcript.hpp) asks of each tool's text reader: lines in, one
// run's measurements out. iperf2 (iperf2.hpp), iperf3's text output (iperf3_text.hpp) and ping
// (ping.hpp) implement it; a reader holds one run and never more than that run's summary
// figures, so a text of any length is read in constant memory.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/readers/command.hpp"
#include "analysis/readers/measurement.hpp"

namespace np {

// Where a run was found, for its rows and for messages.
struct RunInfo {
    std::string source;                    // "client.txt", or "session.md:40" in a multi-run text
    const ToolCommand* command = nullptr;  // the command that produced it, when shown
};

class RunReader {
  public:
    virtual ~RunReader() = default;
    // One line of the tool's output, blanks around it trimmed. Throws InputError (the tool's
    // name as the field, with the line) for a line that is the tool's but malformed.
    virtual void line(std::string_view text, int64_t number) = 0;
    // Whether `text` begins the next run rather than continuing this one: a second header, a
    // new connection after this run's result, the next test of a server that goes on serving.
    virtual bool next_run_starts(std::string_view text) const = 0;
    // A reader for that next run; a server's keeps what its banner said.
    virtual std::unique_ptr<RunReader> next_run() const = 0;
    // Nothing of the tool's output read yet.
    virtual bool empty() const = 0;
    // Adds what the run measured to `out` (tests, a tool failure, a server's banner). When it
    // measured nothing — interrupted, truncated — returns why instead, for a note or an error.
    virtual std::optional<std::string> finish(const RunInfo& info, Measurements& out) = 0;
    // The line the reason of finish() refers to (the run's last line).
    virtual int64_t last_line() const = 0;
};

}  // namespace np
