#pragma once
// `run --local`: the two-node testbed of scripts/testbed.sh (network namespaces node1-1 and
// node1-2 with their own sshd) for the lifetime of this object.
#include <string>

#include "src/experiment/cleanup_report.hpp"

namespace np::experiment {

// The local testbed held by one np-explain process: an flock on /run/np-explain-testbed.lock,
// released by the kernel when that process ends however it ends. `run --local` holds it while
// its testbed is up, `teardown --local` while it takes one down; a second refuses, naming the
// holder from what the file says.
class LocalTestbedLock {
  public:
    // `holder`: who asks (lock_holder()). Throws EnvironmentError when another holds it.
    explicit LocalTestbedLock(const std::string& holder);
    ~LocalTestbedLock();
    LocalTestbedLock(const LocalTestbedLock&) = delete;
    LocalTestbedLock& operator=(const LocalTestbedLock&) = delete;

  private:
    int fd_ = -1;
};

class LocalTestbed {
  public:
    // Brings the testbed up with `profile` (100M, 1G, unshaped) over IP version `family` ("4",
    // "6"); throws EnvironmentError when it cannot (not root, sshd missing), InputError for an
    // unknown profile or family, Interrupted on Ctrl-C meanwhile (having removed what came up).
    // `report`: where its removal, when it fails, is said (with the command that finishes it).
    LocalTestbed(const std::string& profile, const std::string& family, CleanupReport report);
    ~LocalTestbed();
    LocalTestbed(const LocalTestbed&) = delete;
    LocalTestbed& operator=(const LocalTestbed&) = delete;

    // Whether a testbed of `run --local` is up (a run killed with SIGKILL leaves it), its
    // ssh_config, and taking it down: what `teardown --local` does.
    static bool is_up();
    static std::string up_ssh_config();
    static void take_down();

    const std::string& state_dir() const { return state_; }
    std::string ssh_config() const { return state_ + "/ssh_config"; }
    std::string params_file() const { return state_ + "/params.yml"; }

  private:
    LocalTestbedLock lock_;
    CleanupReport report_;
    std::string script_;
    std::string state_;
};

}  // namespace np::experiment
