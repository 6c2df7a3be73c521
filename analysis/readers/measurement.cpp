#include "analysis/readers/measurement.hpp"

#include <iterator>

namespace np {

const char* to_string(Tool t) {
    switch (t) {
        case Tool::iperf3:
            return "iperf3";
        case Tool::iperf2:
            return "iperf2";
        case Tool::ping:
            return "ping";
    }
    return "iperf3";
}

std::string platform_of(std::string_view uname) {
    const std::string_view word = uname.substr(0, uname.find(' '));
    if (word == "Linux") return "Linux";
    if (word == "Darwin") return "macOS";
    if (word == "FreeBSD" || word == "OpenBSD" || word == "NetBSD" || word == "DragonFly")
        return std::string(word);
    if (word.starts_with("CYGWIN_NT") || word.starts_with("MSYS_NT") || word.starts_with("MINGW") ||
        word == "Windows")
        return "Windows";
    return "";
}

namespace {
constexpr int64_t kInt32Max = 2147483647;

bool impossible_udp_counts(std::optional<int64_t> lost, std::optional<int64_t> total,
                           std::optional<double> printed_pct) {
    if (lost && *lost < 0) return true;
    if (total && *total < 0) return true;
    if (lost && total && *lost > *total) return true;
    // A counter stuck at the largest signed 32-bit number ("0/2147483647"): no real count.
    if ((lost && *lost == kInt32Max) || (total && *total == kInt32Max)) return true;
    return printed_pct && (*printed_pct < 0 || *printed_pct > 100);
}

}  // namespace

void set_receiver_loss_counts(ThroughputTest& t, std::optional<int64_t> lost,
                              std::optional<int64_t> total, std::optional<double> printed_pct,
                              const std::string& text, std::string_view where) {
    if (impossible_udp_counts(lost, total, printed_pct)) {
        t.impossible_counts = ThroughputTest::ImpossibleCounts{
            lost, total, printed_pct, where.empty() ? text : std::string(where) + ": " + text};
        return;
    }
    t.datagrams_lost = lost;
    t.datagrams_total = total;
    t.printed_loss_pct = printed_pct;
    t.printed_loss_text = text;
}

ThroughputTest stream_test(const ThroughputTest& t, const ThroughputTest::Stream& s) {
    ThroughputTest one = t;
    one.per_stream.clear();
    one.interval_bps.clear();
    one.label = t.label + " stream " + std::to_string(s.port);
    one.streams = 1;
    if (t.offered_bps && t.streams > 0) one.offered_bps = *t.offered_bps / t.streams;
    const auto rate = [&](const std::optional<double>& bytes) -> std::optional<double> {
        if (!bytes || t.duration_s <= 0) return std::nullopt;
        return *bytes * 8 / t.duration_s;
    };
    one.sent_bytes = s.sent_bytes;
    one.received_bytes = s.received_bytes;
    one.sent_bps = rate(s.sent_bytes);
    one.received_bps = rate(s.received_bytes);
    one.retransmits = s.retransmits;
    one.datagrams_sent = s.datagrams_sent;
    one.datagrams_lost.reset();
    one.datagrams_total.reset();
    one.printed_loss_pct.reset();
    one.printed_loss_text.clear();
    one.impossible_counts.reset();
    if (t.transport == Transport::udp) {
        set_receiver_loss_counts(one, s.datagrams_lost, s.datagrams_total, std::nullopt, "");
    }
    return one;
}

std::string tool_text(const std::string& version, const std::string& platform) {
    if (version.empty() && platform.empty()) return "";
    if (platform.empty()) return version;
    return (version.empty() ? std::string("the tool") : version) + " on " + platform;
}

void Measurements::append(Measurements other) {
    throughput.insert(throughput.end(), std::make_move_iterator(other.throughput.begin()),
                      std::make_move_iterator(other.throughput.end()));
    pings.insert(pings.end(), std::make_move_iterator(other.pings.begin()),
                 std::make_move_iterator(other.pings.end()));
    failures.insert(failures.end(), std::make_move_iterator(other.failures.begin()),
                    std::make_move_iterator(other.failures.end()));
    servers.insert(servers.end(), std::make_move_iterator(other.servers.begin()),
                   std::make_move_iterator(other.servers.end()));
    notes.insert(notes.end(), std::make_move_iterator(other.notes.begin()),
                 std::make_move_iterator(other.notes.end()));
}

}  // namespace np
