// libFuzzer target: one NDJSON message from a node's np-probe, as src/experiment/node.cpp reads
// it (the node's reply is not trusted): parsed with parse_message, its fields looked up as
// node.cpp looks them up, a trace message printed back and read as a trace.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/trace.hpp"
#include "src/common/errors.hpp"
#include "src/common/probe_protocol.hpp"

namespace proto = np::probe_protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto j = proto::parse_message({reinterpret_cast<const char*>(data), size});
    if (!j.is_object()) return 0;
    (void)(j.value(std::string(proto::kTypeKey), "") == proto::kMessageReady);
    if (j.contains("last_sample") && j["last_sample"].is_object()) {
        const auto& s = j["last_sample"];
        try {
            (void)(s.value("interval_ms", 0.0) + s.value("tx_wire_bytes", 0.0));
        } catch (const nlohmann::json::exception&) {
            // node.cpp's value() on a field of another type: it must catch this too
        }
    }
    j.erase(std::string(proto::kTypeKey));
    const std::string text = j.dump(2);
    try {
        (void)np::parse_trace_text(text);
    } catch (const np::InputError&) {
    }
    return 0;
}
