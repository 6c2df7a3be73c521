#include "analysis/readers/transcript.hpp"

#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "analysis/readers/iperf2.hpp"
#include "analysis/readers/iperf3.hpp"
#include "analysis/readers/iperf3_text.hpp"
#include "analysis/readers/ping.hpp"
#include "analysis/readers/run_reader.hpp"
#include "analysis/readers/text.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

bool host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
}

// After a prompt's last character: the command (one blank after it, or none at the end).
std::optional<std::string_view> after_sigil(std::string_view rest) {
    if (rest.empty()) return rest;
    if (rest.front() != ' ' && rest.front() != '\t') return std::nullopt;
    return text::trim(rest);
}

bool sigil(char c) {
    return c == '$' || c == '#' || c == '%' || c == '>';
}

// The markup around code in pages: fences and tags that hold a terminal session but are not
// part of it.
enum class Markup { none, fence, pre_open, pre_close };

Markup markup_of(std::string_view t) {
    // Most lines are tool output: their first byte rules markup out.
    if (t.empty()) return Markup::none;
    switch (t[0]) {
        case '`':
            return t.starts_with("```") ? Markup::fence : Markup::none;
        case '~':
            return t.starts_with("~~~") ? Markup::fence : Markup::none;
        case '{':
            return t.starts_with("{{{") ? Markup::fence : Markup::none;
        case '}':
            return t == "}}}" ? Markup::fence : Markup::none;
        case '[':
            if (t.starts_with("[code")) return Markup::pre_open;
            return t.starts_with("[/code]") ? Markup::pre_close : Markup::none;
        case '<':
            for (std::string_view open : {"<pre", "<code", "<syntaxhighlight", "<source"})
                if (t.starts_with(open)) return Markup::pre_open;
            for (std::string_view close : {"</pre>", "</code>", "</syntaxhighlight>", "</source>"})
                if (t.starts_with(close)) return Markup::pre_close;
            return Markup::none;
        default:
            return Markup::none;
    }
}

// Inside HTML, the terminal's <, >, & and " arrive as entities.
void decode_entities(std::string& s) {
    static const std::pair<std::string_view, char> entities[] = {{"&lt;", '<'},   {"&gt;", '>'},
                                                                 {"&quot;", '"'}, {"&#39;", '\''},
                                                                 {"&nbsp;", ' '}, {"&amp;", '&'}};
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        bool done = false;
        if (s[i] == '&') {
            for (const auto& [name, c] : entities) {
                if (std::string_view(s).substr(i, name.size()) == name) {
                    out += c;
                    i += name.size();
                    done = true;
                    break;
                }
            }
        }
        if (!done) out += s[i++];
    }
    s = std::move(out);
}

enum class ToolKind { none, iperf2, iperf3_text, iperf3_json, ping };

Tool tool_of(ToolKind k) {
    return k == ToolKind::iperf2 ? Tool::iperf2 : k == ToolKind::ping ? Tool::ping : Tool::iperf3;
}

// The first line of iperf3's JSON: "{" alone (-J pretty-prints), or an object that opens
// with one of its top-level keys (compacted, or --json-stream's events). Another command's
// JSON line ({"ifindex": 1, … from ip -j) is not one.
bool iperf3_json_start(std::string_view t) {
    if (!t.starts_with("{")) return false;
    const size_t at = t.find_first_not_of(" \t\r", 1);
    if (at == std::string_view::npos) return true;
    const std::string_view rest = t.substr(at);
    for (std::string_view key :
         {"\"start\"", "\"event\"", "\"intervals\"", "\"end\"", "\"error\"", "\"title\""})
        if (rest.starts_with(key)) return true;
    return false;
}

