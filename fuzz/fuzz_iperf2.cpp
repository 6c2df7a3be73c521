// libFuzzer target: iperf2 client/server text → parse, normalise, explain.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/error.hpp"
#include "analysis/explain.hpp"
#include "analysis/iperf2.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        np::ExplainInput in;
        in.link_bps = 10e9;
        in.measurements = np::measurements_from(np::parse_iperf2(text), "fuzz");
        (void)np::explain(in);
    } catch (const np::InputError&) {
    }
    return 0;
}
