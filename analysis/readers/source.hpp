#pragma once
// What the line-based readers add to a ByteSource (common/byte_source.hpp): a peek at its
// first bytes and its lines, bounded. analysis/ never opens anything itself.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/byte_source.hpp"

namespace np {

// A source whose first bytes can be looked at before it is read: format detection peeks, then
// the chosen reader pulls everything, the peeked bytes first.
class PeekableSource : public ByteSource {
  public:
    explicit PeekableSource(ByteSource& in) : in_(in) {}
    // Up to `n` bytes from the start (fewer when the input is shorter). Only before next().
    std::string_view peek(size_t n);
    // Drops the first `n` bytes peeked (a byte-order mark). Only before next().
    void skip(size_t n);
    std::string_view next() override;

  private:
    ByteSource& in_;
    std::string head_;
    bool head_given_ = false;
    std::string_view pending_;  // the rest of the chunk that completed the peek
};

// Lines of a source, without their terminator (\n or \r\n), numbered from 1. A line longer
// than `max_line` bytes is cut there and marked, the rest of it skipped: no tool prints such a
// line, and holding it would make memory grow with the input.
class LineReader {
  public:
    struct Line {
        int64_t number = 0;
        std::string_view text;
        bool cut = false;  // longer than max_line: `text` is its beginning
    };
    static constexpr size_t kMaxLine = 64 * 1024;

    explicit LineReader(ByteSource& in, size_t max_line = kMaxLine)
        : in_(in), max_line_(max_line) {}
    // The next line, valid until the next call; false at the end of the input.
    bool next(Line& line);
    int64_t lines_read() const { return number_; }
    int64_t bytes_read() const { return bytes_; }

  private:
    ByteSource& in_;
    size_t max_line_;
    std::string_view chunk_;
    std::string joined_;  // a line that spans chunks
    int64_t number_ = 0;
    int64_t bytes_ = 0;
    bool end_ = false;
};

}  // namespace np
