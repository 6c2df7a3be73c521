#include "analysis/readers/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace np::text {

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

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    for (std::string_view w = take_word(s); !w.empty(); w = take_word(s)) out.emplace_back(w);
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

std::map<std::string, std::string> key_values(std::string_view s) {
    std::map<std::string, std::string> kv;
    while (!s.empty()) {
        const size_t end = std::min(s.find('\n'), s.size());
        const std::string_view line = s.substr(0, end);
        if (const size_t eq = line.find('='); eq != std::string_view::npos)
            kv[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
        s.remove_prefix(std::min(end + 1, s.size()));
    }
    return kv;
}

bool take_prefix(std::string_view& s, std::string_view prefix) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    if (!s.starts_with(prefix)) return false;
    s.remove_prefix(prefix.size());
    return true;
}

namespace {

std::optional<double> bytes_unit(std::string_view u) {
    if (u == "Bytes" || u == "Byte") return 1.0;
    if (u == "KBytes" || u == "KByte") return 1024.0;
    if (u == "MBytes" || u == "MByte") return 1024.0 * 1024;
    if (u == "GBytes" || u == "GByte") return 1024.0 * 1024 * 1024;
    if (u == "TBytes" || u == "TByte") return 1024.0 * 1024 * 1024 * 1024;
    return std::nullopt;
}

std::optional<double> rate_unit(std::string_view u) {
    if (u == "bits/sec") return 1.0;
    if (u == "Kbits/sec") return 1e3;
    if (u == "Mbits/sec") return 1e6;
    if (u == "Gbits/sec") return 1e9;
    if (u == "Tbits/sec") return 1e12;
    if (u.ends_with("/sec")) {
        if (auto b = bytes_unit(u.substr(0, u.size() - 4))) return *b * 8;
    }
    return std::nullopt;
}

int decimals_of(std::string_view printed) {
    const size_t dot = printed.find('.');
    return dot == std::string_view::npos ? 0 : static_cast<int>(printed.size() - dot - 1);
}

}  // namespace

std::optional<Quantity> take_quantity(std::string_view& s, bool rate) {
    std::string_view save = s;
    std::string_view digits = take_word(s);
    std::string_view d = digits;
    const auto v = take_number(d);
    if (!v || !d.empty() || *v < 0) {
        s = save;
        return std::nullopt;
    }
    const std::string_view unit = take_word(s);
    const auto scale = rate ? rate_unit(unit) : bytes_unit(unit);
    if (!scale) {
        s = save;
        return std::nullopt;
    }
    static constexpr double kHalfUnit[] = {0.5, 0.05, 0.005, 0.0005, 0.00005};
    const int decimals = std::min(decimals_of(digits), 4);
    return Quantity{*v * *scale, kHalfUnit[decimals] * *scale};
}

}  // namespace np::text
