#include "src/experiment/interrupt.hpp"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace np::experiment {
namespace {

std::atomic<int> g_signal{0};
int g_depth = 0;  // guards nest: only the outermost installs and restores
struct sigaction g_previous[3];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

void on_signal(int sig) {
    g_signal.store(sig);
}

}  // namespace

InterruptGuard::InterruptGuard() {
    if (g_depth++ > 0) return;
    g_signal.store(0);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns and the loop sees the signal
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
    // A node that goes away mid-write must not kill us before teardown.
    std::signal(SIGPIPE, SIG_IGN);
}

InterruptGuard::~InterruptGuard() {
    if (--g_depth > 0) return;
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

int interrupt_signal() {
    return g_signal.load();
}

std::string signal_name(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    return abbrev ? fmt::format("SIG{}", abbrev) : std::to_string(sig);
}

void throw_if_interrupted(const std::string& during) {
    if (const int sig = g_signal.load()) {
        throw Interrupted(fmt::format("interrupted by {} during {}", signal_name(sig), during),
                          sig);
    }
}

}  // namespace np::experiment
