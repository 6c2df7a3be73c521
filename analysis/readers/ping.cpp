#include "analysis/readers/ping.hpp"

#include <fmt/format.h>

#include "analysis/readers/series.hpp"
#include "analysis/readers/text.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

using text::take_number;
using text::take_prefix;

[[noreturn]] void bad_ping(int64_t line, const std::string& what) {
    throw InputError("ping", what, line);
}

// "--- host ping statistics ---", or "ping6 statistics" (the KAME ping6 of macOS and FreeBSD).
bool summary_header(std::string_view s) {
    return s.starts_with("--- ") && s.size() > 24 &&
           (s.ends_with(" ping statistics ---") || s.ends_with(" ping6 statistics ---"));
}

std::string_view summary_target(std::string_view s) {
    s.remove_prefix(4);
    return s.substr(0, s.rfind(s.ends_with(" ping6 statistics ---") ? " ping6" : " ping"));
}

// KAME's ping6 (macOS; FreeBSD's before its merge): "PING6(56=40+8+8 bytes) a --> b"; FreeBSD's
// merged one says "PING(56=40+8+8 bytes) a --> b".
bool kame_header(std::string_view s) {
    return (s.starts_with("PING6(") || s.starts_with("PING(")) &&
           s.find(" bytes) ") != std::string_view::npos;
}

// Windows: "Pinging 198.18.10.2 with 32 bytes of data:", "Pinging h [198.18.10.2] with …".
bool windows_header(std::string_view s) {
    return s.starts_with("Pinging ") && s.find(" with ") != std::string_view::npos &&
           s.ends_with("bytes of data:");
}
bool windows_summary_header(std::string_view s) {
    return s.starts_with("Ping statistics for ") && s.ends_with(":");
}

// A Windows reply in a language the reader does not know: "Antwort von 198.18.10.2: Bytes=32
// Zeit<1ms TTL=64", "Réponse de …: octets=32 temps<1ms TTL=64". Its "TTL=" and a time in ms
// are the same in every language.
bool foreign_windows_reply(std::string_view s) {
    // English, also behind a timestamp a PowerShell pipeline put in front.
    if (s.find("Reply from ") != std::string_view::npos) return false;
    const size_t ttl = s.find(" TTL=");
    if (ttl == std::string_view::npos || s.find(": ") > ttl) return false;
    const size_t ms = s.rfind("ms ", ttl);
    return ms != std::string_view::npos && ms > 0 && s[ms - 1] >= '0' && s[ms - 1] <= '9';
}

// The Unix counts line: "10 packets transmitted, 9 received, +1 duplicates, 10% packet loss,
// time 9013ms" (iputils) or "3 packets transmitted, 3 packets received, 0.0% packet loss"
// (busybox, BSD, macOS, inetutils): comma-separated "N word…" items.
void parse_counts(PingTest& p, std::string_view line, int64_t number) {
    std::string_view rest = line;
    bool saw_transmitted = false, saw_received = false;
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        std::string_view item = text::trim(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        if (item.empty()) continue;
        std::string_view words = item;
        const auto n = take_number(words);
        words = text::trim(words);
        if (item.starts_with("time")) continue;  // "time 9013ms"
        if (!n)
            bad_ping(number,
                     fmt::format("'{}' is not a count in the ping summary", item.substr(0, 80)));
        if (*n < 0 || *n > 9e15)
            bad_ping(number, fmt::format("'{}' is out of range", item.substr(0, 80)));
        const auto count = static_cast<int64_t>(*n);
        if (words == "packets transmitted") {
            p.transmitted = count;
            saw_transmitted = true;
        } else if (words == "received" || words == "packets received") {
            p.received = count;
            saw_received = true;
        } else if (words == "duplicates") {
            p.duplicates = count;
        } else if (words == "errors") {
            p.errors = count;
        } else if (words == "% packet loss") {
            if (*n > 100) bad_ping(number, fmt::format("{}% packet loss is more than all", *n));
            p.printed_loss_pct = *n;
        }
        // Anything else ("pipe 4" comes on its own line; future items) is not needed.
    }
    if (!saw_transmitted || !saw_received)
        bad_ping(number, "the ping summary lacks 'packets transmitted' or 'received'");
    if (p.received > p.transmitted + p.duplicates)
        bad_ping(number, "more replies received than requests transmitted");
}

