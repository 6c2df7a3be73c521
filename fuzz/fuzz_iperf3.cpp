// libFuzzer target: iperf3 JSON / --json-stream text → parse, normalise, explain. Any input must
// end in a result or an InputError; a crash, leak, hang or UB (ASan+UBSan) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/error.hpp"
#include "analysis/explain.hpp"
#include "analysis/iperf3.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        np::ExplainInput in;
        in.link_bps = 1e9;
        in.measurements = np::measurements_from(np::parse_iperf3(text), "fuzz");
        (void)np::explain(in);
    } catch (const np::InputError&) {
    }
    return 0;
}