// Which tool's output a line begins, read from the line alone (no command shown).
ToolKind kind_of_header(std::string_view t) {
    // Headers begin with '{', "PING", "---", "Client", "Server", "Connecting" or "iperf3:".
    if (t.empty() ||
        (t[0] != '{' && t[0] != 'P' && t[0] != '-' && t[0] != 'C' && t[0] != 'S' && t[0] != 'i'))
        return ToolKind::none;
    if (t.starts_with("{")) return iperf3_json_start(t) ? ToolKind::iperf3_json : ToolKind::none;
    if (ping_header(t)) return ToolKind::ping;
    if (iperf3_text_header(t)) return ToolKind::iperf3_text;
    if (iperf2_header(t)) return ToolKind::iperf2;
    return ToolKind::none;
}
ToolKind kind_of_line(std::string_view t) {
    if (const ToolKind k = kind_of_header(t); k != ToolKind::none) return k;
    if (ping_line(t)) return ToolKind::ping;
    if (iperf3_text_report(t)) return ToolKind::iperf3_text;
    if (iperf2_report(t)) return ToolKind::iperf2;
    return ToolKind::none;
}

std::unique_ptr<RunReader> make_reader(ToolKind k) {
    switch (k) {
        case ToolKind::iperf2:
            return make_iperf2_reader();
        case ToolKind::iperf3_text:
            return make_iperf3_text_reader();
        case ToolKind::ping:
            return make_ping_reader();
        default:
            return nullptr;
    }
}

class Transcript {
  public:
    Transcript(ByteSource& in, std::string source, ToolFilter tools)
        : lines_(in), source_(std::move(source)), tools_(tools) {}

    Measurements read() {
        Clean l;
        while (next(l)) handle(l);
        close_run();
        return finish();
    }

  private:
    // One line of the text with the page's markup taken off.
    struct Clean {
        int64_t number = 0;
        std::string text;  // trimmed
        bool markup = false;
        bool cut = false;
    };

    bool next(Clean& out) {
        if (pushed_back_) {
            out = std::move(*pushed_back_);
            pushed_back_.reset();
            return true;
        }
        LineReader::Line l;
        if (!lines_.next(l)) return false;
        if (std::memchr(l.text.data(), '\0', l.text.size()))
            throw InputError("format", "binary data (a NUL byte), not a tool's text output",
                             l.number);
        if (!recognised_ && lines_.bytes_read() > kMaxPreambleBytes)
            throw InputError("format",
                             fmt::format("no iperf3, iperf2 or ping output in the first {} MiB",
                                         kMaxPreambleBytes >> 20),
                             l.number);
        out.number = l.number;
        out.cut = l.cut;
        out.markup = false;
        std::string_view t = text::trim(l.text);
        switch (markup_of(t)) {
            case Markup::fence:
                out.markup = true;
                out.text.clear();
                return true;
            case Markup::pre_open: {
                in_html_ = true;
                // "<pre>$ iperf -c h": what follows the tag is the block's first line.
                const size_t close = t.find_first_of(">]");
                t = close == std::string_view::npos ? std::string_view{}
                                                    : text::trim(t.substr(close + 1));
                out.markup = t.empty();
                break;
            }
            case Markup::pre_close:
                in_html_ = false;
                out.markup = true;
                out.text.clear();
                return true;
            case Markup::none:
                break;
        }
        // "$ iperf -c h</pre>": the closing tag ends the block.
        for (std::string_view close : {"</pre>", "</code>", "</syntaxhighlight>", "}}}"}) {
            if (t.empty() || (t.back() != '>' && t.back() != '}')) break;
            if (t.ends_with(close)) {
                t = text::trim(t.substr(0, t.size() - close.size()));
                if (close != "}}}") in_html_ = false;
            }
        }
        out.text.assign(t);
        if (in_html_ && out.text.find('&') != std::string::npos) decode_entities(out.text);
        return true;
    }

    void handle(Clean& l) {
        if (l.markup) return;
        if (read_prompt(l)) return;
        const std::string_view t = l.text;
        if (t.empty()) return;
        saw_text_ = true;
        if (read_iperf2_version(t)) return;
        end_run_at(t, l.number);
        if (!run_ && !begin_run(l)) return;
        if (l.cut) return;  // longer than any line a tool prints
        run_->line(t, l.number);
        recognised_ = recognised_ || !run_->empty();
    }

