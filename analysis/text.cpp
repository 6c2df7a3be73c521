#include "analysis/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "analysis/error.hpp"

namespace np::text {

std::vector<Line> split_lines(std::string_view text) {
    std::vector<Line> lines;
    int n = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view l = text.substr(pos, nl - pos);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        lines.push_back({++n, l});
        pos = nl + 1;
    }
    return lines;
}

void require_text(std::string_view text, const std::string& field, const std::string& what,
                  size_t max_bytes) {
    if (trim(text).empty()) throw InputError(field, fmt::format("empty input: no {}", what), 1);
    if (text.size() > max_bytes) {
        throw InputError(field, fmt::format("{} bytes is far more than any {} (limit {} bytes)",
                                            text.size(), what, max_bytes));
    }
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
        const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + nul, '\n'));
        throw InputError(field, fmt::format("binary data, not {} text", what), line);
    }
}

std::string_view trim(std::string_view s) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (!s.empty() && blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && blank(s.back())) s.remove_suffix(1);
    return s;
}

std::optional<double> take_number(std::string_view& s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    double v = 0;
    const char* begin = s.data();
    const char* end = s.data() + s.size();
    // A leading '+' (iputils' "+3 errors") is not accepted by from_chars.
    if (begin != end && *begin == '+') ++begin;
    auto [ptr, ec] = std::from_chars(begin, end, v, std::chars_format::fixed);
    if (ec != std::errc() || ptr == begin || !std::isfinite(v)) return std::nullopt;
    s.remove_prefix(static_cast<size_t>(ptr - s.data()));
    return v;
}

std::string_view take_word(std::string_view& s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    size_t n = 0;
    while (n < s.size() && s[n] != ' ' && s[n] != '\t') ++n;
    std::string_view w = s.substr(0, n);
    s.remove_prefix(n);
    return w;
}

bool take_prefix(std::string_view& s, std::string_view prefix) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    if (!s.starts_with(prefix)) return false;
    s.remove_prefix(prefix.size());
    return true;
}

}  // namespace np::text
