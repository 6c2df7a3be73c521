#include "src/experiment/progress.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "analysis/explanation/format.hpp"

namespace np::experiment {

void Progress::step(const std::string& what) {
    if (!enabled_) return;
    fmt::print("\r\033[K{}", what);
    std::fflush(stdout);
    shown_ = true;
}

void Progress::update(const std::string& phase, double elapsed_s, double expected_s,
                      std::optional<double> wire_bps) {
    if (!enabled_) return;
    if (wire_bps) last_rate_ = wire_bps;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double remaining = expected_s > elapsed_s ? expected_s - elapsed_s : 0;
    fmt::print("\r\033[K[{}] {:.1f} s elapsed, ~{:.0f} s left{}", phase, elapsed_s, remaining,
               last_rate_ ? fmt::format(", {} on the wire", format_rate(*last_rate_)) : "");
    std::fflush(stdout);
    shown_ = true;
}

void Progress::clear() {
    if (!enabled_ || !shown_) return;
    fmt::print("\r\033[K");
    std::fflush(stdout);
    shown_ = false;
}

}  // namespace np::experiment
