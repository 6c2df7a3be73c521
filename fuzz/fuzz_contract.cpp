// libFuzzer target: a result contract, np_contract_<mode>.json, as attach, report and parity read
// it: parsed (bounded), its trace references checked, its figures explained, the explanation
// attached and the document printed again, as attach writes it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/contract.hpp"
#include "analysis/explain.hpp"
#include "src/common/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        np::Contract c =
            np::parse_contract({reinterpret_cast<const char*>(data), size}, "fuzz.json");
        (void)np::contract_trace_files(c);
        np::ExplainInput in;
        in.link_bps = 1e9;
        in.measurements = np::measurements_from_contract(c);
        const np::Explanation e = np::explain(in);
        np::attach_explanation(c.document, e, {}, in.link_bps);
        (void)c.document.dump(2);
    } catch (const np::InputError&) {
    }
    return 0;
}
