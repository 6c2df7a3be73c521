#pragma once
// A streaming JSON scanner (RFC 8259) that pulls its input in chunks from a ByteSource and calls
// a handler per token, so a JSON text of any length is read in constant memory: a day-long
// -P 8 iperf3 run at 0.1 s intervals is 2.6 GB of JSON. It validates the whole grammar, as
// json.load does, but converts nothing it is not asked for: numbers reach the handler as their
// text, and keys and strings as views into the chunk whenever they do not span two chunks.
//
// Handler interface (each returns void; throw to stop):
//   start_object(), end_object(), start_array(), end_array(),
//   key(std::string_view), string(std::string_view), number(std::string_view text),
//   boolean(bool), null()
// A view is valid only during the call. Strings longer than kMaxStringBytes reach the handler
// cut to that length (the scanner still reads them to their end): holding them whole would make
// memory grow with the input. Errors are JsonSyntaxError with the byte offset and line.
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/readers/source.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace np::json_scan {

inline constexpr size_t kMaxStringBytes = 64 * 1024;
// Longer than any number a tool writes (cJSON's %1.17g is at most 24 characters).
inline constexpr size_t kMaxNumberChars = 1024;
// Nesting costs one byte of heap per level, never the call stack; this bounds even that.
inline constexpr size_t kMaxDepth = 1 << 20;

struct JsonSyntaxError : std::runtime_error {
    JsonSyntaxError(int64_t offset_, int64_t line_, const std::string& what)
        : std::runtime_error(what), offset(offset_), line(line_) {}
    int64_t offset;  // bytes from the start of the input
    int64_t line;    // 1-based
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

// The blanks JSON allows between tokens.
inline constexpr std::array<bool, 256> kBlank = [] {
    std::array<bool, 256> t{};
    t[' '] = t['\t'] = t['\r'] = t['\n'] = true;
    return t;
}();

// Where a string's plain run ends: at '"', '\\' or a control character.
inline constexpr std::array<bool, 256> kStringStop = [] {
    std::array<bool, 256> t{};
    for (int c = 0; c < 0x20; ++c) t[static_cast<size_t>(c)] = true;
    t['"'] = t['\\'] = true;
    return t;
}();

// The first byte in [p, end) that ends a string's plain run, or end.
inline const char* string_stop(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i control = _mm_set1_epi8(0x1F);
    while (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i stop =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_cmpeq_epi8(_mm_max_epu8(v, control), control));
        if (const int m = _mm_movemask_epi8(stop))
            return p + __builtin_ctz(static_cast<unsigned>(m));
        p += 16;
    }
#endif
    while (p < end && !kStringStop[static_cast<uint8_t>(*p)]) ++p;
    return p;
}

// The first byte in [p, end) that is not a blank, or end.
inline const char* skip_blanks(const char* p, const char* end) {
    while (p < end && kBlank[static_cast<uint8_t>(*p)]) ++p;
    return p;
}

// Newlines in [p, end): how a position becomes a line number.
inline int64_t count_newlines(const char* p, const char* end) {
    int64_t n = 0;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    while (end - p >= 16) {
        // Up to 255 blocks of per-byte counts (a match is -1), then summed with psadbw.
        __m128i counts = _mm_setzero_si128();
        for (int i = 0; i < 255 && end - p >= 16; ++i, p += 16)
            counts = _mm_sub_epi8(
                counts, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), nl));
        const __m128i sums = _mm_sad_epu8(counts, _mm_setzero_si128());
        n += _mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4);
    }
#endif
    return n + std::count(p, end, '\n');
}

// The first byte in [p, end) that is not a digit, or end. Numbers are most of an iperf3
// document's bytes ("bits_per_second": 94660976.341163725): 16 at a time, no loop to mispredict.
// (Blanks are left to the plain loop: their runs are short, and 16 at a time measured slower.)
inline const char* skip_digits(const char* p, const char* end) {
#if defined(__SSE2__)
    while (end - p >= 16) {
        const __m128i v =
            _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_set1_epi8('0'));
        const __m128i nine = _mm_set1_epi8(9);
        const auto digits =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, nine), nine)));
        const unsigned other = ~digits & 0xFFFFu;
        if (other != 0) return p + __builtin_ctz(other);
        p += 16;
    }
#endif
    while (p < end && *p >= '0' && *p <= '9') ++p;
    return p;
}

inline bool digit(char c) {
    return c >= '0' && c <= '9';
}

