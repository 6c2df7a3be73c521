#include "analysis/ping.hpp"

#include <fmt/format.h>

#include "analysis/series.hpp"
#include "analysis/text.hpp"
#include "src/common/errors.hpp"

namespace np {
namespace {

using text::take_number;
using text::take_prefix;

[[noreturn]] void bad_ping(int64_t line, const std::string& what) {
    throw InputError("ping", what, line);
}

bool summary_header(std::string_view s) {
    return s.starts_with("--- ") && s.ends_with(" ping statistics ---") && s.size() > 24;
}

// "10 packets transmitted, 9 received, +1 duplicates, +2 errors, 10% packet loss, time 9013ms"
// (iputils) or "3 packets transmitted, 3 packets received, 1 duplicates, 0% packet loss"
// (busybox): comma-separated "N word…" items.
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

// "rtt min/avg/max/mdev = 0.030/0.045/0.061/0.009 ms" or
// "round-trip min/avg/max = 0.095/0.113/0.123 ms".
void parse_rtt(PingTest& p, std::string_view s, int64_t number) {
    const size_t eq = s.find('=');
    if (eq == std::string_view::npos) bad_ping(number, "the rtt line has no '='");
    const std::string_view names = text::trim(s.substr(0, eq));
    s.remove_prefix(eq + 1);
    const bool with_mdev = names.ends_with("/mdev");
    std::optional<double> v[4];
    const int count = with_mdev ? 4 : 3;
    for (int i = 0; i < count; ++i) {
        if (i > 0 && !take_prefix(s, "/")) bad_ping(number, "the rtt line is truncated");
        v[i] = take_number(s);
        if (!v[i] || *v[i] < 0) bad_ping(number, "the rtt line has a value that is not a time");
    }
    if (!take_prefix(s, "ms")) bad_ping(number, "the rtt line does not end in ms");
    p.rtt_min_ms = v[0];
    p.rtt_avg_ms = v[1];
    p.rtt_max_ms = v[2];
    if (with_mdev) p.rtt_mdev_ms = v[3];
}

// "64 bytes from 198.18.10.2: icmp_seq=3 ttl=64 time=0.054 ms" (iputils; "time=105 ms" from
// 100 ms up; " (DUP!)" after a duplicate) or "…: seq=0 ttl=64 time=0.095 ms" (busybox).
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

// A long run keeps every 2nd, 4th, … reply: the plot needs their shape, not each one.
struct KeepFirst {
    PingReply operator()(const PingReply& a, size_t, const PingReply&, size_t) const { return a; }
};

class PingReader : public RunReader {
  public:
    void line(std::string_view t, int64_t number) override {
        last_line_ = number;
        switch (state_) {
            case State::counts:
                parse_counts(test_, t, number);
                state_ = State::rtt;
                return;
            case State::rtt:
                state_ = State::done;
                if (t.starts_with("rtt ") || t.starts_with("round-trip ")) {
                    parse_rtt(test_, t, number);
                    return;
                }
                break;
            case State::replies:
            case State::done:
                break;
        }
        if (state_ == State::replies) {
            if (auto reply = parse_reply(t)) {
                replies_.push(*reply);
                read_any_ = true;
                return;
            }
        }
        if (t.starts_with("PING ")) {
            read_any_ = true;
            // busybox's header is "PING host (addr): 56 data bytes"; iputils' says "bytes of data".
            flavour_ = t.ends_with("data bytes") ? "busybox" : "iputils";
            return;
        }
        if (summary_header(t)) {
            read_any_ = true;
            test_.target = std::string(t.substr(4, t.size() - 4 - 20).substr(0, 200));
            summary_line_ = number;
            state_ = State::counts;
            return;
        }
        if (t.starts_with("ping: ") && state_ == State::replies && failure_.empty()) {
            failure_ = std::string(t.substr(0, 500));
            read_any_ = true;
        }
    }

    bool next_run_starts(std::string_view t) const override {
        return read_any_ &&
               (t.starts_with("PING ") || (summary_header(t) && state_ != State::replies));
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
            return std::string(
                "no '--- HOST ping statistics ---' summary (truncated, or not ping output)");
        }
        if (test_.received > 0 && !test_.rtt_avg_ms)
            bad_ping(summary_line_ + 1, "replies were received but there is no rtt line");
        test_.source = info.source;
        test_.flavour = flavour_;
        test_.label = "ping " + test_.target;
        if (info.command) test_.command = info.command->text;
        test_.replies = replies_.take();
        out.pings.push_back(std::move(test_));
        return std::nullopt;
    }

  private:
    enum class State { replies, counts, rtt, done };
    State state_ = State::replies;
    PingTest test_;
    BoundedSeries<PingReply, KeepFirst> replies_;
    std::string flavour_ = "iputils";
    std::string failure_;
    bool read_any_ = false;
    int64_t summary_line_ = 0;
    int64_t last_line_ = 0;
};

}  // namespace

bool ping_header(std::string_view line) {
    return (line.starts_with("PING ") && line.find(" bytes") != std::string_view::npos) ||
           summary_header(line);
}

bool ping_line(std::string_view line) {
    return ping_header(line) || parse_reply(line).has_value();
}

std::unique_ptr<RunReader> make_ping_reader() {
    return std::make_unique<PingReader>();
}

}  // namespace np
