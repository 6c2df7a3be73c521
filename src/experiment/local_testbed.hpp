#pragma once
// `run --local`: the two-node testbed of scripts/testbed.sh (network namespaces node1-1 and
// node1-2 with their own sshd) for the lifetime of this object.
#include <string>

namespace np::experiment {

class LocalTestbed {
  public:
    // Brings the testbed up with `profile` (100M, 1G, unshaped); throws EnvironmentError
    // when it cannot (not root, sshd missing), InputError for an unknown profile, Interrupted
    // on Ctrl-C meanwhile (having removed what came up).
    explicit LocalTestbed(const std::string& profile);
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
    std::string script_;
    std::string state_;
};

}  // namespace np::experiment