// "rtt min/avg/max/mdev = 0.030/0.045/0.061/0.009 ms" (iputils), "round-trip min/avg/max =
// 0.095/0.113/0.123 ms" (busybox), "round-trip min/avg/max/stddev = …" (BSD, macOS, inetutils)
// or "round-trip min/avg/max/std-dev = …" (OpenBSD): as many values as names.
void parse_rtt(PingTest& p, std::string_view s, int64_t number) {
    const size_t eq = s.find('=');
    if (eq == std::string_view::npos) bad_ping(number, "the rtt line has no '='");
    std::string_view names = text::trim(s.substr(0, eq));
    names.remove_prefix(std::min(names.size(), names.find(' ') + 1));
    s.remove_prefix(eq + 1);
    const bool with_deviation = names == "min/avg/max/mdev" || names == "min/avg/max/stddev" ||
                                names == "min/avg/max/std-dev";
    if (!with_deviation && names != "min/avg/max")
        bad_ping(number, fmt::format("the rtt line names '{}', not min/avg/max and a deviation",
                                     names.substr(0, 60)));
    std::optional<double> v[4];
    const int count = with_deviation ? 4 : 3;
    for (int i = 0; i < count; ++i) {
        if (i > 0 && !take_prefix(s, "/")) bad_ping(number, "the rtt line is truncated");
        v[i] = take_number(s);
        if (!v[i] || *v[i] < 0) bad_ping(number, "the rtt line has a value that is not a time");
    }
    if (!take_prefix(s, "ms")) bad_ping(number, "the rtt line does not end in ms");
    p.rtt_min_ms = v[0];
    p.rtt_avg_ms = v[1];
    p.rtt_max_ms = v[2];
    if (with_deviation) p.rtt_mdev_ms = v[3];
}

// "64 bytes from 198.18.10.2: icmp_seq=3 ttl=64 time=0.054 ms" (iputils; "time=105 ms" from
// 100 ms up; " (DUP!)" after a duplicate), "…: seq=0 ttl=64 time=0.095 ms" (busybox) or "16
// bytes from 2001:2::1, icmp_seq=0 hlim=64 time=0.123 ms" (KAME ping6).
std::optional<PingReply> parse_reply(std::string_view s) {
    if (s.find(" bytes from ") == std::string_view::npos) return std::nullopt;
    const auto value_after = [&](std::string_view key) -> std::optional<double> {
        size_t at = s.find(key);
        // "seq=" must not match inside "icmp_seq=": it is a whole word.
        while (at != std::string_view::npos && at > 0 && s[at - 1] != ' ') at = s.find(key, at + 1);
        if (at == std::string_view::npos) return std::nullopt;
        std::string_view rest = s.substr(at + key.size());
        return take_number(rest);
    };
    auto seq = value_after("icmp_seq=");
    if (!seq) seq = value_after("seq=");
    const auto rtt = value_after("time=");
    if (!seq || !rtt || *seq < 0 || *seq > 9e15 || *rtt < 0) return std::nullopt;
    return PingReply{static_cast<int64_t>(*seq), *rtt, s.find("(DUP!)") != std::string_view::npos};
}

