#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

TEST(CliModel, PrintsTheTenGigCeilings) {
    const auto r = np_explain({"model", "--link", "10G"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.out.find("9414.82 Mbit/s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("94.15 %"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("of every 1538 bytes on the wire, 1448 carry data"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("8 bytes against TCP's 32"), std::string::npos) << r.out;
}

TEST(CliModel, JsonHasTheSameFacts) {
    const auto r = np_explain({"model", "--link", "1G", "--udp-payload", "1470", "--json"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j["tcp"]["goodput_ceiling_mbps"].get<double>(), 941.48, 0.01);
    EXPECT_NEAR(j["udp"]["goodput_ceiling_mbps"].get<double>(), 957.03, 0.01);
    EXPECT_EQ(j["udp"]["payload_bytes_per_unit"].get<int>(), 1470);
}

// Unless --udp-payload says otherwise, the datagrams iperf3 sends: its TCP MSS.
TEST(CliModel, TheDefaultDatagramIsIperf3sForTheFamilyAndMtu) {
    for (const auto& [args, payload] : std::vector<std::pair<std::vector<std::string>, int>>{
             {{"model", "--json"}, 1448},
             {{"model", "--ipv6", "--json"}, 1428},
             {{"model", "--mtu", "9000", "--json"}, 8948},
             {{"model", "--no-tcp-timestamps", "--json"}, 1460},
             {{"model", "--ipv6", "--udp-payload", "1448", "--json"}, 1448}}) {
        const auto r = np_explain(args);
        ASSERT_EQ(r.exit_status, 0) << r.err;
        EXPECT_EQ(nlohmann::json::parse(r.out)["udp"]["payload_bytes_per_unit"].get<int>(), payload)
            << args[1];
    }
}

TEST(CliModel, FragmentationIsExplained) {
    const auto r = np_explain({"model", "--link", "1G", "--udp-payload", "8000"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.out.find("IP-fragmented into 6 frames"), std::string::npos) << r.out;
}

struct BadInput {
    std::vector<std::string> args;
    std::string names;  // what the one-line error must mention
};

class CliModelBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliModelBadInput, OneLineNamingTheOptionAndExit2) {
    std::vector<std::string> args{"model"};
    for (const auto& a : GetParam().args) args.push_back(a);
    const auto r = np_explain(args);
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_NE(r.err.find(GetParam().names), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Rejects, CliModelBadInput,
    ::testing::Values(BadInput{{"--link", "10X"}, "--link"}, BadInput{{"--link", "-1G"}, "--link"},
                      BadInput{{"--link", "5M"}, "10M to 400G"}, BadInput{{"--mtu", "40"}, "--mtu"},
                      BadInput{{"--mtu", "40"}, "68..65535"}, BadInput{{"--mtu", "abc"}, "--mtu"},
                      BadInput{{"--mtu", "-5"}, "--mtu"},
                      BadInput{{"--udp-payload", "70000"}, "--udp-payload"},
                      BadInput{{"--udp-payload", "70000"}, "1..65507"},
                      BadInput{{"--vlan", "3"}, "--vlan"}, BadInput{{"--bogus"}, "--bogus"},
                      BadInput{{"--mtu", "99999999999999"}, "--mtu"}));

TEST(CliModel, HelpIsCompleteAndExitsZero) {
    auto r = np_explain({"--help"});
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_NE(r.out.find("model"), std::string::npos);
    r = np_explain({"model", "--help"});
    EXPECT_EQ(r.exit_status, 0);
    for (const char* opt :
         {"--link", "--mtu", "--vlan", "--ipv6", "--no-tcp-timestamps", "--udp-payload", "--json"})
        EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
}

TEST(CliModel, NoSubcommandIsBadUsage) {
    const auto r = np_explain({});
    EXPECT_EQ(r.exit_status, 2);
}

}  // namespace
}  // namespace np::testing
