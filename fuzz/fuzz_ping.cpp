// libFuzzer target: iputils/busybox ping output → parse, explain.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/error.hpp"
#include "analysis/explain.hpp"
#include "analysis/ping.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        np::ExplainInput in;
        in.measurements.pings = np::parse_ping(text, "fuzz");
        (void)np::explain(in);
    } catch (const np::InputError&) {
    }
    return 0;
}
