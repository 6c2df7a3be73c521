#include <gtest/gtest.h>

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
                      BadExplain{{}, std::string("\x89PNG\r\n\x1a\n\0\0", 10), "binary"}));

}  // namespace
}  // namespace np::testing
