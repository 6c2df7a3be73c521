// libFuzzer target: iperf3 --json-stream NDJSON. The input follows a start event, so the reader
// stays in NDJSON mode however the fuzzer mutates the first line.
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::iperf3_ndjson({reinterpret_cast<const char*>(data), size});
    return 0;
}
