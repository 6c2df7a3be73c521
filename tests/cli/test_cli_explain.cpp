#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

std::string fx(const std::string& relative) {
    return std::string(NP_FIXTURES_DIR) + "/" + relative;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(CliExplain, PrintsAVerdictTableThenTheFindings) {
    const auto r = np_explain({"explain", "--link", "1G", "--iperf3",
                               fx("handwritten/iperf3-3.12-tcp-1g-941.json"), "--iperf3",
                               fx("handwritten/iperf3-3.12-udp-1g-b1G-949.json")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "% of ceiling")) << r.out;
    EXPECT_TRUE(has(r.out, "941.48 Mbit/s")) << r.out;
    EXPECT_TRUE(has(r.out, "99.95 %")) << r.out;
    EXPECT_TRUE(has(r.out, "956.41 Mbit/s")) << r.out;
    EXPECT_TRUE(has(r.out, "(LINE_RATE_BOUND)")) << r.out;
    EXPECT_TRUE(has(r.out, "(OFFERED_ABOVE_CEILING)")) << r.out;
    EXPECT_LT(r.out.find("verdict"), r.out.find("[info]")) << "table first, findings after";
}

TEST(CliExplain, DetectsFormatsOfPositionalFiles) {
    const auto r =
        np_explain({"explain", "--link", "10G", fx("handwritten/iperf2-2.2-udp-10g-b9g.client.txt"),
                    fx("ping/iputils-ok.txt"), fx("iperf3/tcp-100m.json")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "iperf2 UDP")) << r.out;
    EXPECT_TRUE(has(r.out, "ping 198.18.10.2")) << r.out;
    EXPECT_TRUE(has(r.out, "iperf3 TCP")) << r.out;
    EXPECT_TRUE(has(r.out, "(SENDER_LIMITED)")) << r.out;
    EXPECT_TRUE(has(r.out, "(PRINTED_LOSS_WRONG)")) << r.out;
}

TEST(CliExplain, JsonIsTheFindingsDocumentWithVerdicts) {
    const auto r = np_explain({"explain", "--json", "--link", "10G",
                               fx("handwritten/iperf2-2.0-tcp-10g-9.42.client.txt")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["schema"], "np-findings/1");
    EXPECT_EQ(doc["findings"][0]["code"], "LINE_RATE_BOUND");
    EXPECT_EQ(doc["verdicts"][0]["verdict"], "line-rate bound");
    EXPECT_NEAR(doc["verdicts"][0]["measured_mbps"].get<double>(), 9420, 0.001);
}

TEST(CliExplain, ErrorFindingExitsOne) {
    const auto r = np_explain({"explain", fx("iperf3/unreachable-refused.json")});
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "(TOOL_ERROR)")) << r.out;
    EXPECT_TRUE(has(r.out, "systemctl status np-iperf3")) << r.out;
}

TEST(CliExplain, WithoutLinkSaysTheCeilingNeedsIt) {
    const auto r = np_explain({"explain", fx("iperf3/tcp-100m.json")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "needs --link")) << r.out;
    EXPECT_TRUE(has(r.out, "(LINK_RATE_UNKNOWN)")) << r.out;
}

TEST(CliExplain, ATranscriptGivesOneRowPerRunWithItsCommandUnderIt) {
    const auto r = np_explain({"explain", "--link", "100M", fx("transcripts/session.md")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "iperf2 UDP")) << r.out;
    EXPECT_TRUE(has(r.out, "\n  $ iperf -c 198.18.20.1 -u -b 90M -t 10\n")) << r.out;
    EXPECT_TRUE(
        has(r.out, "\n  $ ping -c 5 -I npx-tr-vb 198.18.20.1   (printed by iputils ping)\n"))
        << r.out;
    EXPECT_TRUE(has(r.out, "file = " + fx("transcripts/session.md") + ":")) << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliExplain, JsonVerdictsCarryTheCommand) {
    const auto r = np_explain(
        {"explain", "--json", "--link", "1G", fx("handwritten/seed-tutorial-step3-1g.md")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["verdicts"].size(), 3u);
    EXPECT_EQ(doc["verdicts"][0]["command"],
              "ssh root@node1-2 \"iperf3 -c 192.168.200.1 -t 10\" # TCP");
    EXPECT_EQ(doc["verdicts"][0]["verdict"], "line-rate bound");
    EXPECT_NEAR(doc["verdicts"][1]["pct_of_ceiling"].get<double>(), 99.2, 0.05);
}

TEST(CliExplain, ABannerOnlyServerBesideItsClientLocatesTheLossAtTheServersBuffer) {
    const auto r =
        np_explain({"explain", "--link", "10G", fx("handwritten/iperf2-2.2-udp-10g-b9g.client.txt"),
                    fx("handwritten/iperf2-2.0-udp-server-banner.txt")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "The UDP buffer is 208 KByte (default) on the server")) << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliExplain, AnIperf3ServerLogBesideItsClientIsExplainedNotRefused) {
    const auto r = np_explain({"explain", "--link", "100M", fx("transcripts/client.txt"),
                               fx("transcripts/server-iperf3.txt")});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "iperf3 TCP (server side)")) << r.out;
}

