#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/finding.hpp"

namespace np {
namespace {

Finding wrong_interface() {
    return Finding{"WRONG_INTERFACE",
                   Severity::error,
                   "Traffic did not cross the data NIC",
                   "iperf3 moved 1.2 GB; the probe on enp0s25 saw 3 kB.",
                   {{"iperf3_bytes", "1200000000"}, {"probe_wire_bytes", "3000"}},
                   "Bind the test to the data address."};
}

TEST(Finding, ExitStatusIsOneOnlyWithAnErrorFinding) {
    EXPECT_EQ(exit_status_for({}), 0);
    Finding info{"LINE_RATE_BOUND", Severity::info, "t", "d", {}, ""};
    Finding warn{"X", Severity::warn, "t", "d", {}, ""};
    EXPECT_EQ(exit_status_for({info, warn}), 0);
    EXPECT_EQ(exit_status_for({info, wrong_interface()}), 1);
}

TEST(Finding, JsonHasTheDocumentedFields) {
    const auto doc = findings_document({wrong_interface()});
    EXPECT_EQ(doc["schema"], "np-findings/1");
    const auto& f = doc["findings"][0];
    EXPECT_EQ(f["code"], "WRONG_INTERFACE");
    EXPECT_EQ(f["severity"], "error");
    EXPECT_EQ(f["evidence"]["probe_wire_bytes"], "3000");
    EXPECT_EQ(f["next_step"], "Bind the test to the data address.");
}

TEST(Finding, RendersTitleDetailEvidenceAndNextStep) {
    const auto text = render_findings({wrong_interface()});
    EXPECT_EQ(text,
              "[error] Traffic did not cross the data NIC (WRONG_INTERFACE)\n"
              "    iperf3 moved 1.2 GB; the probe on enp0s25 saw 3 kB.\n"
              "      iperf3_bytes = 1200000000\n"
              "      probe_wire_bytes = 3000\n"
              "    next step: Bind the test to the data address.\n");
}

}  // namespace
}  // namespace np
