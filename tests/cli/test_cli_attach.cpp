#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

namespace fs = std::filesystem;

// A contract as the tutorial's library writes it, for the tutorial's sample run.
const char* kManualContract =
    R"({"mode": "manual", "ping_rtt_ms": 0.273, "tcp_mbps": 934.0, "udp_mbps": 949.0,
        "udp_loss_pct": 0.0, "node1": "node1-1", "node2": "node1-2", "tutorial_version": "2026.08"})";

class CliAttach : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/np-attach-test-XXXXXX";
        dir_ = mkdtemp(tmpl);
        contract_ = dir_ / "np_contract_manual.json";
        std::ofstream(contract_) << kManualContract;
        for (const char* f : {"np-explain_trace_node1-1.json", "np-explain_trace_node1-2.json",
                              "np-explain_tcp.json", "np-explain_udp.json"}) {
            fs::copy_file(fs::path(NP_FIXTURES_DIR) / "run-100m" / f, dir_ / f);
        }
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string text() const {
        std::ifstream in(contract_);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    nlohmann::json doc() const { return nlohmann::json::parse(text()); }
    std::string path(const char* f) const { return (dir_ / f).string(); }

    fs::path dir_, contract_;
};

TEST_F(CliAttach, ExplainsTheContractsOwnFiguresAndKeepsTheTutorialsFields) {
    const auto r = np_explain({"attach", contract_.string(), "--link", "1G"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto d = doc();
    const auto original = nlohmann::json::parse(kManualContract);
    for (const auto& [key, value] : original.items()) EXPECT_EQ(d[key], value) << key;
    EXPECT_EQ(d["explain"]["findings"][0]["code"], "LINE_RATE_BOUND");
    EXPECT_NEAR(d["explain"]["verdicts"][0]["pct_of_ceiling"].get<double>(), 99.21, 0.01);
    EXPECT_NEAR(d["model"]["tcp"]["goodput_ceiling_mbps"].get<double>(), 941.48, 0.01);
    EXPECT_EQ(d["link_mbps"], 1000.0);
    EXPECT_NE(r.out.find("line-rate bound"), std::string::npos) << r.out;
}

TEST_F(CliAttach, AttachingTwiceDoesNotDuplicate) {
    ASSERT_EQ(
        np_explain({"attach", contract_.string(), "--link", "100M", "--iperf3",
                    path("np-explain_tcp.json"), "--trace", path("np-explain_trace_node1-1.json")})
            .exit_status,
        0);
    const auto first = doc();
    ASSERT_EQ(
        np_explain({"attach", contract_.string(), "--link", "100M", "--iperf3",
                    path("np-explain_tcp.json"), "--trace", path("np-explain_trace_node1-1.json")})
            .exit_status,
        0);
    EXPECT_EQ(doc(), first);
    EXPECT_EQ(first["traces"], nlohmann::json::array({"np-explain_trace_node1-1.json"}));
}

TEST_F(CliAttach, ANewTraceJoinsTheOnesAlreadyAttached) {
    ASSERT_EQ(np_explain({"attach", contract_.string(), "--link", "100M", "--trace",
                          path("np-explain_trace_node1-1.json")})
                  .exit_status,
              0);
    const auto r =
        np_explain({"attach", contract_.string(), "--link", "100M", "--iperf3",
                    path("np-explain_udp.json"), "--trace", path("np-explain_trace_node1-2.json")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto d = doc();
    EXPECT_EQ(d["traces"].size(), 2u);
    // With both nodes' traces the UDP loss is located at node1-1's socket.
    bool located = false;
    for (const auto& f : d["explain"]["findings"])
        located = located || f["code"] == "LOSS_AT_RECEIVER_SOCKET";
    EXPECT_TRUE(located) << d["explain"].dump(2);
}

TEST_F(CliAttach, MalformedContractIsBadInputAndTheFileIsUntouched) {
    std::ofstream(contract_, std::ios::trunc) << R"({"mode": "manual", "tcp_mbps": )";
    const std::string before = text();
    const auto r = np_explain({"attach", contract_.string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("np_contract_manual.json"), std::string::npos) << r.err;
    EXPECT_EQ(text(), before);
}

TEST_F(CliAttach, AMissingTraceIsBadInputAndTheFileIsUntouched) {
    const std::string before = text();
    const auto r = np_explain({"attach", contract_.string(), "--trace", path("nope.json")});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("nope.json"), std::string::npos) << r.err;
    EXPECT_EQ(text(), before);
}

TEST_F(CliAttach, AContractOfTheWrongShapeNamesTheField) {
    std::ofstream(contract_, std::ios::trunc) << R"({"mode": "manual", "tcp_mbps": "fast"})";
    const auto r = np_explain({"attach", contract_.string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("tcp_mbps"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace np::testing

namespace np::testing {
namespace {

// The tutorial's modes write their contract this way: from the tools' outputs and both traces,
// with the link speed the probes read from ethtool when params give no np_link_rate.
TEST_F(CliAttach, ModeWritesANewContractFromTheOutputsAndTraces) {
    const fs::path fresh = dir_ / "np_contract_ansible.json";
    const auto r =
        np_explain({"attach", fresh.string(), "--mode", "ansible", "--node1", "node1-1", "--node2",
                    "node1-2", "--iperf3", path("np-explain_tcp.json"), "--iperf3",
                    path("np-explain_udp.json"), "--trace", path("np-explain_trace_node1-1.json"),
                    "--trace", path("np-explain_trace_node1-2.json"), "--link", "100M"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    std::ifstream in(fresh);
    const auto d = nlohmann::json::parse(in);
    EXPECT_EQ(d["mode"], "ansible");
    EXPECT_EQ(d["node1"], "node1-1");
    EXPECT_EQ(d["node2"], "node1-2");
    EXPECT_TRUE(d["ping_rtt_ms"].is_null());  // no --ping: not measured
    EXPECT_NEAR(d["tcp_mbps"].get<double>(), 91.86, 0.01);
    EXPECT_TRUE(d["udp_mbps"].is_number());
    EXPECT_EQ(d["traces"], nlohmann::json::array(
                               {"np-explain_trace_node1-1.json", "np-explain_trace_node1-2.json"}));
    EXPECT_EQ(d["link_mbps"], 100.0);
    EXPECT_FALSE(d["explain"]["findings"].empty());
}

// A mode `run --mode` accepts (names.hpp: 1-64 of letters, digits, '.', '_', '-') is one attach
// accepts: the contract a run wrote can be written anew; one neither accepts is refused naming
// --mode before anything is written.
TEST_F(CliAttach, ModesAreTheOnesRunAccepts) {
    const fs::path dotted = dir_ / "np_contract_lab.row1.json";
    const auto r = np_explain({"attach", dotted.string(), "--mode", "lab.row1", "--iperf3",
                               path("np-explain_tcp.json"), "--link", "100M"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(std::ifstream(dotted))["mode"], "lab.row1");
    for (const std::string& bad :
         {std::string(".hidden"), std::string(65, 'm'), std::string("a/b")}) {
        const auto refused = np_explain({"attach", (dir_ / "np_contract_y.json").string(), "--mode",
                                         bad, "--iperf3", path("np-explain_tcp.json")});
        EXPECT_EQ(refused.exit_status, 2) << bad;
        EXPECT_NE(refused.err.find("--mode"), std::string::npos) << refused.err;
        EXPECT_FALSE(fs::exists(dir_ / "np_contract_y.json"));
    }
}

TEST_F(CliAttach, ModeWithoutOutputsIsRefused) {
    const auto r = np_explain({"attach", (dir_ / "np_contract_x.json").string(), "--mode", "x"});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("--mode"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "np_contract_x.json"));
}

TEST_F(CliAttach, NodesWithoutModeAreRefused) {
    EXPECT_NE(np_explain({"attach", contract_.string(), "--node1", "a"}).exit_status, 0);
}

}  // namespace
}  // namespace np::testing
