#pragma once
// Ctrl-C, SIGTERM and SIGHUP during a run: the handler only records the signal; the run loop
// notices it between steps, throws Interrupted, and scope-based teardown does the rest.
#include <stdexcept>
#include <string>

namespace np::experiment {

class Interrupted : public std::runtime_error {
  public:
    Interrupted(const std::string& what, int signal) : std::runtime_error(what), signal_(signal) {}
    int signal() const { return signal_; }  // SIGINT, SIGTERM or SIGHUP

  private:
    int signal_;
};

// Installs the handlers for the lifetime of this object and restores the previous ones. Guards
// nest: an inner one (run_experiment's inside `run --local`) keeps a signal the outer saw.
class InterruptGuard {
  public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// The signal received since the guard was installed, 0 when none.
int interrupt_signal();
// "SIGINT" for SIGINT.
std::string signal_name(int sig);
// Throws Interrupted naming the signal and `during` ("the tcp phase") if one arrived.
void throw_if_interrupted(const std::string& during);

}  // namespace np::experiment
