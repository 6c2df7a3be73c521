#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/finding.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

Finding wrong_interface() {
    return Finding{.code = "WRONG_INTERFACE",
                   .severity = Severity::error,
                   .test = "iperf3 TCP",
                   .title = "Traffic did not cross the data NIC",
                   .detail = "iperf3 moved 1.2 GB; the probe on enp0s25 saw 3 kB.",
                   .evidence = {{"data_nic", "enp0s25"},
                                {"iperf3_bytes", 1200000000},
                                {"probe_wire_bytes", 3000}},
                   .next_step = "Bind the test to the data address."};
}

TEST(Finding, ExitStatusIsOneOnlyWithAnErrorFinding) {
    EXPECT_EQ(exit_status_for({}), 0);
    const Finding info = make_finding("LINE_RATE_BOUND");
    const Finding warn = make_finding("UDP_LOSS");
    EXPECT_EQ(exit_status_for({info, warn}), 0);
    EXPECT_EQ(exit_status_for({info, wrong_interface()}), 1);
}

TEST(Finding, JsonHasTheDocumentedFields) {
    const auto doc = findings_document({wrong_interface()});
    EXPECT_EQ(doc["schema"], "np-findings/1");
    const auto& f = doc["findings"][0];
    EXPECT_EQ(f["code"], "WRONG_INTERFACE");
    EXPECT_EQ(f["severity"], "error");
    EXPECT_EQ(f["test"], "iperf3 TCP");
    // Numbers stay numbers, with the unit in the key; text stays text.
    EXPECT_TRUE(f["evidence"]["probe_wire_bytes"].is_number_integer());
    EXPECT_EQ(f["evidence"]["probe_wire_bytes"], 3000);
    EXPECT_EQ(f["evidence"]["data_nic"], "enp0s25");
    EXPECT_EQ(f["next_step"], "Bind the test to the data address.");
}

TEST(Finding, RendersTitleDetailEvidenceAndNextStep) {
    const auto text = render_findings({wrong_interface()});
    EXPECT_EQ(text,
              "[error] Traffic did not cross the data NIC (WRONG_INTERFACE)\n"
              "    iperf3 moved 1.2 GB; the probe on enp0s25 saw 3 kB.\n"
              "      test = iperf3 TCP\n"
              "      data_nic = enp0s25\n"
              "      iperf3_bytes = 1200000000\n"
              "      probe_wire_bytes = 3000\n"
              "    next step: Bind the test to the data address.\n");
}

TEST(Finding, ReadsBackWhatItWroteAndTheTestOfOlderDocuments) {
    const Finding f = wrong_interface();
    const Finding back = parse_finding(to_json(f), "f");
    EXPECT_EQ(back.test, f.test);
    EXPECT_EQ(nlohmann::json(back.evidence), nlohmann::json(Evidence{{"data_nic", "enp0s25"},
                                                                     {"iperf3_bytes", 1200000000},
                                                                     {"probe_wire_bytes", 3000}}));
    // Before findings had "test", the evidence named it.
    nlohmann::json old = to_json(f);
    old.erase("test");
    old["evidence"]["test"] = "iperf3 UDP";
    EXPECT_EQ(parse_finding(old, "f").test, "iperf3 UDP");
    // A list of plain values is evidence (a search's steps); a list of lists or an object not.
    old["evidence"]["steps"] = nlohmann::json::array({1.5, nullptr, 2});
    EXPECT_NO_THROW(parse_finding(old, "f"));
    old["evidence"]["nested"] = nlohmann::json::array({nlohmann::json::array()});
    EXPECT_THROW(parse_finding(old, "f"), InputError);
    old["evidence"]["nested"] = nlohmann::json::object();
    EXPECT_THROW(parse_finding(old, "f"), InputError);
}

TEST(Finding, EvidenceNumbersAreRounded) {
    EXPECT_EQ(rounded(94.148).dump(), "94.15");
    EXPECT_EQ(rounded(7950.4, 0).dump(), "7950");
    EXPECT_EQ(evidence_text(rounded(0.5, 3)), "0.5");
    EXPECT_EQ(evidence_text("text"), "text");
}

}  // namespace
}  // namespace np
