#pragma once
// Small helpers the text parsers (iperf2, ping, format detection) share: split into lines with
// their numbers, read numbers without locale or exceptions, and refuse inputs that are not text.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace np::text {

struct Line {
    int number;             // 1-based
    std::string_view text;  // without the line terminator (\n or \r\n)
};

std::vector<Line> split_lines(std::string_view text);

// Throws InputError(field) for empty input, NUL bytes (binary data) or input above max_bytes.
void require_text(std::string_view text, const std::string& field, const std::string& what,
                  size_t max_bytes);

std::string_view trim(std::string_view s);

// A decimal number at the start of `s` (after blanks); advances `s` past it.
std::optional<double> take_number(std::string_view& s);
// The next blank-separated word; advances past it.
std::string_view take_word(std::string_view& s);
// Skips blanks; true when `s` then starts with `prefix` (which is consumed).
bool take_prefix(std::string_view& s, std::string_view prefix);

}  // namespace np::text
