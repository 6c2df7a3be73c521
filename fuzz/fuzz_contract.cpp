// libFuzzer target: a result contract, np_contract_<mode>.json, as attach, report and parity read
// it: parsed (bounded), its trace references checked, its figures explained, the explanation
// attached and the document printed again, as attach writes it.
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::contract({reinterpret_cast<const char*>(data), size});
    return 0;
}
