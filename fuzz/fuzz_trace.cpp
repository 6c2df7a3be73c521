// libFuzzer target: a probe's trace (np-trace/1), as explain --trace, attach and report read it;
// what parses is written back (to_json) and printed, as run saves a node's trace.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "analysis/trace.hpp"
#include "src/common/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const np::Trace t = np::parse_trace_text({reinterpret_cast<const char*>(data), size});
        (void)np::to_json(t).dump(2);
    } catch (const np::InputError&) {
    }
    return 0;
}
