// What the rules share (rules.hpp): their words for rates, drops and loss, and the readings of a
// throughput test that more than one rule makes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {

std::string mbps(double bps) {
    return fmt::format("{:.2f}", bps / 1e6);
}

std::string rate_text(double bps, double resolution) {
    if (resolution > 0) {
        const double unit = bps >= 1e9 ? 1e9 : 1e6;
        const int decimals =
            std::clamp(static_cast<int>(std::lround(-std::log10(2 * resolution / unit))), 0, 3);
        return fmt::format("{:.{}f} {}", bps / unit, decimals, unit == 1e9 ? "Gbit/s" : "Mbit/s");
    }
    return format_rate(bps);
}

std::string wire_text(double bps) {
    return bps >= 1e9 ? fmt::format("{:.3f} Gbit/s", bps / 1e9) : format_rate(bps);
}

std::optional<double> recomputed_loss_pct(const ThroughputTest& t) {
    if (!t.datagrams_lost || !t.datagrams_total || *t.datagrams_total <= 0) return std::nullopt;
    return 100.0 * static_cast<double>(*t.datagrams_lost) / static_cast<double>(*t.datagrams_total);
}

std::string describe_drops(const std::vector<LedgerDrop>& drops) {
    std::string s;
    for (const auto& d : drops) {
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", format_count(double(d.packets)),
                         d.reason.empty() ? "without a trace of them" : d.reason);
        if (!d.node.empty()) s += " on " + d.node;
    }
    return s;
}

std::string describe_loss(const Ledger& l) {
    std::string s;
    for (Stage st : {Stage::sender_stack, Stage::sender_queue, Stage::wire, Stage::receiver_nic,
                     Stage::receiver_filter, Stage::receiver_ip, Stage::receiver_socket,
                     Stage::receiver_tcp, Stage::unknown}) {
        const uint64_t n = l.lost_in(st);
        if (n == 0) continue;
        std::vector<LedgerDrop> here;
        for (const auto& d : l.drops)
            if (d.stage == st && !d.housekeeping) here.push_back(d);
        s += fmt::format("{}{} at {} ({})", s.empty() ? "" : "; ", format_count(double(n)),
                         to_string(st), describe_drops(here));
    }
    for (const auto& p : l.points) {
        if (p.unattributed > 0)
            s += fmt::format("{}{} missing before '{}' with no drop to name", s.empty() ? "" : "; ",
                             format_count(double(p.unattributed)), p.label);
    }
    return s;
}

std::string pct_number(double pct) {
    return fmt::format("{:.2f}", pct);
}

std::string link_words(const TestEvidence& v) {
    return fmt::format("{} {}", format_link_rate(v.model_bps()), v.path_bps ? "path" : "link");
}

bool is_udp(const ThroughputTest& t) {
    return t.transport == Transport::udp;
}

bool reached_offered(const ThroughputTest& t) {
    return t.offered_bps && t.sent_bps &&
           *t.sent_bps + t.rate_resolution_bps >= *t.offered_bps * kSenderShortfall;
}

uint64_t counted_frames(const Ledger& l) {
    uint64_t frames = 0;
    for (const auto& p : l.points)
        if (p.count) frames = std::max(frames, *p.count);
    return frames;
}

bool ledger_shows_loss(const Ledger& l) {
    return l.lost() + l.unattributed() > ledger_slack(counted_frames(l));
}

std::optional<double> tcp_tail_bytes(const TestEvidence& v) {
    const auto& t = v.test;
    if (t.transport != Transport::tcp || !v.ceiling || !t.received_bps || !t.sent_bps ||
        !t.sent_bytes || !t.received_bytes || *t.sent_bytes <= *t.received_bytes)
        return std::nullopt;
    const double floor = v.ceiling->goodput_bps * kLineRateFraction;
    const double res = t.rate_resolution_bps;
    if (*t.received_bps + res >= floor || *t.sent_bps + res < floor) return std::nullopt;
    if (v.ledger && v.ledger->complete() ? ledger_shows_loss(*v.ledger)
                                         : t.retransmits.value_or(1) != 0)
        return std::nullopt;
    // A receiver held back by its cgroup's CPU limit had not read what waited in its socket:
    // that is its tool's pace, not the test being cut (the receiver is named, rules below).
    if (v.traces.receiver && starved_tool(*v.traces.receiver)) return std::nullopt;
    return *t.sent_bytes - *t.received_bytes;
}

}  // namespace np::rules
