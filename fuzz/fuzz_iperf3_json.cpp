// libFuzzer target: iperf3 -J documents (and iperf3's text output, which --iperf3 also takes).
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::read_and_explain({reinterpret_cast<const char*>(data), size}, np::InputFormat::iperf3,
                               1e9);
    return 0;
}