    // A typed command: it ends the run before it and says what the output after it is. Gives
    // whether the line was one.
    bool read_prompt(const Clean& l) {
        const auto p = prompt_command(l.text);
        if (!p) return false;
        auto cmd = parse_tool_command(p->text, p->windows);
        if (!p->strong && !cmd) return false;
        close_run();
        // An `iperf -v` names the runs of the one command after it, not a later host's.
        if (iperf2_version_used_) iperf2_version_.clear(), iperf2_platform_.clear();
        iperf2_version_used_ = false;
        command_ = std::move(cmd);
        command_line_ = l.number;
        run_started_for_command_ = false;
        return true;
    }

    // `iperf -v`: "iperf version 2.1.9 (14 March 2023) pthreads" ("win32 threads" on
    // Windows). iperf2's runs print no version of their own: the ones after it are this. Gives
    // whether the line was one.
    bool read_iperf2_version(std::string_view t) {
        if (!t.starts_with("iperf version 2.")) return false;
        const std::string_view rest = t.substr(14);
        iperf2_version_ =
            "iperf " + std::string(rest.substr(0, std::min<size_t>(rest.find(' '), 40)));
        iperf2_platform_ = t.ends_with("win32 threads") ? "Windows" : "";
        return true;
    }

    // Ends the run being read where the line begins another: the same tool's next run, which
    // starts here, or another tool's output.
    void end_run_at(std::string_view t, int64_t number) {
        if (run_ && run_->next_run_starts(t)) {
            auto next = run_->next_run();
            close_run();
            start(std::move(next), kind_, number);
        }
        if (run_) {
            // Another tool's header without a prompt between: outputs pasted one after another.
            const ToolKind k = kind_of_header(t);
            if (k != ToolKind::none && k != kind_ &&
                !(kind_ == ToolKind::iperf3_text && k == ToolKind::iperf3_json)) {
                close_run();
                command_.reset();
            }
        }
    }

    // Starts the run the line begins: of the tool the command names, else of the tool the line
    // looks like. Gives whether a run now reads the line (a JSON document is read whole here).
    bool begin_run(Clean& l) {
        const std::string_view t = l.text;
        ToolKind k = kind_of_line(t);
        if (command_) {
            // The command says which tool printed what follows.
            const Tool tool = command_->tool;
            k = tool == Tool::iperf2 ? ToolKind::iperf2
                : tool == Tool::ping ? ToolKind::ping
                : t.starts_with("{") ? ToolKind::iperf3_json
                                     : ToolKind::iperf3_text;
        }
        if (k == ToolKind::none || !tools_.allows(tool_of(k))) return false;
        if (k == ToolKind::iperf3_json) {
            read_json(l);
            return false;
        }
        start(make_reader(k), k, l.number);
        return true;
    }

    void start(std::unique_ptr<RunReader> reader, ToolKind kind, int64_t line) {
        run_ = std::move(reader);
        kind_ = kind;
        // A run is found where its command was typed, else where its output begins; a server's
        // later tests where each begins.
        run_line_ = command_ && !run_started_for_command_ ? command_line_ : line;
        run_started_for_command_ = command_.has_value();
    }

    // Where a run's items are in out_, to name their source once the number of runs is known.
    struct Placed {
        int64_t line;
        size_t throughput, pings, failures, servers;
    };
    Placed mark(int64_t line) const {
        return {line, out_.throughput.size(), out_.pings.size(), out_.failures.size(),
                out_.servers.size()};
    }

    void close_run() {
        if (!run_) return;
        std::unique_ptr<RunReader> run = std::move(run_);
        if (run->empty()) return;
        recognised_ = true;
        const Placed at = mark(run_line_);
        RunInfo info{source_, command_ ? &*command_ : nullptr};
        if (auto why = run->finish(info, out_)) {
            skipped_.push_back({run_line_, run->last_line(), tool_of(kind_), std::move(*why)});
        }
        added(at);
    }

