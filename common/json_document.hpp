#pragma once
// A JSON document read whole into nlohmann::json (contracts, traces, the probe's messages),
// bounded: read from a ByteSource a chunk at a time, refused as soon as it nests deeper, holds
// more values or is longer than its limits, so a hostile document costs bounded time and memory
// before it is refused — never the 4 GB and the stack overflow of printing a document nested
// 100,000 deep (nlohmann's dump() recurses once per level). Errors are InputError naming the
// source and, where the parser got that far, the key path of the value (e.g. "c.json: tcp_mbps"
// for a 1e400 there), with no library prefix and no raw bytes of the input in the message.
//
// Header-only, depending on nlohmann_json and the standard library only: np-probe, linked
// fully static, compiles common/trace.cpp in directly, and the probe's messages are read with
// it (probe_protocol.hpp).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_source.hpp"
#include "common/errors.hpp"

namespace np {

struct JsonLimits {
    // Deeper than any document np-explain reads or writes (a contract's explanation: 6).
    size_t max_depth = 64;
    // Values (numbers, strings, arrays, objects…) in the whole document. A 10 s trace holds
    // ~10,000; an hour at 100 ms samples ~400,000. Each costs up to ~100 bytes once parsed.
    size_t max_values = 4'000'000;
    // Bytes of text; a file's size is also checked before it is read (src/cli/files.hpp).
    int64_t max_bytes = int64_t{256} << 20;
};

namespace detail {

// The text of a ByteSource as nlohmann's parser reads it: an input iterator over its chunks.
class JsonSourceReader {
  public:
    JsonSourceReader(ByteSource& in, const std::string& source, int64_t max_bytes)
        : in_(in), source_(source), max_bytes_(max_bytes) {
        pull();
    }
    bool at_end() const { return pos_ >= chunk_.size(); }
    char current() const { return chunk_[pos_]; }
    void advance() {
        if (++pos_ >= chunk_.size()) pull();
    }

    struct iterator {
        using iterator_category = std::input_iterator_tag;
        using value_type = char;
        using difference_type = std::ptrdiff_t;
        using pointer = const char*;
        using reference = char;
        JsonSourceReader* r = nullptr;  // null: the end
        char operator*() const { return r->current(); }
        iterator& operator++() {
            r->advance();
            return *this;
        }
        iterator operator++(int) {
            iterator before = *this;
            r->advance();
            return before;
        }
        bool done() const { return r == nullptr || r->at_end(); }
        bool operator==(const iterator& o) const { return done() == o.done(); }
        bool operator!=(const iterator& o) const { return !(*this == o); }
    };

  private:
    void pull() {
        pos_ = 0;
        chunk_ = in_.next();
        bytes_ += static_cast<int64_t>(chunk_.size());
        if (bytes_ > max_bytes_) {
            throw InputError(source_, "is longer than " + std::to_string(max_bytes_ >> 20) +
                                          " MiB, larger than any such document");
        }
    }
    ByteSource& in_;
    const std::string& source_;
    int64_t max_bytes_;
    std::string_view chunk_;
    size_t pos_ = 0;
    int64_t bytes_ = 0;
};

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
// column 5: " and end with "; last read: '<raw input>'": keep the position and the reason,
// drop the prefix and the raw bytes (which may hold anything, terminal escapes included).
inline std::string json_error_reason(const std::string& what) {
    std::string s = what;
    if (!s.empty() && s.front() == '[') {
        const auto close = s.find("] ");
        if (close != std::string::npos) s = s.substr(close + 2);
    }
    if (const auto last = s.find("; last read:"); last != std::string::npos) s.resize(last);
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return s;
}

// nlohmann's DOM builder, with the limits checked at each event. (Not the parser callback:
// json_sax_dom_callback_parser scans the enclosing array for discarded values after every
// object, which makes an array of n objects cost n² — minutes for 20 million {}.)
class BoundedDomBuilder {
  public:
    using json = nlohmann::json;
    BoundedDomBuilder(json& result, const std::string& source, const JsonLimits& limits)
        : dom_(result, /*allow_exceptions=*/true), source_(source), limits_(limits) {}

    bool null() { return counted() && dom_.null(); }
    bool boolean(bool v) { return counted() && dom_.boolean(v); }
    bool number_integer(json::number_integer_t v) { return counted() && dom_.number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { return counted() && dom_.number_unsigned(v); }
    bool number_float(json::number_float_t v, const json::string_t& s) {
        return counted() && dom_.number_float(v, s);
    }
    bool string(json::string_t& v) { return counted() && dom_.string(v); }
    bool binary(json::binary_t& v) { return counted() && dom_.binary(v); }
    bool start_object(std::size_t n) { return enter() && dom_.start_object(n); }
    bool key(json::string_t& k) {
        // Enough of a key to name it; a key longer than that is no field we know.
        keys_.back() = k.substr(0, 64);
        return dom_.key(k);
    }
    bool end_object() { return leave() && dom_.end_object(); }
    bool start_array(std::size_t n) { return enter() && dom_.start_array(n); }
    bool end_array() { return leave() && dom_.end_array(); }
    [[noreturn]] bool parse_error(std::size_t, const std::string&,
                                  const nlohmann::detail::exception& e) {
        // 406: the lexer's only range error, a number beyond a double (1e400).
        if (e.id == 406) throw InputError(field(), "a number out of range (larger than a double)");
        throw InputError(field(), "is not valid JSON: " + json_error_reason(e.what()));
    }

    std::string field() const {
        std::string p;
        for (const auto& k : keys_) {
            if (k.empty()) continue;
            if (!p.empty()) p += '.';
            p += k;
        }
        return p.empty() ? source_ : source_ + ": " + p;
    }

  private:
    bool counted() {
        if (++values_ > limits_.max_values) {
            throw InputError(source_, "holds more than " + std::to_string(limits_.max_values) +
                                          " values, more than any such document");
        }
        return true;
    }
    bool enter() {
        if (keys_.size() >= limits_.max_depth) {
            throw InputError(field(), "nested deeper than " + std::to_string(limits_.max_depth) +
                                          " levels, deeper than any such document");
        }
        keys_.emplace_back();
        return counted();
    }
    bool leave() {
        keys_.pop_back();
        return true;
    }

    nlohmann::detail::json_sax_dom_parser<json> dom_;
    const std::string& source_;
    const JsonLimits& limits_;
    std::vector<std::string> keys_;  // the key at each open level ("" in arrays)
    size_t values_ = 0;
};

}  // namespace detail

// Parses one JSON document from `in`; `source` names it in errors.
inline nlohmann::json parse_json_document(ByteSource& in, const std::string& source,
                                          const JsonLimits& limits = {}) {
    nlohmann::json result;
    detail::BoundedDomBuilder builder(result, source, limits);
    try {
        detail::JsonSourceReader reader(in, source, limits.max_bytes);
        nlohmann::json::sax_parse(detail::JsonSourceReader::iterator{&reader},
                                  detail::JsonSourceReader::iterator{}, &builder);
    } catch (const nlohmann::json::exception& e) {
        // What the DOM builder itself throws (none expected beyond parse_error's).
        throw InputError(builder.field(),
                         "is not valid JSON: " + detail::json_error_reason(e.what()));
    }
    return result;
}

inline nlohmann::json parse_json_document(std::string_view text, const std::string& source,
                                          const JsonLimits& limits = {}) {
    StringSource in(text);
    return parse_json_document(in, source, limits);
}

}  // namespace np
