#pragma once
// What every fuzz target shares: the input handed over in pieces, as a file is read (the chunk
// size follows from the input's length, so a seed keeps its bytes and still meets every
// boundary across a corpus), read as `format`, its banners used and the result explained. Any
// input must end in a result or an InputError; a crash, leak, hang or UB (ASan+UBSan) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/explain.hpp"
#include "analysis/inputs.hpp"
#include "analysis/source.hpp"
#include "src/common/errors.hpp"

namespace np::fuzz {

inline size_t chunk_for(size_t size) {
    return size % 13 == 0 ? 0 : 1 + size % 61;
}

inline void read_and_explain(std::string_view text, InputFormat format, double link_bps) {
    try {
        StringSource in(text, chunk_for(text.size()));
        ExplainInput e;
        e.link_bps = link_bps;
        e.measurements = parse_measurements(in, "fuzz", format);
        use_server_banners(e.measurements);
        (void)explain(e);
    } catch (const InputError&) {
    }
}

}  // namespace np::fuzz
