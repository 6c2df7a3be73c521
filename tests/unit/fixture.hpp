#pragma once
// Reads a file under tests/fixtures for unit tests of the parsers and the engine, makes inputs
// too large to hold, and says what InputError a call throws.
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "analysis/readers/source.hpp"
#include "common/errors.hpp"

namespace np::testing {

// The field an np-trace/1 document's parse error names, or "(no error)".
inline std::string trace_error_field(const nlohmann::json& doc) {
    try {
        parse_trace(doc);
    } catch (const InputError& e) {
        return e.field();
    }
    return "(no error)";
}

// The explanation's finding with `code`, or nullptr.
inline const Finding* find_finding(const Explanation& e, const std::string& code) {
    for (const auto& f : e.findings)
        if (f.code == code) return &f;
    return nullptr;
}

// A finding's evidence under `key`, or null.
inline nlohmann::json evidence(const Finding& f, const std::string& key) {
    for (const auto& [k, v] : f.evidence)
        if (k == key) return v;
    return nullptr;
}

// The explanation of these tests and traces on a link of `link_bps`, as `explain` gives it.
inline Explanation explain_tests(std::vector<ThroughputTest> tests, std::vector<Trace> traces,
                                 double link_bps, std::vector<PingTest> pings = {},
                                 std::vector<ToolFailure> failures = {}) {
    ExplainInput in;
    in.link_bps = link_bps;
    in.measurements.throughput = std::move(tests);
    in.measurements.pings = std::move(pings);
    in.measurements.failures = std::move(failures);
    in.traces = std::move(traces);
    return explain(in);
}

// The codes raised, in order ("LINK_SHARED UDP_LOSS "), for a failing assertion's message.
inline std::string codes_of(const Explanation& e) {
    std::string s;
    for (const auto& f : e.findings) s += f.code + " ";
    return s;
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

inline std::string fixture(const std::string& relative) {
    const std::string path = std::string(NP_FIXTURES_DIR) + "/" + relative;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("missing fixture " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The real probe's traces of a UDP test on a 10 GbE veth whose receiving socket overflowed, and
// iperf3's output of it (tests/fixtures/probe), as explain takes them.
inline ExplainInput udp_overload_input() {
    ExplainInput in;
    in.link_bps = 10e9;
    in.measurements =
        parse_measurements(fixture("probe/udp-overload-iperf3.json"), "udp-overload-iperf3.json");
    in.traces = {parse_trace_text(fixture("probe/udp-overload-client.json")),
                 parse_trace_text(fixture("probe/udp-overload-server.json"))};
    return in;
}

// "field: what" of the InputError `f` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.field() + ": " + e.what();
    }
    return "(no error)";
}

// `head`, then `body` `times` times, then `tail`, in 64 KiB chunks, without holding it all:
// inputs as large as the ones issue 12 found, at the cost of one chunk.
class Repeated : public np::ByteSource {
  public:
    Repeated(std::string head, const std::string& body, int64_t times, std::string tail)
        : head_(std::move(head)), tail_(std::move(tail)), left_(times) {
        while (block_.size() < 65536) block_ += body;
        per_block_ = static_cast<int64_t>(block_.size() / body.size());
        body_ = body;
    }
    std::string_view next() override {
        ++chunks;
        if (!head_done_) {
            head_done_ = true;
            return head_;
        }
        if (left_ >= per_block_) {
            left_ -= per_block_;
            return block_;
        }
        if (left_ > 0) {
            rest_.clear();
            for (; left_ > 0; --left_) rest_ += body_;
            return rest_;
        }
        if (!tail_done_) {
            tail_done_ = true;
            return tail_;
        }
        return {};
    }
    int64_t chunks = 0;

  private:
    std::string head_, tail_, block_, body_, rest_;
    int64_t left_, per_block_ = 1;
    bool head_done_ = false, tail_done_ = false;
};

}  // namespace np::testing
