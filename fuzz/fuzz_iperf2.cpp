// libFuzzer target: iperf2 client and server text output, banners included.
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::iperf2({reinterpret_cast<const char*>(data), size});
    return 0;
}