// Windows' replies: "Reply from 198.18.10.2: bytes=32 time=14ms TTL=64", "… time<1ms …", and
// IPv6's "Reply from 2001:2::1: time<1ms". A "Reply from …: Destination host unreachable." is
// an ICMP error that Windows counts as received.
struct WindowsReply {
    std::optional<double> rtt_ms;  // 0 with below_resolution for "time<1ms"
    bool error = false;
    std::string_view error_text;  // "Destination host unreachable."
};
std::optional<WindowsReply> parse_windows_reply(std::string_view s) {
    if (!s.starts_with("Reply from ")) return std::nullopt;
    const size_t colon = s.find(": ");
    if (colon == std::string_view::npos) return std::nullopt;
    std::string_view rest = s.substr(colon + 2);
    const size_t time = rest.find("time");
    const std::string_view text = rest.substr(0, 120);
    if (time == std::string_view::npos || (time > 0 && rest[time - 1] != ' '))
        return WindowsReply{std::nullopt, true, text};
    rest.remove_prefix(time + 4);
    const bool below = rest.starts_with("<");
    if (!below && !rest.starts_with("=")) return WindowsReply{std::nullopt, true, text};
    rest.remove_prefix(1);
    const auto ms = take_number(rest);
    if (!ms || *ms < 0 || !rest.starts_with("ms")) return std::nullopt;
    return WindowsReply{below ? 0.0 : *ms, false, {}};
}

// The number after `name` ("Sent = ") in a Windows statistics line, and what follows it; an
// error naming `line_name` and `name` when either is missing.
std::pair<double, std::string_view> windows_field(std::string_view s, std::string_view name,
                                                  std::string_view line_name, int64_t number) {
    const size_t at = s.find(name);
    if (at == std::string_view::npos)
        bad_ping(number, fmt::format("{} has no '{}'", line_name, name));
    std::string_view rest = s.substr(at + name.size());
    const auto n = take_number(rest);
    if (!n || *n < 0) bad_ping(number, fmt::format("'{}' is not followed by a number", name));
    return {*n, rest};
}

// "Packets: Sent = 4, Received = 3, Lost = 1 (25% loss),"
void parse_windows_counts(PingTest& p, std::string_view s, int64_t number) {
    const auto field = [&](std::string_view name) -> int64_t {
        const double n = windows_field(s, name, "the Packets line", number).first;
        if (n > 9e15 || n != static_cast<double>(static_cast<int64_t>(n)))
            bad_ping(number, fmt::format("'{}' is not followed by a count", name));
        return static_cast<int64_t>(n);
    };
    p.transmitted = field("Sent = ");
    p.received = field("Received = ");
    const int64_t lost = field("Lost = ");
    if (p.received + lost != p.transmitted)
        bad_ping(number, fmt::format("Received {} and Lost {} do not add up to Sent {}", p.received,
                                     lost, p.transmitted));
    const size_t open = s.find('(');
    if (open != std::string_view::npos) {
        std::string_view rest = s.substr(open + 1);
        if (const auto pct = take_number(rest); pct && take_prefix(rest, "% loss")) {
            if (*pct > 100) bad_ping(number, fmt::format("{}% loss is more than all", *pct));
            p.printed_loss_pct = *pct;
        }
    }
}

// "Minimum = 0ms, Maximum = 1ms, Average = 0ms"
void parse_windows_rtt(PingTest& p, std::string_view s, int64_t number) {
    const auto field = [&](std::string_view name) -> double {
        auto [ms, rest] = windows_field(s, name, "the round-trip line", number);
        if (!take_prefix(rest, "ms"))
            bad_ping(number, fmt::format("'{}' is not followed by a time in ms", name));
        return ms;
    };
    p.rtt_min_ms = field("Minimum = ");
    p.rtt_max_ms = field("Maximum = ");
    p.rtt_avg_ms = field("Average = ");
}

// A long run keeps every 2nd, 4th, … reply: the plot needs their shape, not each one.
struct KeepFirst {
    PingReply operator()(const PingReply& a, size_t, const PingReply&, size_t) const { return a; }
};

class PingReader : public RunReader {
  public:
    void line(std::string_view t, int64_t number) override {
        last_line_ = number;
        if (read_statistics(t, number)) return;
        if (state_ == State::replies && reply(t)) return;
        if (read_header(t, number)) return;
        if (state_ == State::replies) read_other_reply_line(t, number);
    }

