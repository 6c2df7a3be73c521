// libFuzzer target: the fan-out's inventory of pairs (network-performance_pairs.yml, YAML) as
// `np-explain pairs` reads and schedules it, and the np-pairs/1 schedule it writes read back as
// `parity` and `report` read a gathered dir's np_pairs.json. An input that starts with '{' is
// also read as such a schedule directly.
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::pairs({reinterpret_cast<const char*>(data), size});
    return 0;
}
