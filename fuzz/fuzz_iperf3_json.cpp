// libFuzzer target: iperf3 -J documents (and iperf3's text output, which --iperf3 also takes).
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::iperf3_json({reinterpret_cast<const char*>(data), size});
    return 0;
}
