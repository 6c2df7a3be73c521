#pragma once
// Writing a run dir (its layout: common/run_dir.hpp); the readers are rundir/reader.hpp.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/output_file.hpp"

namespace np {

// The run dir as the run fills it. Each file is saved as soon as what it holds exists (a test's
// raw output when the test ends, a node's closed phases when the next phase is announced, its
// trace when the probe hands it over) and replaced whole: written to a temp file in the same
// dir, then renamed over the name, so a run killed at any point (SIGKILL, a lost node, a
// full disk) leaves every file either absent or complete, and a symlink planted at a name is
// replaced, never followed. <mode>_phases.json says which phases finished and where the run
// was, for a run that could not say so itself.
class RunDirWriter {
  public:
    // Opened once (PrivateDir): every file is written relative to it.
    RunDirWriter(std::filesystem::path dir, std::string mode);
    // Replaced whole (common/output_file.hpp); EnvironmentError naming the file and why
    // (e.g. "No space left on device").
    std::filesystem::path save(const std::string& name, const std::string& text);
    void remove(const std::string& name);
    bool saved(const std::string& name) const { return saved_.count(name) > 0; }

    // The phase the run is in, saved before its work starts; done() when it finished.
    void begin(const std::string& phase);
    void done(const std::string& phase);
    const std::string& current() const { return current_; }
    // <mode>_phases.json: "running", "stopped" (with why) or "complete".
    void save_phases(const std::string& state, const std::string& stopped = {});
    // Every file saved, in the order first saved.
    const std::vector<std::filesystem::path>& files() const { return files_; }

  private:
    PrivateDir dir_;
    std::string mode_;
    std::set<std::string> saved_;
    std::vector<std::filesystem::path> files_;
    std::vector<std::string> finished_;
    std::string current_;
};

}  // namespace np
