// The body of every libFuzzer target (fuzz/fuzz_*.cpp), compiled once: each target is the
// libFuzzer entry point calling its reader here, so the sanitized build compiles the readers'
// headers once, not ten times (docs/performance.md). Any input must end in a result or an
// InputError; a crash, leak, hang or UB (ASan+UBSan) is a bug.
#include "fuzz/readers.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/explain.hpp"
#include "analysis/explanation/pairs.hpp"
#include "analysis/readers/inputs.hpp"
#include "analysis/readers/params.hpp"
#include "analysis/readers/source.hpp"
#include "common/errors.hpp"
#include "common/json_document.hpp"
#include "common/probe_protocol.hpp"
#include "common/trace.hpp"

namespace np::fuzz {
namespace {

namespace proto = np::probe_protocol;

// The input handed over in pieces, as a file is read (the chunk size follows from the input's
// length, so a seed keeps its bytes and still meets every boundary across a corpus), read as
// `format`, its banners used and the result explained.
size_t chunk_for(size_t size) {
    return size % 13 == 0 ? 0 : 1 + size % 61;
}

void read_and_explain(std::string_view text, InputFormat format, double link_bps) {
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

}  // namespace

void iperf3_json(std::string_view input) {
    read_and_explain(input, np::InputFormat::iperf3, 1e9);
}

void iperf3_ndjson(std::string_view input) {
    const std::string text = "{\"event\":\"start\",\"data\":{}}\n" + std::string(input);
    read_and_explain(text, np::InputFormat::iperf3, 1e9);
}

void iperf2(std::string_view input) {
    read_and_explain(input, np::InputFormat::iperf2, 10e9);
}

void ping(std::string_view input) {
    read_and_explain(input, np::InputFormat::ping, 1e9);
}

void transcript(std::string_view input) {
    read_and_explain(input, np::InputFormat::auto_detect, 100e6);
}

void params(std::string_view input) {
    try {
        (void)np::parse_params(input, "fuzz.yml");
    } catch (const np::InputError&) {
    }
}

void pairs(std::string_view input) {
    const std::string_view text = input;
    try {
        const np::PairPlan plan = np::parse_pair_plan(text, "fuzz.yml", np::Params{});
        (void)np::render_pair_plan(plan);
        (void)np::pair_plan_from_json(np::to_json(plan), "np_pairs.json");
    } catch (const np::InputError&) {
    }
    if (!text.empty() && text.front() == '{') {
        try {
            (void)np::pair_plan_from_json(np::parse_json_document(text, "fuzz.json"), "fuzz.json");
        } catch (const np::InputError&) {
        }
    }
}

void contract(std::string_view input) {
    try {
        np::Contract c = np::parse_contract(input, "fuzz.json");
        (void)np::contract_trace_files(c);
        np::ExplainInput in;
        in.link_bps = 1e9;
        in.measurements = np::measurements_from_contract(c);
        const np::Explanation e = np::explain(in);
        np::attach_explanation(c.document, e, {}, in.link_bps, in.measurements);
        (void)c.document.dump(2);
    } catch (const np::InputError&) {
    }
}

void trace(std::string_view input) {
    try {
        const np::Trace t = np::parse_trace_text(input);
        (void)np::to_json(t).dump(2);
    } catch (const np::InputError&) {
    }
}

void probe_message(std::string_view input) {
    auto m = proto::parse_message(input);
    if (!m) return;
    nlohmann::json& j = *m;
    (void)(proto::message_type(m) == proto::kMessageReady);
    if (j.contains("last_sample") && j["last_sample"].is_object()) {
        const auto& s = j["last_sample"];
        (void)(proto::number_field(s, "interval_ms") + proto::number_field(s, "tx_wire_bytes"));
    }
    // As the runner takes a trace: the message parsed once, read as a trace from the document.
    j.erase(std::string(proto::kTypeKey));
    try {
        (void)np::parse_trace(j);
    } catch (const np::InputError&) {
    }
}

}  // namespace np::fuzz