TEST(CliExplain, AnInterruptedRunIsNotedAndTheRestExplained) {
    const std::string text =
        "$ iperf -c h\n------\nClient connecting to h, TCP port 5001\n^C\n"
        "$ ping -c 3 h\nPING h (h) 56(84) bytes of data.\n\n--- h ping "
        "statistics ---\n3 packets transmitted, 3 received, 0% packet loss\n"
        "rtt min/avg/max/mdev = 1/2/3/1 ms\n";
    char path[] = "/tmp/np-explain-cli-XXXXXX";
    const int fd = mkstemp(path);
    close(fd);
    std::ofstream(path) << text;
    const auto r = np_explain({"explain", path});
    unlink(path);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "ping h")) << r.out;
    EXPECT_TRUE(has(r.err, "note: " + std::string(path) + ":1: iperf2 printed no bandwidth report"))
        << r.err;
}

TEST(CliExplain, StandardInputIsReadWhenTheFileIsADash) {
    const auto r = sh("cat " + shell_quote(fx("iperf3/tcp-100m.json")) +
                      " | " NP_EXPLAIN_BIN " explain --link 100M -");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(has(r.out, "line-rate bound")) << r.out;
}

TEST(CliExplain, InputsThatBlockOrNeverEndAreRefusedAtOnce) {
    char dir[] = "/tmp/np-explain-fifo-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string fifo = std::string(dir) + "/fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    for (const auto& [file, says] :
         std::vector<std::pair<std::string, std::string>>{{fifo, "FIFO"},
                                                          {"/dev/zero", "device"},
                                                          {"/proc/self/status", "/proc"},
                                                          {dir, "directory"}}) {
        // `timeout` turns a hang into exit 124: the refusal must come first.
        const auto r = sh("timeout 10 " NP_EXPLAIN_BIN " explain " + shell_quote(file));
        EXPECT_EQ(r.status, 2) << file << ": " << r.out;
        EXPECT_TRUE(has(r.out, file + ": ")) << r.out;
        EXPECT_TRUE(has(r.out, says)) << r.out;
    }
    unlink(fifo.c_str());
    rmdir(dir);
    const auto zero = sh("head -c 50000000 /dev/zero | timeout 10 " NP_EXPLAIN_BIN " explain -");
    EXPECT_EQ(zero.status, 2) << zero.out;
    EXPECT_TRUE(has(zero.out, "binary data")) << zero.out;
}

std::string temp_file(const std::string& content) {
    char path[] = "/tmp/np-explain-cli-XXXXXX";
    const int fd = mkstemp(path);
    close(fd);
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

struct BadExplain {
    std::vector<std::string> args;
    std::string content;  // written to a temp file appended to args when not empty
    std::string names;
};

class CliExplainBadInput : public ::testing::TestWithParam<BadExplain> {};

TEST_P(CliExplainBadInput, OneLineNamingFileOrOptionAndExit2) {
    std::vector<std::string> args{"explain"};
    for (const auto& a : GetParam().args) args.push_back(a);
    std::string tmp;
    if (!GetParam().content.empty()) {
        tmp = temp_file(GetParam().content);
        args.push_back(tmp);
    }
    const auto r = np_explain(args);
    if (!tmp.empty()) unlink(tmp.c_str());
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_TRUE(has(r.err, GetParam().names)) << r.err;
    if (!tmp.empty()) {
        EXPECT_TRUE(has(r.err, tmp)) << r.err;
    }
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(has(r.err, "terminate")) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Rejects, CliExplainBadInput,
    ::testing::Values(BadExplain{{"/nonexistent/run.json"}, "", "/nonexistent/run.json"},
                      BadExplain{{"--link", "10X", "/dev/null"}, "", "--link"},
                      BadExplain{{}, "", "no input"},
                      BadExplain{{}, "{\"start\": {\n\"version\": \"iperf 3.12\",\n", "line 3"},
                      BadExplain{{}, "random words\n", "not iperf3 JSON, iperf2 text or ping"},
                      BadExplain{{"--iperf2"}, "{\"start\": {}}", "iperf2"},
                      BadExplain{{"--ping"}, "PING x\n", "ping statistics"},
                      BadExplain{{}, std::string("\x89PNG\r\n\x1a\n\0\0", 10), "binary"},
                      BadExplain{{},
                                 "{\"start\":{},\"end\":{\"sum_sent\":{\"bits_per_second\":[]}}}",
                                 "end.sum_sent.bits_per_second"},
                      BadExplain{{},
                                 "{\"start\":{},\"end\":{\"sum\":{\"bytes\":-5}}}",
                                 "(end.sum.bytes): line 1: -5 is negative"},
                      BadExplain{{},
                                 "{\"start\":{},\"end\":{\"sum_sent\":{\"bytes\":1e400}}}",
                                 "(end.sum_sent.bytes): line 1: 1e400 is out of range"},
                      BadExplain{{},
                                 "------------------------------------------------------------\n"
                                 "Server listening on UDP port 5001\n"
                                 "UDP buffer size:  208 KByte (default)\n",
                                 "only a server's banner"}));

}  // namespace
}  // namespace np::testing