    // iperf3 -J or --json-stream output inside the text: the JSON reader pulls the lines that
    // follow until the document ends (or, for NDJSON, until a line is not an event).
    class JsonLines : public ByteSource {
      public:
        JsonLines(Transcript& t, Clean first, bool stream)
            : t_(t), first_(std::move(first)), stream_(stream) {}
        std::string_view next() override {
            Clean l;
            if (first_) {
                l = std::move(*first_);
                first_.reset();
            } else {
                if (!t_.next(l)) return {};
                const auto p = prompt_command(l.text);
                const bool prompt = p && (p->strong || parse_tool_command(p->text, p->windows));
                if (l.markup || prompt || (stream_ && !l.text.starts_with("{"))) {
                    t_.pushed_back_ = std::move(l);
                    return {};
                }
            }
            if (l.cut)
                throw InputError("json", "a line longer than any iperf3 JSON line", l.number);
            last_ = l.number;
            buf_ = std::move(l.text);
            buf_ += '\n';
            return buf_;
        }
        int64_t last() const { return last_; }

      private:
        Transcript& t_;
        std::optional<Clean> first_;
        bool stream_;
        std::string buf_;
        int64_t last_ = 0;
    };

    void read_json(Clean& l) {
        recognised_ = true;
        const int64_t first = l.number;
        const int64_t named = command_ && !run_started_for_command_ ? command_line_ : first;
        run_started_for_command_ = command_.has_value();
        const bool stream = looks_like_json_stream(l.text);
        JsonLines in(*this, std::move(l), stream);
        Iperf3Run run;
        try {
            run = parse_iperf3(in, true);
        } catch (const InputError& e) {
            throw InputError(e.field(), e.what(), e.line() > 0 ? first + e.line() - 1 : first);
        }
        const Placed at = mark(named);
        Measurements m = measurements_from(run, source_);
        out_.append(std::move(m));
        added(at);
    }

    // The items a run added: the command it ran fills what they do not say.
    void added(const Placed& at) {
        // Every run counts, left out or not: each costs a row or a note.
        if (placed_.size() >= kMaxRunsPerInput)
            throw InputError(
                "format", fmt::format("more than {} runs in one input", kMaxRunsPerInput), at.line);
        placed_.push_back(at);
        for (size_t i = at.throughput; i < out_.throughput.size(); ++i) {
            auto& t = out_.throughput[i];
            if (command_) apply_command(t, *command_);
            if (t.tool == Tool::iperf2 && t.tool_version.empty() && !iperf2_version_.empty()) {
                t.tool_version = iperf2_version_;
                if (t.platform.empty()) t.platform = iperf2_platform_;
                iperf2_version_used_ = true;
            }
            series_points_ += t.interval_bps.size();
            if (series_points_ > kMaxSeriesPointsPerInput) t.interval_bps.clear();
        }
        for (size_t i = at.pings; i < out_.pings.size(); ++i) {
            auto& p = out_.pings[i];
            if (command_) p.command = command_->text;
            series_points_ += p.replies.size();
            if (series_points_ > kMaxSeriesPointsPerInput) p.replies.clear();
        }
    }

    Measurements finish() {
        const bool any = !out_.throughput.empty() || !out_.pings.empty() ||
                         !out_.failures.empty() || !out_.servers.empty();
        if (!any) {
            if (!skipped_.empty())
                throw InputError(to_string(skipped_.front().tool), skipped_.front().why,
                                 skipped_.front().last_line);
            if (lines_.lines_read() == 0 || blank_only())
                throw InputError("format", "empty input: nothing to explain", 1);
            if (!tools_.iperf2 || !tools_.ping || !tools_.iperf3) throw not_the_tool();
            throw InputError("format",
                             "not iperf3 JSON, iperf2 text or ping output (give the tool with "
                             "--iperf3/--iperf2/--ping if it is)",
                             1);
        }
        // Several runs: each is named by the line it starts on.
        if (placed_.size() > 1) {
            for (size_t r = 0; r < placed_.size(); ++r) {
                const Placed& a = placed_[r];
                const Placed end = r + 1 < placed_.size() ? placed_[r + 1] : mark(0);
                const std::string where = fmt::format("{}:{}", source_, a.line);
                for (size_t i = a.throughput; i < end.throughput; ++i)
                    out_.throughput[i].source = where;
                for (size_t i = a.pings; i < end.pings; ++i) out_.pings[i].source = where;
                for (size_t i = a.failures; i < end.failures; ++i) out_.failures[i].source = where;
                for (size_t i = a.servers; i < end.servers; ++i) out_.servers[i].source = where;
            }
        }
        for (const auto& s : skipped_)
            out_.notes.push_back(fmt::format("{}:{}: {} (left out)", source_, s.first_line, s.why));
        return std::move(out_);
    }

