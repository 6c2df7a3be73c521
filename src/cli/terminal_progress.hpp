#pragma once
// np-explain run's status line on a terminal while a run goes on: the step, or the phase with
// its elapsed and expected seconds and the live wire rate, redrawn in place (at most five times
// a second) and erased when it is over. Only when stdout is a terminal and not --json.
#include <chrono>
#include <optional>
#include <string>

#include "src/experiment/experiment.hpp"

namespace np::cli {

class TerminalProgress : public experiment::ProgressSink {
  public:
    ~TerminalProgress() override { clear(); }
    void step(const std::string& what) override;
    void phase(const std::string& name, double elapsed_s, double expected_s,
               std::optional<double> wire_bps) override;
    void clear() override;

  private:
    bool shown_ = false;
    std::chrono::steady_clock::time_point last_{};
    std::optional<double> last_rate_;
};

}  // namespace np::cli
