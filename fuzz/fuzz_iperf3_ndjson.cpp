// libFuzzer target: iperf3 --json-stream NDJSON. The input follows a start event, so the reader
// stays in NDJSON mode however the fuzzer mutates the first line.
#include <string>

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text = "{\"event\":\"start\",\"data\":{}}\n" +
                             std::string(reinterpret_cast<const char*>(data), size);
    np::fuzz::read_and_explain(text, np::InputFormat::iperf3, 1e9);
    return 0;
}