    bool blank_only() const { return !saw_text_; }

    InputError not_the_tool() const {
        if (tools_.ping)
            return InputError("ping",
                              "no '--- HOST ping statistics ---' summary (truncated, or not ping "
                              "output)",
                              lines_.lines_read());
        if (tools_.iperf2)
            return InputError("iperf2",
                              "no 'Client connecting to' / 'Server listening on' header and no "
                              "report lines: not iperf2 output",
                              1);
        return InputError("iperf3", "no iperf3 JSON or text output (Connecting to host …)", 1);
    }

    struct Skipped {
        int64_t first_line;
        int64_t last_line;
        Tool tool;
        std::string why;
    };

    LineReader lines_;
    std::string source_;
    ToolFilter tools_;
    bool in_html_ = false;
    bool recognised_ = false;
    bool saw_text_ = false;
    std::optional<Clean> pushed_back_;
    std::optional<ToolCommand> command_;
    int64_t command_line_ = 0;
    bool run_started_for_command_ = false;  // the command's first run has begun
    std::unique_ptr<RunReader> run_;
    ToolKind kind_ = ToolKind::none;
    int64_t run_line_ = 0;
    Measurements out_;
    std::vector<Placed> placed_;
    std::vector<Skipped> skipped_;
    size_t series_points_ = 0;
    std::string iperf2_version_, iperf2_platform_;  // from an `iperf -v` earlier in the text
    bool iperf2_version_used_ = false;              // by the runs of the command after it
};

// A prompt that begins with the host or the user: "user@host:~/dir$ cmd", "host:~ user$ cmd",
// "host# cmd", zsh's "user@host ~ % cmd". A user@host makes it a strong one.
std::optional<PromptedCommand> host_prompt(std::string_view t) {
    size_t i = 0;
    while (i < t.size() && i < 64 && host_char(t[i])) ++i;
    if (i == 0 || i >= t.size()) return std::nullopt;
    bool strong = false;
    if (t[i] == '@') {
        const size_t at = ++i;
        while (i < t.size() && host_char(t[i])) ++i;
        if (i == at) return std::nullopt;
        strong = true;
    }
    if (i < t.size() && t[i] == ':') {
        ++i;
        while (i < t.size() && t[i] != ' ' && !sigil(t[i])) ++i;
        // macOS: "host:~ user$ cmd"
        if (i < t.size() && t[i] == ' ' && !strong) {
            size_t j = i + 1;
            while (j < t.size() && host_char(t[j])) ++j;
            if (j < t.size() && sigil(t[j])) i = j;
        }
    } else if (strong && i < t.size() && t[i] == ' ') {
        // zsh: "user@host ~ %"
        const size_t space = i + 1;
        size_t j = space;
        while (j < t.size() && t[j] != ' ' && !sigil(t[j])) ++j;
        if (j < t.size() && t[j] == ' ' && j + 1 < t.size() && sigil(t[j + 1])) i = j + 1;
    }
    if (i >= t.size() || !sigil(t[i])) return std::nullopt;
    if (auto c = after_sigil(t.substr(i + 1))) return PromptedCommand{*c, strong};
    return std::nullopt;
}

}  // namespace

