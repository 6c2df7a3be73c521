#pragma once
// The testbed (scripts/testbed.sh) for a test binary that needs one, and its row's names and
// addresses. Under ctest it is the slot CTest gave the test (tests/testbed/CMakeLists.txt: the
// np_testbed fixture brings one two-node testbed up per slot, each on a row of its own, and
// CTest hands each test one slot through CTEST_RESOURCE_GROUP_0_TESTBED), so tests on
// different slots run at the same time; NP_TESTBED_STATE names one testbed explicitly; else
// the binary brings one up itself on a free row (`--row auto`) and removes it when it ends,
// also when tests fail.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/cli/run_command.hpp"

namespace np::testing {

// One testbed that is up: its state dir and its row (scripts/testbed.sh's layout).
struct Testbed {
    std::string state;  // ssh_config, params.yml, keys, sshd pidfiles, testbed.conf
    int row = 0;

    std::string node(int i) const { return "node" + std::to_string(row) + "-" + std::to_string(i); }
    std::string server() const { return node(1); }  // iperf3 server (node A)
    std::string client() const { return node(2); }  // client (node B)
    // The data segment's prefix "198.18.N." and node i's address on it (params.yml's).
    std::string data_net() const { return "198.18." + std::to_string(2 * row - 2) + "."; }
    std::string data_ip(int i) const { return data_net() + std::to_string(i); }
    // The same over IPv6 (scripts/testbed.sh --family 6): 2001:2:0:N::i in a /64.
    std::string data_ip6(int i) const {
        return "2001:2:0:" + std::to_string(2 * row - 2) + "::" + std::to_string(i);
    }
    // Node i's control address, where its sshd listens.
    std::string ctl_ip(int i) const {
        return "198.19." + std::to_string(row - 1) + "." + std::to_string(i);
    }
    // A node's own TMPDIR (its sshd sets it): where np-explain's upload dirs on it go.
    std::string tmpdir(const std::string& node) const {
        return "/tmp/np-testbed-row" + std::to_string(row) + "/" + node;
    }
    std::string ssh_config() const { return state + "/ssh_config"; }
    std::string params() const { return state + "/params.yml"; }
};

inline Testbed& testbed() {
    static Testbed t;
    return t;
}

// The state dir of the testbed in use (testbed().state).
inline const std::string& testbed_state_dir() {
    return testbed().state;
}

// The row a testbed that is up in `state` sits on, from its testbed.conf; 0 when unreadable.
inline int testbed_row(const std::string& state) {
    std::ifstream in(state + "/testbed.conf");
    std::string conf;
    std::getline(in, conf);
    std::smatch m;
    if (!std::regex_match(conf, m, std::regex("row=([1-9]) nodes=([2-8])"))) return 0;
    return std::stoi(m[1]);
}

// The state dir of the slot CTest allocated ("id:K,slots:1" in CTEST_RESOURCE_GROUP_0_TESTBED)
// under NP_TESTBED_STATES (the fixture's prefix), or "" when the test runs outside that.
inline std::string ctest_slot_state() {
    const char* base = std::getenv("NP_TESTBED_STATES");
    const char* slot = std::getenv("CTEST_RESOURCE_GROUP_0_TESTBED");
    if (!base || !slot) return "";
    std::smatch m;
    const std::string s = slot;
    if (!std::regex_search(s, m, std::regex("id:([0-9]+)"))) return "";
    return std::string(base) + "-" + m[1].str();
}

// `shell_delay_s`: how long the nodes' shell takes to start for this binary's tests (scripts/
// testbed.sh --slow-shell): the SSH and run tests hold the product to a slow node image; the
// suites that only need a testbed set 0 and take a fraction of the time.
class TestbedEnvironment : public ::testing::Environment {
  public:
    TestbedEnvironment(std::string own_state, std::string shell_delay_s)
        : own_state_(std::move(own_state)), shell_delay_s_(std::move(shell_delay_s)) {}
    void SetUp() override {
        std::string state = ctest_slot_state();
        if (state.empty())
            if (const char* s = std::getenv("NP_TESTBED_STATE")) state = s;
        if (!state.empty()) {
            const auto set =
                run_command({"bash", NP_SOURCE_DIR "/scripts/testbed.sh", "shell-delay", "--state",
                             state, "--slow-shell", shell_delay_s_});
            if (set.exit_status != 0) no_testbed(set.out + set.err);
        } else {
            state = own_state_;
            const auto up =
                run_command({"bash", NP_SOURCE_DIR "/scripts/testbed.sh", "up", "--row", "auto",
                             "--state", own_state_, "--slow-shell", shell_delay_s_});
            if (up.exit_status != 0) no_testbed(up.out + up.err);
            owned_ = true;
        }
        testbed() = {state, testbed_row(state)};
        if (testbed().row == 0) no_testbed("no row in " + state + "/testbed.conf\n");
    }
    void TearDown() override {
        if (owned_)
            run_command(
                {"bash", NP_SOURCE_DIR "/scripts/testbed.sh", "down", "--state", own_state_});
    }

  private:
    // Ends the binary with a failure: a fatal failure in a global environment's SetUp makes
    // GoogleTest report every test as skipped, which CTest (gtest_discover_tests' skip
    // expression) counts as not failed, so a suite whose testbeds never came up would pass.
    [[noreturn]] static void no_testbed(const std::string& why) {
        std::cerr << "testbed tests: no testbed to run on, so every test here fails:\n"
                  << why << std::flush;
        std::exit(1);
    }

    std::string own_state_;
    std::string shell_delay_s_;
    bool owned_ = false;
};

}  // namespace np::testing
