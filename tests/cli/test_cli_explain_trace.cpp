// np-explain explain --trace: the probe's traces (tests/fixtures/probe/) fold into the
// explanation and its exit status.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

const std::string kProbeFixtures = std::string(NP_FIXTURES_DIR) + "/probe/";

std::vector<std::string> codes(const std::string& json_out) {
    std::vector<std::string> c;
    const auto doc = nlohmann::json::parse(json_out);  // outlives the loop over its member
    for (const auto& f : doc.at("findings")) c.push_back(f.at("code").get<std::string>());
    return c;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(CliExplainTrace, LocatesUdpLossAtTheReceiverSocket) {
    const auto r =
        np_explain({"explain", "--json", "--iperf3", kProbeFixtures + "udp-overload-iperf3.json",
                    "--trace", kProbeFixtures + "udp-overload-client.json", "--trace",
                    kProbeFixtures + "udp-overload-server.json"});
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(contains(codes(r.out), "LOSS_AT_RECEIVER_SOCKET")) << r.out;
}

TEST(CliExplainTrace, TrafficOffTheDataNicIsWrongInterfaceAndExits1) {
    const auto r = np_explain({"explain", "--iperf3", kProbeFixtures + "wrong-iface-iperf3.json",
                               "--trace", kProbeFixtures + "wrong-iface-client.json"});
    EXPECT_EQ(r.exit_status, 1) << r.err;
    EXPECT_NE(r.out.find("WRONG_INTERFACE"), std::string::npos) << r.out;
}

TEST(CliExplainTrace, ABadTraceNamesFileAndField) {
    const auto r = np_explain({"explain", "--trace", kProbeFixtures + "generate.sh"});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("generate.sh"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace np::testing
