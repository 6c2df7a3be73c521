#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

namespace fs = std::filesystem;

class CliParams : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/np-params-test-XXXXXX";
        dir_ = mkdtemp(tmpl);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string write(const std::string& yaml) {
        const fs::path f = dir_ / "network-performance_params.yml";
        std::ofstream(f) << yaml;
        return f.string();
    }
    fs::path dir_;
};

// What the tutorial's script, playbook and notebook read instead of the YAML: the values as
// `run` checks them, defaults filled in, the link rate in bit/s.
TEST_F(CliParams, PrintsTheCheckedValuesWithDefaultsAsJson) {
    const auto r = np_explain({"params", write("np_data_iface: eth1\nnp_link_rate: 100M\n")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["np_data_iface"], "eth1");
    EXPECT_EQ(j["np_server_ip"], "192.168.200.1");
    EXPECT_EQ(j["np_tcp_duration_s"], 10);
    EXPECT_EQ(j["np_udp_bandwidth"], "1G");
    EXPECT_EQ(j["np_link_rate_bps"], 1e8);
    EXPECT_EQ(j["np_parallel"], 1);
    EXPECT_EQ(j["np_direction"], "forward");
    EXPECT_TRUE(j["np_udp_length"].is_null());
    EXPECT_EQ(j["np_iperf3_tcp_options"], "-p 5201 -t 10 -J");
}

// The modes run `iperf3 -c SERVER $np_iperf3_tcp_options`: the words np-explain made from the
// keys, so that every mode runs the same test.
TEST_F(CliParams, TheTestsOptionsAreMadeOnceForEveryMode) {
    const auto r = np_explain(
        {"params", write("np_parallel: 2\nnp_direction: bidir\nnp_udp_length: 1000\n"), "--shell"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.out.find("np_iperf3_tcp_options='-p 5201 -t 10 -P 2 --bidir -J'\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("np_iperf3_udp_options='-p 5201 -u -b 1G -t 10 -l 1000 -P 2 --bidir -J "
                         "--get-server-output'\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("np_zerocopy='false'\n"), std::string::npos) << r.out;
}

// The keys only `run` acts on are not ignored in silence by the modes that read the params here.
TEST_F(CliParams, RunOnlyKeysAreSaidToBeRunsOwn) {
    const std::string file = write("np_repeat: 3\nnp_find_udp_ceiling: true\n");
    for (const bool shell : {false, true}) {
        auto args = std::vector<std::string>{"params", file};
        if (shell) args.emplace_back("--shell");
        const auto r = np_explain(args);
        ASSERT_EQ(r.exit_status, 0) << r.err;
        EXPECT_NE(r.err.find("np_repeat: 3, np_find_udp_ceiling: true are read by `np-explain run "
                             "--params"),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find("the tutorial's modes run each test once"), std::string::npos);
    }
    const auto quiet = np_explain({"params", write("np_repeat: 1\n")});
    EXPECT_EQ(quiet.err, "");
}

TEST_F(CliParams, ShellAssignmentsAreQuotedAndUnsetRateIsEmpty) {
    const auto r = np_explain({"params", write("np_image_marker: /it's here\n"), "--shell"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.out.find("np_image_marker='/it'\\''s here'\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("np_link_rate_bps=''\n"), std::string::npos) << r.out;
}

TEST_F(CliParams, ABadValueIsRefusedNamingTheKey) {
    const auto r = np_explain({"params", write("np_data_iface: \"a;b\"\n")});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("np_data_iface"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace np::testing
