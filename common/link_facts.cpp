#include "common/link_facts.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace np {
namespace {

// A sysfs value without the newline the kernel ends it with (and any blank around it).
std::string_view trimmed(std::string_view s) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!s.empty() && blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && blank(s.back())) s.remove_suffix(1);
    return s;
}

// A positive decimal int and nothing else; -1 (unknown), 0, 4294967295 (an unsigned -1), a
// number beyond an int or any other text are no value.
std::optional<int> positive_int(std::string_view text) {
    const std::string_view s = trimmed(text);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    if (v <= 0 || v > std::numeric_limits<int>::max()) return std::nullopt;
    return static_cast<int>(v);
}

// The last part of the device/driver link's target, when it looks like a driver's name: letters,
// digits, '_', '-' and '.'. Anything else is no name: a node's reply is not trusted, and the
// name is printed.
std::string driver_name(std::string_view link) {
    std::string_view s = trimmed(link);
    if (const auto slash = s.rfind('/'); slash != std::string_view::npos)
        s.remove_prefix(slash + 1);
    if (s.empty() || s.size() > 64) return {};
    for (const char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        if (!ok) return {};
    }
    if (s == "." || s == "..") return {};
    return std::string(s);
}

}  // namespace

LinkState parse_link_state(const SysfsLinkText& text) {
    LinkState l;
    l.carrier = trimmed(text.carrier) == "1";
    l.speed_mbps = positive_int(text.speed);
    const std::string_view duplex = trimmed(text.duplex);
    if (duplex == "full" || duplex == "half") l.duplex = std::string(duplex);
    l.mtu_bytes = positive_int(text.mtu);
    l.driver = driver_name(text.driver_link);
    return l;
}

}  // namespace np
