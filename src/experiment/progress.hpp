#pragma once
// One status line on a terminal while a phase runs: the phase, elapsed/expected seconds and the
// live wire rate from the probe samples. Silent when disabled (not a terminal, or --json).
#include <chrono>
#include <optional>
#include <string>

namespace np::experiment {

class Progress {
  public:
    explicit Progress(bool enabled) : enabled_(enabled) {}
    ~Progress() { clear(); }
    void step(const std::string& what);  // a one-off step: "configuring enp0s25 on node1-1"
    void update(const std::string& phase, double elapsed_s, double expected_s,
                std::optional<double> wire_bps);
    void clear();
    bool enabled() const { return enabled_; }

  private:
    bool enabled_;
    bool shown_ = false;
    std::chrono::steady_clock::time_point last_{};
    std::optional<double> last_rate_;
};

}  // namespace np::experiment
