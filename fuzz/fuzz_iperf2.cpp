// libFuzzer target: iperf2 client and server text output, banners included.
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::read_and_explain({reinterpret_cast<const char*>(data), size}, np::InputFormat::iperf2,
                               10e9);
    return 0;
}
