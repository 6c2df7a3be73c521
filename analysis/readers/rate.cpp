#include "analysis/readers/rate.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

#include "common/errors.hpp"

namespace np {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

double parse_rate_bps(std::string_view text, const std::string& field) {
    const auto bad = [&] {
        return InputError(field,
                          fmt::format("'{}' is not a rate; expected a number of bit/s with an "
                                      "optional k, M, G or T suffix (e.g. 10G, 2.5G, 100M)",
                                      text));
    };
    const std::string s = lower(text);
    double value = 0;
    const char* begin = s.data();
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::fixed);
    if (ec != std::errc() || ptr == begin || !std::isfinite(value)) throw bad();
    std::string_view unit(ptr, static_cast<size_t>(end - ptr));
    double scale = 1;
    if (!unit.empty()) {
        switch (unit.front()) {
            case 'k':
                scale = 1e3;
                unit.remove_prefix(1);
                break;
            case 'm':
                scale = 1e6;
                unit.remove_prefix(1);
                break;
            case 'g':
                scale = 1e9;
                unit.remove_prefix(1);
                break;
            case 't':
                scale = 1e12;
                unit.remove_prefix(1);
                break;
            default:
                break;
        }
    }
    if (!(unit.empty() || unit == "bps" || unit == "bit/s" || unit == "bits/s" || unit == "b" ||
          unit == "bit")) {
        throw bad();
    }
    if (value <= 0) throw InputError(field, fmt::format("'{}' must be a positive rate", text));
    return value * scale;
}

double parse_link_rate_bps(std::string_view text, const std::string& field) {
    const double bps = parse_rate_bps(text, field);
    if (bps < kMinLinkBps || bps > kMaxLinkBps) {
        throw InputError(field,
                         fmt::format("'{}' is outside the link rates accepted, 10M to 400G", text));
    }
    return bps;
}

}  // namespace np
