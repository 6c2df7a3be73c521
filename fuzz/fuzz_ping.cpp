// libFuzzer target: iputils and busybox ping output.
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::read_and_explain({reinterpret_cast<const char*>(data), size}, np::InputFormat::ping,
                               1e9);
    return 0;
}
