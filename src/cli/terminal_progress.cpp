#include "src/cli/terminal_progress.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "analysis/explanation/format.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {

void TerminalProgress::step(const std::string& what) {
    std::fputs("\r\033[K", stdout);
    print_text(what);  // node and interface names come from the user's files
    std::fflush(stdout);
    shown_ = true;
}

void TerminalProgress::phase(const std::string& name, double elapsed_s, double expected_s,
                             std::optional<double> wire_bps) {
    if (wire_bps) last_rate_ = wire_bps;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double remaining = expected_s > elapsed_s ? expected_s - elapsed_s : 0;
    fmt::print("\r\033[K[{}] {:.1f} s elapsed, ~{:.0f} s left{}", name, elapsed_s, remaining,
               last_rate_ ? fmt::format(", {} on the wire", format_rate(*last_rate_)) : "");
    std::fflush(stdout);
    shown_ = true;
}

void TerminalProgress::clear() {
    if (!shown_) return;
    fmt::print("\r\033[K");
    std::fflush(stdout);
    shown_ = false;
}

}  // namespace np::cli
