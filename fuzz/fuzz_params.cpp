// libFuzzer target: network-performance_params.yml (YAML), as `run` reads it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/params.hpp"
#include "src/common/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        (void)np::parse_params({reinterpret_cast<const char*>(data), size}, "fuzz.yml");
    } catch (const np::InputError&) {
    }
    return 0;
}
