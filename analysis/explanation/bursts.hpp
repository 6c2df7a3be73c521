#pragma once
// The measured flow at 1 ms scale (PhaseBins): its mean rate against its peaks, and the bursts
// that ran above a rate — what iperf3's 100 ms intervals average away.
#include <cstdint>
#include <optional>
#include <vector>

namespace np {

struct BinRates {
    int64_t span_ms = 0;  // from the first bin that moved to the last
    double mean_bps = 0;  // wire bits per second over the span
    double peak_bps = 0;  // the busiest bin's
    // The rate the flow ran at while it moved: the 90th percentile of the 2 ms windows (two
    // neighbouring bins) that held any of it. A receiver's softirq hands on a backlog at once, a
    // sender a whole GSO skb, and bins from probes before 2026-12-07 came from a timer that could
    // fire late: each makes a lone bin or window busier than the path ever ran, and the
    // percentile sets those aside. What a path drains at is read from this where the flow
    // arrives.
    double busy_bps = 0;
};

// Over the bins from the first that moved to the last; empty when none moved.
std::optional<BinRates> bin_rates(const std::vector<uint64_t>& bins, int64_t bin_ms);

struct Bursts {
    int64_t bins_above = 0;      // bins that ran above the rate
    uint64_t largest_bytes = 0;  // the most bytes of one run of such bins, back to back
    int64_t largest_ms = 0;      // that run's length
    uint64_t excess_bytes = 0;   // what those bins held above the rate: more than it carries
};

// The runs of consecutive bins above `bps`.
Bursts bursts_above(const std::vector<uint64_t>& bins, int64_t bin_ms, double bps);

// The longest run of bins that moved nothing, between the first that moved and the last: where
// it began (ms from the first bin) and how long it was; none when nothing moved or nothing paused.
struct Pause {
    int64_t at_ms = 0;
    int64_t ms = 0;
};
Pause longest_pause(const std::vector<uint64_t>& bins, int64_t bin_ms);

}  // namespace np
