#include "analysis/explanation/bursts.hpp"

#include <algorithm>

namespace np {

namespace {

double bin_bps(uint64_t bytes, int64_t bin_ms) {
    return double(bytes) * 8.0 * 1000.0 / double(bin_ms);
}

}  // namespace

std::optional<BinRates> bin_rates(const std::vector<uint64_t>& bins, int64_t bin_ms) {
    const auto first = std::find_if(bins.begin(), bins.end(), [](uint64_t b) { return b > 0; });
    if (first == bins.end() || bin_ms <= 0) return std::nullopt;
    const auto last = std::find_if(bins.rbegin(), bins.rend(), [](uint64_t b) { return b > 0; });
    BinRates r;
    r.span_ms = (bins.rend() - last - (first - bins.begin())) * bin_ms;
    uint64_t bytes = 0, peak = 0;
    std::vector<uint64_t> windows;
    for (auto it = first; it != last.base(); ++it) {
        bytes += *it;
        peak = std::max(peak, *it);
        if (it + 1 != last.base() && *it + *(it + 1) > 0) windows.push_back(*it + *(it + 1));
    }
    if (windows.empty()) {  // a single bin moved
        r.busy_bps = bin_bps(peak, bin_ms);
    } else {
        const size_t at = windows.size() * 9 / 10;
        std::nth_element(windows.begin(), windows.begin() + static_cast<std::ptrdiff_t>(at),
                         windows.end());
        r.busy_bps = bin_bps(windows[at], 2 * bin_ms);
    }
    r.mean_bps = double(bytes) * 8.0 * 1000.0 / double(r.span_ms);
    r.peak_bps = bin_bps(peak, bin_ms);
    return r;
}

Bursts bursts_above(const std::vector<uint64_t>& bins, int64_t bin_ms, double bps) {
    Bursts b;
    uint64_t run_bytes = 0;
    int64_t run_ms = 0;
    for (const uint64_t bytes : bins) {
        if (bin_ms > 0 && bin_bps(bytes, bin_ms) > bps) {
            ++b.bins_above;
            b.excess_bytes += bytes - static_cast<uint64_t>(bps * double(bin_ms) / 8000.0);
            run_bytes += bytes;
            run_ms += bin_ms;
            if (run_bytes > b.largest_bytes) b.largest_bytes = run_bytes, b.largest_ms = run_ms;
        } else {
            run_bytes = 0;
            run_ms = 0;
        }
    }
    return b;
}

Pause longest_pause(const std::vector<uint64_t>& bins, int64_t bin_ms) {
    Pause longest;
    const auto first = std::find_if(bins.begin(), bins.end(), [](uint64_t b) { return b > 0; });
    for (auto it = first; it != bins.end();) {
        const auto moved = std::find_if(it, bins.end(), [](uint64_t b) { return b > 0; });
        if (moved == bins.end()) break;  // the run after the last that moved is no pause
        const int64_t ms = (moved - it) * bin_ms;
        if (ms > longest.ms) longest = {(it - bins.begin()) * bin_ms, ms};
        it = std::find(moved, bins.end(), uint64_t{0});
    }
    return longest;
}

}  // namespace np
