// libFuzzer target: terminal transcripts and pages — prompts, commands, fences, <pre>, and the
// outputs of every tool inside them, JSON included.
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::read_and_explain({reinterpret_cast<const char*>(data), size},
                               np::InputFormat::auto_detect, 100e6);
    return 0;
}
