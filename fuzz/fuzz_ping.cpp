// libFuzzer target: ping output of every platform the reader knows (ping.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::ping({reinterpret_cast<const char*>(data), size});
    return 0;
}
