#include <gtest/gtest.h>

#include "analysis/error.hpp"
#include "analysis/inputs.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;

TEST(DetectFormat, RecognisesEachTool) {
    EXPECT_EQ(detect_format(fixture("iperf3/tcp-100m.json")), InputFormat::iperf3_json);
    EXPECT_EQ(detect_format(fixture("handwritten/iperf3-3.17-json-stream-tcp.ndjson")),
              InputFormat::iperf3_json);
    EXPECT_EQ(detect_format(fixture("iperf2/udp-100m-b90M.server.txt")), InputFormat::iperf2_text);
    EXPECT_EQ(detect_format(fixture("handwritten/iperf2-2.0-tcp-10g-9.42.client.txt")),
              InputFormat::iperf2_text);
    EXPECT_EQ(detect_format(fixture("ping/iputils-ok.txt")), InputFormat::ping_text);
    EXPECT_EQ(detect_format(fixture("handwritten/busybox-ping.txt")), InputFormat::ping_text);
}

TEST(DetectFormat, Iperf3TextOutputIsRejectedWithAHint) {
    const std::string text =
        "Connecting to host 198.18.10.2, port 5201\n"
        "[  5] local 198.18.10.1 port 40000 connected to 198.18.10.2 port 5201\n";
    try {
        detect_format(text);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("-J"), std::string::npos) << e.what();
    }
}

TEST(DetectFormat, UnknownEmptyAndBinaryAreInputErrors) {
    EXPECT_THROW(detect_format("hello world\n"), InputError);
    EXPECT_THROW(detect_format(""), InputError);
    EXPECT_THROW(detect_format(std::string("\x7f"
                                           "ELF\0\0",
                                           6)),
                 InputError);
}

}  // namespace
}  // namespace np
