// `np-explain report` on a complete run dir (tests/fixtures/run-report): the files it writes and
// what it prints. The page's rendering is tests/browser; the charts' data tests/unit/test_report.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

namespace fs = std::filesystem;

class CliReport : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/np-report-test-XXXXXX";
        dir_ = mkdtemp(tmpl);
        // Links in the fixture are followed: the copy holds the files themselves.
        fs::copy(fs::path(NP_FIXTURES_DIR) / "run-report", dir_ / "run",
                 fs::copy_options::recursive);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path run() const { return dir_ / "run"; }
    fs::path dir_;
};

size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST_F(CliReport, WritesOneSelfContainedPageIntoTheRunDir) {
    const auto r = np_explain({"report", run().string()});
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("report.html (1 mode,"), std::string::npos) << r.out;
    const std::string page = read_file(run() / "report.html");
    EXPECT_EQ(occurrences(page, "<div class=\"vega\""), 7u);
    // vega, vega-lite and vega-embed are inlined, whole: no <script src=…>, no map to fetch.
    EXPECT_EQ(occurrences(page, "<script src"), 0u);
    EXPECT_EQ(occurrences(page, "sourceMappingURL"), 0u);
    EXPECT_NE(page.find("vegaEmbed"), std::string::npos);
    EXPECT_GT(page.size(), 500u * 1024);  // the libraries are most of it
    struct stat st {};
    ASSERT_EQ(stat((run() / "report.html").c_str(), &st), 0);
    EXPECT_TRUE(st.st_mode & S_IROTH) << "a report is for reading: not private to its writer";
}

TEST_F(CliReport, MarkdownGoesToStdoutForPasting) {
    const auto r = np_explain({"report", run().string(), "--format", "md"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("# np-explain report: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("| iperf3 TCP | 91.86 Mbit/s | 94.15 Mbit/s | 97.57 % |"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("(`UDP_LOSS`)"), std::string::npos);
    EXPECT_EQ(r.out.find("## Parity"), std::string::npos);
    EXPECT_FALSE(fs::exists(run() / "report.html"));
}

// Standard output on a full disk (/dev/full answers every write with ENOSPC): exit 3 naming the
// cause, as for a file given with --out — never 0 with the report lost.
TEST_F(CliReport, AFullDiskUnderStandardOutputIsExit3) {
    const auto r = sh("{ " + std::string(NP_EXPLAIN_BIN) + " report " +
                      shell_quote(run().string()) + " --format md >/dev/full; }");
    EXPECT_EQ(r.status, 3) << r.out;
    EXPECT_NE(r.out.find("np-explain: standard output: cannot write: No space left on device"),
              std::string::npos)
        << r.out;
}

TEST_F(CliReport, SeveralModesGetTheParityTable) {
    std::ofstream(run() / "np_contract_manual.json")
        << R"({"mode": "manual", "ping_rtt_ms": 0.07, "tcp_mbps": 91.9, "udp_mbps": 92.0,
              "udp_loss_pct": 0.4, "node1": "node1-1", "node2": "node1-2"})";
    const auto r = np_explain(
        {"report", run().string(), "--format", "md", "--out", (dir_ / "summary.md").string()});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const std::string md = read_file(dir_ / "summary.md");
    EXPECT_NE(md.find("## Parity\n\n```text\n=== network-performance parity ==="),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("PARITY: PASS"), std::string::npos) << md;
    EXPECT_LT(md.find("### manual"), md.find("### np-explain"));  // the tutorial's order
}

TEST_F(CliReport, AnUnreadableToolOutputIsLeftOutWithAWarning) {
    fs::remove(run() / "np-explain_ping.txt");
    std::ofstream(run() / "np-explain_ping.txt") << "PING x (x) 56(84) bytes of data.\n";
    const auto r = np_explain({"report", run().string(), "--out", "-"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.err.find("warning: np-explain_ping.txt (ping): "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("left out of the report"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("<!DOCTYPE html>"), std::string::npos);
}

TEST_F(CliReport, BadInputExitsTwo) {
    auto r = np_explain({"report", (dir_ / "nowhere").string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("no such run directory"), std::string::npos) << r.err;
    r = np_explain({"report", run().string(), "--format", "pdf"});
    EXPECT_EQ(r.exit_status, 2) << r.err;
    std::ofstream(run() / "np_contract_broken.json") << "{";
    r = np_explain({"report", run().string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("np_contract_broken.json"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace np::testing
