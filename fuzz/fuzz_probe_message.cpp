// libFuzzer target: one NDJSON message from a node's np-probe, as src/experiment/node.cpp reads
// it (the node's reply is not trusted): parsed with parse_message, its fields looked up as
// node.cpp looks them up, a trace message printed back and read as a trace.
#include <cstddef>
#include <cstdint>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    np::fuzz::probe_message({reinterpret_cast<const char*>(data), size});
    return 0;
}
