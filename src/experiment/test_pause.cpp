#include "src/experiment/test_pause.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "src/experiment/interrupt.hpp"

namespace np::experiment {

void test_pause_point(std::string_view phase) {
    const char* at = std::getenv("NP_EXPLAIN_TEST_PAUSE_AT");
    const char* resume = std::getenv("NP_EXPLAIN_TEST_RESUME_FILE");
    if (!at || !resume || phase != at) return;
    std::fprintf(stderr, "np-explain: test pause at %s (pid %d)\n", at, int(getpid()));
    std::fflush(stderr);
    // Polled, not a signal: the test resumes the run only after its fault took effect, and a
    // file is the one thing both sides can see without a race on who installed which handler.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(10);
    while (!std::filesystem::exists(resume) && interrupt_signal() == 0 &&
           std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace np::experiment
