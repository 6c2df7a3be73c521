// libFuzzer target: a probe's trace (np-trace/1), as explain --trace, attach and report read it;
// what parses is written back (to_json) and printed, as run saves a node's trace.
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::trace({reinterpret_cast<const char*>(data), size});
    return 0;
}
