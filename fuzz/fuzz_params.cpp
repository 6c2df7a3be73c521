// libFuzzer target: network-performance_params.yml (YAML), as `run` reads it.
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::params({reinterpret_cast<const char*>(data), size});
    return 0;
}
