#include "analysis/ping.hpp"

#include <fmt/format.h>

#include "analysis/error.hpp"
#include "analysis/text.hpp"

namespace np {
namespace {

using text::take_number;
using text::take_prefix;

[[noreturn]] void bad(int line, const std::string& what) {
    throw InputError("ping", what, line);
}

// "10 packets transmitted, 9 received, +1 duplicates, +2 errors, 10% packet loss, time 9013ms"
// (iputils) or "3 packets transmitted, 3 packets received, 1 duplicates, 0% packet loss"
// (busybox): comma-separated "N word…" items.
void parse_counts(PingTest& p, const text::Line& l) {
    std::string_view rest = l.text;
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
        if (!n) bad(l.number, fmt::format("'{}' is not a count in the ping summary", item));
        if (*n < 0 || *n > 9e15) bad(l.number, fmt::format("'{}' is out of range", item));
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
            p.printed_loss_pct = *n;
        }
        // Anything else ("pipe 4" comes on its own line; future items) is not needed.
    }
    if (!saw_transmitted || !saw_received)
        bad(l.number, "the ping summary lacks 'packets transmitted' or 'received'");
    if (p.received > p.transmitted + p.duplicates)
        bad(l.number, "more replies received than requests transmitted");
}

// "rtt min/avg/max/mdev = 0.030/0.045/0.061/0.009 ms" or
// "round-trip min/avg/max = 0.095/0.113/0.123 ms".
void parse_rtt(PingTest& p, const text::Line& l) {
    std::string_view s = l.text;
    const size_t eq = s.find('=');
    if (eq == std::string_view::npos) bad(l.number, "the rtt line has no '='");
    const std::string_view names = text::trim(s.substr(0, eq));
    s.remove_prefix(eq + 1);
    const bool with_mdev = names.ends_with("/mdev");
    std::optional<double> v[4];
    const int count = with_mdev ? 4 : 3;
    for (int i = 0; i < count; ++i) {
        if (i > 0 && !take_prefix(s, "/")) bad(l.number, "the rtt line is truncated");
        v[i] = take_number(s);
        if (!v[i] || *v[i] < 0) bad(l.number, "the rtt line has a value that is not a time");
    }
    if (!take_prefix(s, "ms")) bad(l.number, "the rtt line does not end in ms");
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

}  // namespace

std::vector<PingTest> parse_ping(std::string_view input, const std::string& source) {
    text::require_text(input, "ping", "ping output", kMaxPingTextBytes);
    const auto lines = text::split_lines(input);
    std::vector<PingTest> tests;
    std::string flavour = "iputils";
    std::vector<PingReply> replies;  // of the run whose summary comes next
    for (size_t i = 0; i < lines.size(); ++i) {
        const auto& l = lines[i];
        if (l.text.starts_with("PING ")) replies.clear();
        if (auto reply = parse_reply(l.text)) {
            replies.push_back(*reply);
            continue;
        }
        // busybox's header is "PING host (addr): 56 data bytes"; iputils' says "bytes of data".
        if (l.text.starts_with("PING ") && l.text.ends_with("data bytes")) flavour = "busybox";
        if (l.text.starts_with("PING ") && l.text.find("bytes of data") != std::string_view::npos)
            flavour = "iputils";
        if (!(l.text.starts_with("--- ") && l.text.ends_with(" ping statistics ---"))) continue;
        PingTest p;
        p.source = source;
        p.flavour = flavour;
        p.target = std::string(l.text.substr(4, l.text.size() - 4 - 20));
        p.label = "ping " + p.target;
        p.replies = std::move(replies);
        replies.clear();
        if (i + 1 >= lines.size())
            bad(l.number, "the ping statistics end after their header (truncated output?)");
        parse_counts(p, lines[++i]);
        if (i + 1 < lines.size()) {
            const auto& next = lines[i + 1];
            if (next.text.starts_with("rtt ") || next.text.starts_with("round-trip ")) {
                parse_rtt(p, next);
                ++i;
            }
        }
        if (p.received > 0 && !p.rtt_avg_ms)
            bad(lines[i].number, "replies were received but there is no rtt line");
        tests.push_back(std::move(p));
    }
    if (tests.empty())
        bad(static_cast<int>(lines.size()),
            "no '--- HOST ping statistics ---' summary (truncated, or not ping output)");
    return tests;
}

}  // namespace np