    // The statistics under the summary header: the counts line, then the round-trip times.
    // Gives whether the line was one of them.
    bool read_statistics(std::string_view t, int64_t number) {
        switch (state_) {
            case State::counts:
                if (windows_)
                    parse_windows_counts(test_, t, number);
                else
                    parse_counts(test_, t, number);
                state_ = State::rtt;
                return true;
            case State::rtt:
                if (windows_ && t == "Approximate round trip times in milli-seconds:") return true;
                state_ = State::done;
                if (windows_ && t.starts_with("Minimum = ")) {
                    parse_windows_rtt(test_, t, number);
                    return true;
                }
                if (!windows_ && (t.starts_with("rtt ") || t.starts_with("round-trip "))) {
                    rtt_names_ = t.substr(0, t.find(" = "));
                    parse_rtt(test_, t, number);
                    return true;
                }
                return false;
            case State::replies:
            case State::done:
                return false;
        }
        return false;
    }

    // The headers: a run's first line (ping's, KAME's, Windows') and its summary's. Gives
    // whether the line was one.
    bool read_header(std::string_view t, int64_t number) {
        if (t.starts_with("PING ") || kame_header(t)) {
            read_any_ = true;
            header_ = t;
            return true;
        }
        if (windows_header(t)) {
            read_any_ = windows_ = true;
            return true;
        }
        if (summary_header(t) || windows_summary_header(t)) {
            read_any_ = true;
            windows_ = windows_summary_header(t);
            const std::string_view target =
                windows_ ? t.substr(20, t.size() - 21) : summary_target(t);
            test_.target = std::string(target.substr(0, 200));
            summary_line_ = number;
            state_ = State::counts;
            return true;
        }
        return false;
    }

    // A line among the replies that is no reply: an error, a lost request, another system's
    // reply, or ping failing.
    void read_other_reply_line(std::string_view t, int64_t number) {
        // iputils' "From 198.18.10.1 icmp_seq=1 Destination Host Unreachable", inetutils' "92
        // bytes from 198.18.10.1: Destination Host Unreachable": the first error, as printed.
        if (test_.error_text.empty() &&
            (t.starts_with("From ") || t.find(" bytes from ") != std::string_view::npos)) {
            const size_t at = t.find("Destination ");
            if (at != std::string_view::npos) test_.error_text = std::string(t.substr(at, 120));
        }
        if (t.starts_with("Request timeout for icmp_seq") ||
            t.starts_with("Request timeout for seq")) {
            request_timeout_ = true;  // macOS's ping (and ping6 --apple-time), per request lost
            return;
        }
        if (foreign_windows_reply(t)) {
            read_any_ = true;
            if (!foreign_line_) foreign_line_ = number;
            return;
        }
        if ((t.starts_with("ping: ") || t.starts_with("Ping request could not find host ") ||
             t.starts_with("PING: transmit failed")) &&
            failure_.empty()) {
            failure_ = std::string(t.substr(0, 500));
            read_any_ = true;
        }
    }

    bool next_run_starts(std::string_view t) const override {
        return read_any_ &&
               (t.starts_with("PING ") || kame_header(t) || windows_header(t) ||
                ((summary_header(t) || windows_summary_header(t)) && state_ != State::replies));
    }
    std::unique_ptr<RunReader> next_run() const override { return std::make_unique<PingReader>(); }
    bool empty() const override { return !read_any_; }
    int64_t last_line() const override { return last_line_; }

