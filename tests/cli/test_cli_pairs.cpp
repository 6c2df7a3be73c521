// `np-explain pairs` (the fan-out's schedule) and `parity`/`report` over a gathered dir: one
// pair measured (the run-report fixture as its run dir), one that failed, one never reached.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

namespace fs = std::filesystem;

class CliPairs : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/np-pairs-test-XXXXXX";
        dir_ = mkdtemp(tmpl);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string write(const fs::path& name, const std::string& text) {
        fs::create_directories((dir_ / name).parent_path());
        std::ofstream(dir_ / name) << text;
        return (dir_ / name).string();
    }
    // A gathered dir as network-performance_fanout.yml leaves it.
    fs::path gathered() {
        const std::string inventory = write(
            "pairs.yml",
            "pairs:\n"
            "  - {server: node1-1, client: node1-2, server_ip: 10.0.0.1, client_ip: 10.0.0.2}\n"
            "  - {server: node1-3, client: node1-4, server_ip: 10.0.0.3, client_ip: 10.0.0.4}\n"
            "  - {server: node1-2, client: node1-3, server_ip: 10.0.0.2, client_ip: 10.0.0.3}\n");
        const auto r = np_explain({"pairs", inventory, "--json"});
        EXPECT_EQ(r.exit_status, 0) << r.err;
        const fs::path g = dir_ / "pairs";
        write("pairs/np_pairs.json", r.out);
        fs::copy(fs::path(NP_FIXTURES_DIR) / "run-report", g / "node1-1_node1-2",
                 fs::copy_options::recursive);
        write(
            "pairs/node1-3_node1-4/np_failed.json",
            R"({"step": "Preflight: both nodes of the pair answer", "message": "node1-4 unreachable: \u001b]0;pwned\u0007"})");
        return g;
    }
    fs::path dir_;
};

TEST_F(CliPairs, PrintsTheScheduleAndItsJson) {
    const std::string inventory =
        write("pairs.yml", "pairs:\n  - {server: a, client: b}\n  - {server: b, client: c}\n");
    const std::string params =
        write("params.yml", "np_server_ip: 198.18.0.1\nnp_client_ip: 198.18.0.2\n");
    auto r = np_explain({"pairs", inventory, "--params", params});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.out.find("2 pairs in 2 waves"), std::string::npos) << r.out;
    r = np_explain({"pairs", inventory, "--params", params, "--json"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["waves"], 2);
    EXPECT_EQ(j["pairs"][1]["server_ip"], "198.18.0.1");
}

TEST_F(CliPairs, ABadInventoryIsBadInputNamingTheField) {
    const auto r =
        np_explain({"pairs", write("pairs.yml", "pairs:\n  - {server: a, client: a}\n")});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("pairs[0].client: a is paired with itself"), std::string::npos) << r.err;
    EXPECT_EQ(np_explain({"pairs", (dir_ / "missing.yml").string()}).exit_status, 2);
}

TEST_F(CliPairs, ParityOverAGatheredDirShowsEveryPair) {
    const auto r = np_explain({"parity", gathered().string()});
    EXPECT_EQ(r.exit_status, 1) << r.err;
    EXPECT_NE(r.out.find("=== network-performance pairs ==="), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("node1-1 -> node1-2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("line-rate bound"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("node1-3 -> node1-4: not measured: Preflight: both nodes of the pair "
                         "answer: node1-4 unreachable: \\x1b]0;pwned\\x07"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("node1-2 -> node1-3: not measured: nothing gathered"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("PAIRS: FAIL (1 of 3 pairs measured; 2 with a problem)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST_F(CliPairs, ReportOverAGatheredDirNamesEachPair) {
    const fs::path g = gathered();
    auto r = np_explain({"report", g.string(), "--format", "md"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.out.find("## Pairs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("node1-1_node1-2"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("## Parity"), std::string::npos) << r.out;
    r = np_explain({"report", g.string()});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(fs::exists(g / "report.html"));
}

TEST_F(CliPairs, APairDirWithTwoContractsOrABadScheduleIsBadInput) {
    const fs::path g = gathered();
    fs::copy_file(g / "node1-1_node1-2" / "np_contract_np-explain.json",
                  g / "node1-1_node1-2" / "np_contract_manual.json");
    auto r = np_explain({"parity", g.string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("holds more than one np_contract_<mode>.json"), std::string::npos)
        << r.err;
    write("pairs/np_pairs.json",
          R"({"schema": "np-pairs/1", "waves": 1, "pairs": [{"name": "x_y"}]})");
    r = np_explain({"parity", g.string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("pairs[0].server"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace np::testing
