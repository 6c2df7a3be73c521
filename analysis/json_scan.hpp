#pragma once
// A streaming JSON scanner (RFC 8259) that calls a handler per token, for outputs too large to
// hold as a DOM: the benchmark's 1-hour -P 8 iperf3 document is ~110 MB and must be parsed in
// well under a third of Python's json.load time with under 3× its size in memory. nlohmann's
// SAX interface validates the same grammar but ran at ~55 MB/s here; this one avoids its
// per-token string copies and number re-parsing.
//
// Handler interface (each returns void; throw to stop):
//   start_object(), end_object(), start_array(), end_array(),
//   key(std::string&), string(std::string&), number(double), boolean(bool), null()
// Errors are reported as JsonSyntaxError with the byte offset where the input went wrong.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace np::json_scan {

struct JsonSyntaxError : std::runtime_error {
    JsonSyntaxError(size_t offset_, const std::string& what)
        : std::runtime_error(what), offset(offset_) {}
    size_t offset;
};

namespace detail {

inline void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace detail

template <class Handler>
class Scanner {
  public:
    Scanner(std::string_view text, Handler& h) : s_(text), h_(h) {}

    // Scans exactly one JSON value, with only whitespace around it.
    void run() {
        skip_ws();
        if (p_ >= s_.size()) fail("the JSON ends early (truncated output?): no value");
        value_loop();
        skip_ws();
        if (p_ < s_.size()) fail("unexpected content after the JSON value");
    }

  private:
    [[noreturn]] void fail(const std::string& what) const { throw JsonSyntaxError(p_, what); }
    [[noreturn]] void eof() const {
        throw JsonSyntaxError(p_, "the JSON ends early (truncated output?)");
    }

    void skip_ws() {
        while (p_ < s_.size()) {
            const char c = s_[p_];
            if (c != ' ' && c != '\n' && c != '\t' && c != '\r') return;
            ++p_;
        }
    }

    // Iterative over nesting, so depth costs heap (a vector), never the call stack.
    void value_loop() {
        std::vector<char> stack;  // '{' or '['
        bool want_value = true;   // false: after a value, want ',' or a closer
        while (true) {
            skip_ws();
            if (p_ >= s_.size()) eof();
            if (want_value) {
                const char c = s_[p_];
                if (c == '{') {
                    ++p_;
                    h_.start_object();
                    skip_ws();
                    if (p_ < s_.size() && s_[p_] == '}') {
                        ++p_;
                        h_.end_object();
                        want_value = false;
                    } else {
                        stack.push_back('{');
                        read_key();
                    }
                } else if (c == '[') {
                    ++p_;
                    h_.start_array();
                    skip_ws();
                    if (p_ < s_.size() && s_[p_] == ']') {
                        ++p_;
                        h_.end_array();
                        want_value = false;
                    } else {
                        stack.push_back('[');
                    }
                } else {
                    scalar();
                    want_value = false;
                }
                if (want_value) continue;
            } else {
                if (stack.empty()) return;
                const char c = s_[p_];
                if (c == ',') {
                    ++p_;
                    if (stack.back() == '{') read_key();
                    want_value = true;
                } else if (c == '}' && stack.back() == '{') {
                    ++p_;
                    stack.pop_back();
                    h_.end_object();
                } else if (c == ']' && stack.back() == '[') {
                    ++p_;
                    stack.pop_back();
                    h_.end_array();
                } else {
                    fail(stack.back() == '{' ? "expected ',' or '}' in an object"
                                             : "expected ',' or ']' in an array");
                }
            }
            if (stack.empty() && !want_value) return;
        }
    }

    void read_key() {
        skip_ws();
        if (p_ >= s_.size()) eof();
        if (s_[p_] != '"') fail("expected a quoted key");
        read_string(buf_);
        skip_ws();
        if (p_ >= s_.size()) eof();
        if (s_[p_] != ':') fail("expected ':' after a key");
        ++p_;
        h_.key(buf_);
    }

    void scalar() {
        const char c = s_[p_];
        if (c == '"') {
            read_string(buf_);
            h_.string(buf_);
        } else if (c == 't') {
            literal("true");
            h_.boolean(true);
        } else if (c == 'f') {
            literal("false");
            h_.boolean(false);
        } else if (c == 'n') {
            literal("null");
            h_.null();
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            h_.number(read_number());
        } else {
            fail(std::string("unexpected character '") + c + "'");
        }
    }

    void literal(std::string_view word) {
        if (s_.substr(p_, word.size()) != word) {
            if (s_.size() - p_ < word.size() && word.starts_with(s_.substr(p_))) eof();
            fail("invalid literal");
        }
        p_ += word.size();
    }

    double read_number() {
        const size_t start = p_;
        auto digits = [&] {
            const size_t d0 = p_;
            while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
            return p_ - d0;
        };
        if (s_[p_] == '-') ++p_;
        if (p_ >= s_.size()) eof();
        if (s_[p_] == '0') {
            ++p_;
        } else if (digits() == 0) {
            fail("invalid number");
        }
        if (p_ < s_.size() && s_[p_] == '.') {
            ++p_;
            if (digits() == 0) {
                if (p_ >= s_.size()) eof();
                fail("invalid number: no digits after '.'");
            }
        }
        if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
            ++p_;
            if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
            if (digits() == 0) {
                if (p_ >= s_.size()) eof();
                fail("invalid number: no digits in the exponent");
            }
        }
        double v = 0;
        const auto [ptr, ec] = std::from_chars(s_.data() + start, s_.data() + p_, v);
        if (ec == std::errc::result_out_of_range) {
            // Out of double's range: keep the sign and magnitude class; callers range-check.
            v = s_[start] == '-' ? -HUGE_VAL : HUGE_VAL;
        } else if (ec != std::errc() || ptr != s_.data() + p_) {
            p_ = start;
            fail("invalid number");
        }
        return v;
    }

    void read_string(std::string& out) {
        out.clear();
        ++p_;  // opening quote
        while (true) {
            // Copy the plain run in one go: keys and values rarely hold escapes.
            const size_t run = p_;
            while (p_ < s_.size()) {
                const auto c = static_cast<unsigned char>(s_[p_]);
                if (c == '"' || c == '\\' || c < 0x20) break;
                ++p_;
            }
            out.append(s_.data() + run, p_ - run);
            if (p_ >= s_.size()) eof();
            const char c = s_[p_];
            if (c == '"') {
                ++p_;
                return;
            }
            if (c != '\\') fail("control character inside a string");
            ++p_;
            if (p_ >= s_.size()) eof();
            switch (s_[p_++]) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (s_.substr(p_, 2) != "\\u") fail("unpaired UTF-16 surrogate");
                        p_ += 2;
                        const uint32_t lo = hex4();
                        if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired UTF-16 surrogate");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        fail("unpaired UTF-16 surrogate");
                    }
                    detail::append_utf8(out, cp);
                    break;
                }
                default:
                    --p_;
                    fail("invalid escape in a string");
            }
        }
    }

    uint32_t hex4() {
        if (s_.size() - p_ < 4) eof();
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = s_[p_++];
            v <<= 4;
            if (c >= '0' && c <= '9') {
                v |= static_cast<uint32_t>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                v |= static_cast<uint32_t>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                v |= static_cast<uint32_t>(c - 'A' + 10);
            } else {
                --p_;
                fail("invalid \\u escape");
            }
        }
        return v;
    }

    std::string_view s_;
    Handler& h_;
    size_t p_ = 0;
    std::string buf_;
};

template <class Handler>
void scan(std::string_view text, Handler& h) {
    Scanner<Handler>(text, h).run();
}

}  // namespace np::json_scan
