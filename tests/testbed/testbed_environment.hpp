#pragma once
// The testbed (scripts/testbed.sh) for a test binary that needs one: the ctest fixture's when
// NP_TESTBED_STATE names it (tests/remote/CMakeLists.txt: testbed.up / testbed.down), else one
// this binary brings up in `own_state` and removes when it ends, also when tests fail.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/cli/run_command.hpp"

namespace np::testing {

// The state dir of the testbed in use: ssh_config, params.yml, keys, sshd pidfiles.
inline std::string& testbed_state_dir() {
    static std::string dir;
    return dir;
}

// `shell_delay_s`: how long the nodes' shell takes to start for this binary's tests (scripts/
// testbed.sh --slow-shell): the SSH and run tests hold the product to a slow node image; the
// suites that only need a testbed set 0 and take a fraction of the time.
class TestbedEnvironment : public ::testing::Environment {
  public:
    TestbedEnvironment(std::string own_state, std::string shell_delay_s)
        : own_state_(std::move(own_state)), shell_delay_s_(std::move(shell_delay_s)) {}
    void SetUp() override {
        if (const char* s = std::getenv("NP_TESTBED_STATE")) {
            testbed_state_dir() = s;
            const auto set = run_command({"bash", NP_SOURCE_DIR "/scripts/testbed.sh",
                                          "shell-delay", "--state", s, "--slow-shell",
                                          shell_delay_s_});
            ASSERT_EQ(set.exit_status, 0) << set.out << set.err;
            return;
        }
        testbed_state_dir() = own_state_;
        const auto up = run_command({"bash", NP_SOURCE_DIR "/scripts/testbed.sh", "up", "--state",
                                     own_state_, "--slow-shell", shell_delay_s_});
        ASSERT_EQ(up.exit_status, 0) << up.out << up.err;
        owned_ = true;
    }
    void TearDown() override {
        if (owned_)
            run_command(
                {"bash", NP_SOURCE_DIR "/scripts/testbed.sh", "down", "--state", own_state_});
    }

  private:
    std::string own_state_;
    std::string shell_delay_s_;
    bool owned_ = false;
};

}  // namespace np::testing
