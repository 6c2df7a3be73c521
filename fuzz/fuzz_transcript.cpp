// libFuzzer target: terminal transcripts and pages — prompts, commands, fences, <pre>, and the
// outputs of every tool inside them, JSON included.
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::transcript({reinterpret_cast<const char*>(data), size});
    return 0;
}