inline bool number_char(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? — the whole of `s`.
inline bool valid_number(std::string_view s) {
    size_t i = 0;
    const auto digits = [&] {
        const size_t d0 = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
        return i - d0;
    };
    if (i < s.size() && s[i] == '-') ++i;
    if (i < s.size() && s[i] == '0') {
        ++i;
    } else if (digits() == 0) {
        return false;
    }
    if (i < s.size() && s[i] == '.') {
        ++i;
        if (digits() == 0) return false;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (digits() == 0) return false;
    }
    return i == s.size();
}

}  // namespace detail

template <class Handler>
class Scanner {
  public:
    Scanner(ByteSource& in, Handler& h) : in_(in), h_(h) {}

    // Scans the next value; false when only whitespace is left before the end of the input.
    bool value() {
        if (!skip_ws()) return false;
        value_loop();
        return true;
    }
    // Whether anything but whitespace follows the last value.
    bool more() { return skip_ws(); }

    // The line of the current position, 1-based.
    int64_t line() const { return 1 + lines_before_ + detail::count_newlines(begin_, p_); }
    int64_t offset() const { return base_ + (p_ - begin_); }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw JsonSyntaxError(offset(), line(), what);
    }
    [[noreturn]] void eof() const { fail("the JSON ends early (truncated output?)"); }
    [[noreturn]] void unexpected(char c) const {
        if (c == '\0') fail("binary data (a NUL byte), not JSON text");
        fail(std::string("unexpected character '") + c + "'");
    }

    bool refill() {
        // Lines are counted a chunk at a time, not per blank: only an error needs them.
        lines_before_ += detail::count_newlines(begin_, end_);
        base_ += end_ - begin_;
        const std::string_view c = in_.next();
        begin_ = p_ = c.data();
        end_ = c.data() + c.size();
        return !c.empty();
    }
    bool ensure() { return p_ < end_ || refill(); }
    char get() {
        if (!ensure()) eof();
        return *p_++;
    }

    bool skip_ws() {
        while (true) {
            p_ = detail::skip_blanks(p_, end_);
            if (p_ < end_ || !refill()) return p_ < end_;
        }
    }
    void need_ws() {
        if (!skip_ws()) eof();
    }

    // Iterative over nesting, so depth costs heap (a vector), never the call stack.
    void value_loop() {
        stack_.clear();
        bool want_value = true;  // false: after a value, want ',' or a closer
        while (true) {
            need_ws();
            const char c = *p_;
            if (want_value) {
                if (c == '{') {
                    ++p_;
                    h_.start_object();
                    need_ws();
                    if (*p_ == '}') {
                        ++p_;
                        h_.end_object();
                        want_value = false;
                    } else {
                        push('{');
                        read_key();
                    }
                } else if (c == '[') {
                    ++p_;
                    h_.start_array();
                    need_ws();
                    if (*p_ == ']') {
                        ++p_;
                        h_.end_array();
                        want_value = false;
                    } else {
                        push('[');
                    }
                } else {
                    scalar(c);
                    want_value = false;
                }
                if (want_value) continue;
            } else {
                if (c == ',') {
                    ++p_;
                    if (stack_.back() == '{') read_key();
                    want_value = true;
                } else if (c == '}' && stack_.back() == '{') {
                    ++p_;
                    stack_.pop_back();
                    h_.end_object();
                } else if (c == ']' && stack_.back() == '[') {
                    ++p_;
                    stack_.pop_back();
                    h_.end_array();
                } else {
                    if (c == '\0') unexpected(c);
                    fail(stack_.back() == '{' ? "expected ',' or '}' in an object"
                                              : "expected ',' or ']' in an array");
                }
            }
            if (stack_.empty() && !want_value) return;
        }
    }

    void push(char c) {
        if (stack_.size() >= kMaxDepth) fail("nested deeper than any JSON a tool writes");
        stack_.push_back(c);
    }

    void read_key() {
        need_ws();
        if (*p_ != '"') fail("expected a quoted key");
        // The handler sees the key before the ':' is read, while its view is still valid.
        h_.key(read_string());
        need_ws();
        if (*p_ != ':') fail("expected ':' after a key");
        ++p_;
    }

    void scalar(char c) {
        if (c == '"') {
            h_.string(read_string());
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
            unexpected(c);
        }
    }

    void literal(std::string_view word) {
        for (const char w : word) {
            if (!ensure()) eof();
            if (*p_ != w) fail("invalid literal");
            ++p_;
        }
    }

    std::string_view read_number() {
        const char* start = p_;
        // The grammar checked as the characters go by; a number cut by the chunk's end, or
        // followed by more number characters, takes the careful path below.
        const char* p = p_;
        const char* e = end_;
        bool ok = true;
        if (*p == '-') ++p;
        if (p < e && *p == '0') {
            ++p;
        } else {
            const char* d = p;
            p = detail::skip_digits(p, e);
            ok = p != d;
        }
        if (ok && p < e && *p == '.') {
            const char* d = ++p;
            p = detail::skip_digits(p, e);
            ok = p != d;
        }
        if (ok && p < e && (*p == 'e' || *p == 'E')) {
            ++p;
            if (p < e && (*p == '+' || *p == '-')) ++p;
            const char* d = p;
            while (p < e && detail::digit(*p)) ++p;
            ok = p != d;
        }
        if (ok && p < e && !detail::number_char(*p)) {
            p_ = p;
            return std::string_view(start, static_cast<size_t>(p - start));
        }
        while (p_ < end_ && detail::number_char(*p_)) ++p_;
        std::string_view text(start, static_cast<size_t>(p_ - start));
        if (p_ == end_) {
            // The number may go on in the next chunk: gather it in its own buffer.
            num_.assign(text);
            while (refill()) {
                const char* s = p_;
                while (p_ < end_ && detail::number_char(*p_)) ++p_;
                num_.append(s, static_cast<size_t>(p_ - s));
                if (num_.size() > kMaxNumberChars) fail("a number longer than any tool writes");
                if (p_ < end_) break;
            }
            text = num_;
        }
        if (text.size() > kMaxNumberChars) fail("a number longer than any tool writes");
        if (!detail::valid_number(text)) {
            if (!ensure()) eof();
            fail("invalid number '" + std::string(text.substr(0, 32)) + "'");
        }
        return text;
    }

    void append_capped(const char* s, size_t n) {
        if (buf_.size() < kMaxStringBytes)
            buf_.append(s, std::min(n, kMaxStringBytes - buf_.size()));
    }

    // Inlined: every key goes through here (measured 6 % of a document's time as a call).
    [[gnu::always_inline]] std::string_view read_string() {
        ++p_;  // opening quote
        const char* start = p_;
        // Keys and values rarely hold escapes and rarely span chunks: a view into the chunk.
        p_ = detail::string_stop(p_, end_);
        if (p_ < end_ && *p_ == '"') {
            const std::string_view v(start, static_cast<size_t>(p_ - start));
            ++p_;
            return v;
        }
        buf_.clear();
        append_capped(start, static_cast<size_t>(p_ - start));
        return read_string_rest();
    }

    [[gnu::noinline]] std::string_view read_string_rest() {
        while (true) {
            if (!ensure()) eof();
            const char* run = p_;
            p_ = detail::string_stop(p_, end_);
            append_capped(run, static_cast<size_t>(p_ - run));
            if (p_ == end_) continue;
            const char c = *p_;
            if (c == '"') {
                ++p_;
                return buf_;
            }
            if (c != '\\') {
                if (c == '\0') unexpected(c);
                fail("control character inside a string");
            }
            ++p_;
            std::string decoded;
            switch (get()) {
                case '"':
                    decoded = "\"";
                    break;
                case '\\':
                    decoded = "\\";
                    break;
                case '/':
                    decoded = "/";
                    break;
                case 'b':
                    decoded = "\b";
                    break;
                case 'f':
                    decoded = "\f";
                    break;
                case 'n':
                    decoded = "\n";
                    break;
                case 'r':
                    decoded = "\r";
                    break;
                case 't':
                    decoded = "\t";
                    break;
                case 'u': {
                    uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (get() != '\\' || get() != 'u') fail("unpaired UTF-16 surrogate");
                        const uint32_t lo = hex4();
                        if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired UTF-16 surrogate");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        fail("unpaired UTF-16 surrogate");
                    }
                    detail::append_utf8(decoded, cp);
                    break;
                }
                default:
                    --p_;
                    fail("invalid escape in a string");
            }
            append_capped(decoded.data(), decoded.size());
        }
    }

    uint32_t hex4() {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = get();
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

    ByteSource& in_;
    Handler& h_;
    const char* begin_ = nullptr;  // the current chunk
    const char* p_ = nullptr;
    const char* end_ = nullptr;
    int64_t base_ = 0;          // offset of the current chunk in the input
    int64_t lines_before_ = 0;  // newlines in the chunks before the current one
    std::vector<char> stack_;   // '{' or '['
    std::string buf_;           // a string that spans chunks or holds escapes
    std::string num_;           // a number that spans chunks
};

}  // namespace np::json_scan
