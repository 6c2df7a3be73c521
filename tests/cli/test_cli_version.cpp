// `--version` of both binaries, and the same facts in what np-explain writes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

// "np-explain 0.1.0 (git a957331)": the CMake project version and the build's git revision.
const std::regex kVersionLine(std::string("(np-explain|np-probe) ") +
                              std::regex_replace(NP_PROJECT_VERSION, std::regex("\\."), "\\.") +
                              " \\(git ([0-9a-f]{7,40}(-dirty)?|unknown)\\)\n");

TEST(CliVersion, NpExplainPrintsTheProjectVersionAndRevision) {
    const auto r = np_explain({"--version"});
    EXPECT_EQ(r.exit_status, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(r.out, m, kVersionLine)) << r.out;
    EXPECT_EQ(m[1], "np-explain");
}

TEST(CliVersion, NpProbePrintsTheSameVersionWithoutRoot) {
    const auto explain = np_explain({"--version"});
    const auto probe = run_command({NP_PROBE_BIN, "--version"});
    EXPECT_EQ(probe.exit_status, 0) << probe.err;
    ASSERT_TRUE(std::regex_match(probe.out, kVersionLine)) << probe.out;
    EXPECT_EQ(probe.out.substr(probe.out.find(' ')), explain.out.substr(explain.out.find(' ')));
}

TEST(CliVersion, ExplainJsonRecordsTheVersionThatWroteIt) {
    const auto version = np_explain({"--version"});
    const auto r = np_explain(
        {"explain", "--json", "--link", "10G",
         std::string(NP_FIXTURES_DIR) + "/handwritten/iperf2-2.0-tcp-10g-9.42.client.txt"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto g = nlohmann::json::parse(r.out).at("generator");
    EXPECT_EQ(g.at("program").get<std::string>() + " " + g.at("version").get<std::string>() +
                  " (git " + g.at("revision").get<std::string>() + ")\n",
              version.out);
}

}  // namespace
}  // namespace np::testing
