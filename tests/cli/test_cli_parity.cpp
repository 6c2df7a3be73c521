#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

class CliParity : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/np-parity-test-XXXXXX";
        dir_ = mkdtemp(tmpl);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    void write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / name) << text;
    }
    void write_mode(const std::string& mode, double rtt, double tcp) {
        write("np_contract_" + mode + ".json", "{\"mode\":\"" + mode +
                                                   "\",\"ping_rtt_ms\":" + std::to_string(rtt) +
                                                   ",\"tcp_mbps\":" + std::to_string(tcp) +
                                                   ",\"udp_mbps\":949.0,\"udp_loss_pct\":0.0,"
                                                   "\"node1\":\"node1-1\",\"node2\":\"node1-2\"}");
    }
    std::filesystem::path dir_;
};

TEST_F(CliParity, TutorialSamplePassesInTheTutorialsOrder) {
    write_mode("jupyter", 0.259, 934.0);
    write_mode("manual", 0.273, 934.0);
    write_mode("ansible", 0.268, 934.0);
    write("unrelated.json", "not a contract");
    const auto r = np_explain({"parity", dir_.string()});
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("PARITY: PASS"), std::string::npos) << r.out;
    const auto a = r.out.find("ansible"), m = r.out.find("manual"), j = r.out.find("jupyter");
    EXPECT_LT(a, m);
    EXPECT_LT(m, j);
}

TEST_F(CliParity, FailExitsOne) {
    write_mode("ansible", 0.268, 934.0);
    write_mode("manual", 0.273, 600.0);
    const auto r = np_explain({"parity", dir_.string()});
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("PARITY: FAIL (tcp_mbps differs)"), std::string::npos) << r.out;
}

TEST_F(CliParity, RunDirFromTheEnvironment) {
    write_mode("manual", 0.273, 934.0);
    const auto r = run_command(
        {"env", "NETWORK_PERFORMANCE_RUN_DIR=" + dir_.string(), NP_EXPLAIN_BIN, "parity"});
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.out.find("only one mode"), std::string::npos) << r.out;
}

TEST_F(CliParity, MalformedContractIsBadInputNamingTheFile) {
    write_mode("ansible", 0.268, 934.0);
    write("np_contract_manual.json", "{\"mode\": \"manual\", \"tcp_mbps\": ");
    const auto r = np_explain({"parity", dir_.string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("np_contract_manual.json"), std::string::npos) << r.err;
}

TEST_F(CliParity, EmptyOrMissingRunDirIsBadInput) {
    auto r = np_explain({"parity", dir_.string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("no np_contract_<mode>.json"), std::string::npos) << r.err;
    r = np_explain({"parity", (dir_ / "nope").string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("no such run directory"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace np::testing
