#pragma once
// The run's side of its progress: what the phases report goes to the caller's ProgressSink
// (experiment.hpp), or nowhere when there is none. The runner draws nothing itself.
#include <optional>
#include <string>

#include "src/experiment/experiment.hpp"

namespace np::experiment {

class Progress {
  public:
    explicit Progress(ProgressSink* sink) : sink_(sink) {}
    ~Progress() { clear(); }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    void step(const std::string& what) {
        if (sink_) sink_->step(what);
    }
    void update(const std::string& phase, double elapsed_s, double expected_s,
                std::optional<double> wire_bps) {
        if (sink_) sink_->phase(phase, elapsed_s, expected_s, wire_bps);
    }
    void clear() {
        if (sink_) sink_->clear();
    }
    // Whether anyone is shown the progress (the live rate is asked of the probe only then).
    bool enabled() const { return sink_ != nullptr; }

  private:
    ProgressSink* sink_;
};

}  // namespace np::experiment