std::optional<PromptedCommand> prompt_command(std::string_view line) {
    std::string_view t = text::trim(line);
    if (t.empty()) return std::nullopt;
    // "[user@host dir]$ cmd"
    if (t.front() == '[') {
        const size_t close = t.find(']');
        if (close != std::string_view::npos && close < 120 && close + 1 < t.size() + 1 &&
            t.substr(1, close).find('@') != std::string_view::npos && close + 1 < t.size() &&
            sigil(t[close + 1])) {
            if (auto c = after_sigil(t.substr(close + 2))) return PromptedCommand{*c, true};
        }
        return std::nullopt;
    }
    // cmd.exe: "C:\Users\me>cmd", with no blank after its '>'.
    if (t.size() > 3 && ((t[0] >= 'A' && t[0] <= 'Z') || (t[0] >= 'a' && t[0] <= 'z')) &&
        t[1] == ':' && t[2] == '\\') {
        const size_t gt = t.find('>');
        if (gt != std::string_view::npos && gt < 200)
            return PromptedCommand{text::trim(t.substr(gt + 1)), true, true};
        return std::nullopt;
    }
    // "PS C:\Users\me> cmd"
    if (t.starts_with("PS ") && t.size() > 4 && t[4] == ':') {
        const size_t gt = t.find('>');
        if (gt != std::string_view::npos)
            if (auto c = after_sigil(t.substr(gt + 1))) return PromptedCommand{*c, true, true};
        return std::nullopt;
    }
    // "$ cmd", "# cmd", "% cmd", "> cmd"
    if (sigil(t.front())) {
        if (auto c = after_sigil(t.substr(1))) return PromptedCommand{*c, t.front() == '$'};
        return std::nullopt;
    }
    return host_prompt(t);
}

void apply_command(ThroughputTest& t, const ToolCommand& c) {
    t.command = c.text;
    if (t.server_host.empty() && !c.server && !t.from_server) t.server_host = c.host;
    if (!t.port && c.port) t.port = c.port;
    if (t.duration_s <= 0 && c.time_s) t.duration_s = *c.time_s;
    if (!t.omit_s && c.omit_s) t.omit_s = c.omit_s;
    t.udp_counters_64bit = t.udp_counters_64bit || c.udp_counters_64bit;
    if (t.transport == Transport::udp && !t.payload_bytes && c.length_bytes)
        t.payload_bytes = c.length_bytes;
    if (!t.offered_bps && !c.server) {
        // -b is per stream in iperf2 and iperf3 alike.
        const char* tool = c.tool == Tool::iperf2 ? "iperf2" : "iperf3";
        const std::string per_stream =
            t.streams > 1 ? fmt::format(" per stream × {}", t.streams) : "";
        if (c.bandwidth_bps && *c.bandwidth_bps > 0) {
            t.offered_bps = *c.bandwidth_bps * t.streams;
            t.offered_from =
                fmt::format("the command's -b {}{}{}", c.bandwidth_text, per_stream,
                            c.tool == Tool::iperf2 &&
                                    c.bandwidth_text.find_first_of("KMGT") != std::string::npos
                                ? ", which iperf2 reads in binary units (an uppercase suffix)"
                                : "");
        } else if (!c.bandwidth_bps && t.transport == Transport::udp) {
            t.offered_bps = 1e6 * t.streams;
            t.offered_from =
                fmt::format("{}'s default for UDP without -b, 1 Mbit/s{}", tool, per_stream);
        }
    }
    if (!t.socket_buffer_bytes && c.window_bytes) {
        // iperf3 asks the server for the same -w; iperf2's -w is this side's alone.
        const bool both = c.tool == Tool::iperf3;
        t.socket_buffer_bytes = c.window_bytes;
        t.socket_buffer_text = fmt::format("-w {} ({} bytes{})", c.window_text, *c.window_bytes,
                                           both ? ", which iperf3 sets on both ends" : "");
        t.socket_buffer_side = both || c.server ? "server" : "client";
    }
}

Measurements read_text(ByteSource& in, const std::string& source, ToolFilter tools) {
    Transcript t(in, source, tools);
    return t.read();
}

}  // namespace np