    std::optional<std::string> finish(const RunInfo& info, Measurements& out) override {
        if (state_ == State::counts)
            bad_ping(summary_line_,
                     "the ping statistics end after their header (truncated output?)");
        if (state_ == State::replies) {
            if (!failure_.empty()) {
                out.failures.push_back({info.source, Tool::ping, failure_});
                return std::nullopt;
            }
            if (foreign_line_)
                bad_ping(foreign_line_,
                         "Windows ping output in a language this reader does not know (it "
                         "reads English only): its replies (… TTL=…) are there, but their "
                         "words and its statistics' are not English; ping from Linux, macOS or "
                         "BSD can be read, and gives a finer RTT than Windows' whole "
                         "milliseconds too");
            return std::string(
                "no '--- HOST ping statistics ---' or 'Ping statistics for HOST:' summary "
                "(truncated, or not ping output)");
        }
        if (windows_) {
            // Its Received counts the ICMP errors it printed as replies; they are no echo.
            const int64_t counted = std::min(error_replies_, test_.received);
            test_.received -= counted;
            test_.errors = error_replies_;
            test_.errors_counted_as_received = counted;
            test_.rtt_resolution_ms = 1;
            if (test_.received == 0) test_.rtt_min_ms = test_.rtt_avg_ms = test_.rtt_max_ms = {};
        }
        if (test_.received > 0 && !test_.rtt_avg_ms)
            bad_ping(summary_line_ + 1, "replies were received but there is no rtt line");
        test_.source = info.source;
        test_.flavour = flavour();
        test_.label = "ping " + test_.target;
        if (info.command) test_.command = info.command->text;
        test_.replies = replies_.take();
        out.pings.push_back(std::move(test_));
        return std::nullopt;
    }

  private:
    bool reply(std::string_view t) {
        if (auto r = parse_reply(t)) {
            busybox_seq_ = busybox_seq_ || t.find(" seq=") != std::string_view::npos;
            replies_.push(*r);
            read_any_ = true;
            return true;
        }
        if (auto w = parse_windows_reply(t)) {
            read_any_ = windows_ = true;
            if (w->error) {
                ++error_replies_;
                if (test_.error_text.empty()) test_.error_text = std::string(w->error_text);
            } else {
                replies_.push(PingReply{++windows_seq_, *w->rtt_ms, false});
            }
            return true;
        }
        return false;
    }

    // What the lines say of the ping that printed them (ping.hpp).
    std::string flavour() const {
        if (windows_) return "Windows";
        // iputils: "PING h (a) 56(84) bytes of data." and, over IPv6, "PING h(a) 56 data
        // bytes"; the others: "PING h (a): 56 data bytes".
        const bool iputils_header =
            !header_.empty() && !kame_header(header_) &&
            (header_.ends_with("bytes of data.") || header_.find("): ") == std::string::npos);
        if (rtt_names_.starts_with("rtt ") || (rtt_names_.empty() && iputils_header))
            return "iputils";
        // KAME's ping6 (macOS, FreeBSD's) says std-dev too; OpenBSD's merged ping has no PING6.
        if (request_timeout_) return "macOS";
        if (kame_header(header_) || rtt_names_.ends_with("/stddev")) return "BSD-style";
        if (rtt_names_.ends_with("/std-dev")) return "OpenBSD";
        if (busybox_seq_ || rtt_names_ == "round-trip min/avg/max") return "busybox";
        return "BSD-style or busybox";
    }

    enum class State { replies, counts, rtt, done };
    State state_ = State::replies;
    PingTest test_;
    BoundedSeries<PingReply, KeepFirst> replies_;
    std::string header_;
    std::string rtt_names_;  // "rtt min/avg/max/mdev", "round-trip min/avg/max", …
    std::string failure_;
    bool read_any_ = false;
    bool windows_ = false;
    bool busybox_seq_ = false;
    bool request_timeout_ = false;
    int64_t windows_seq_ = 0;
    int64_t error_replies_ = 0;
    int64_t foreign_line_ = 0;
    int64_t summary_line_ = 0;
    int64_t last_line_ = 0;
};

}  // namespace

bool ping_header(std::string_view line) {
    return (line.starts_with("PING ") && line.find(" bytes") != std::string_view::npos) ||
           kame_header(line) || summary_header(line) || windows_header(line) ||
           windows_summary_header(line);
}

bool ping_line(std::string_view line) {
    return ping_header(line) || parse_reply(line).has_value() ||
           parse_windows_reply(line).has_value() || foreign_windows_reply(line);
}

std::unique_ptr<RunReader> make_ping_reader() {
    return std::make_unique<PingReader>();
}

}  // namespace np
