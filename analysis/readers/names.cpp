#include "analysis/readers/names.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"

namespace np {
namespace {

bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool plain_name(std::string_view name, size_t max, std::string_view extra) {
    if (name.empty() || name.size() > max || name.front() == '.' || name.front() == '-')
        return false;
    for (const char c : name)
        if (!is_alnum(c) && extra.find(c) == std::string_view::npos) return false;
    return true;
}

}  // namespace

bool is_mode_name(std::string_view name) {
    return plain_name(name, 64, "._-");
}

void check_mode_name(std::string_view name, const std::string& field) {
    if (!is_mode_name(name))
        throw InputError(field, fmt::format("'{}' is not a mode name (1-64 letters, digits, '.', "
                                            "'_' or '-', not starting with '.' or '-')",
                                            terminal_safe(name.substr(0, 80))));
}

bool is_node_name(std::string_view name) {
    return plain_name(name, 253, "._-:");
}

void check_node_name(std::string_view name, const std::string& field) {
    if (!is_node_name(name))
        throw InputError(field,
                         fmt::format("'{}' is not a node name: a host name, address or ssh_config "
                                     "Host alias of letters, digits, '.', '_', '-' and ':', not "
                                     "starting with '.' or '-'",
                                     terminal_safe(name.substr(0, 80))));
}

void check_contained_path(std::string_view path, const std::string& field) {
    const auto refuse = [&](const char* why) {
        throw InputError(field, fmt::format("'{}' {}: a contract names only files inside its "
                                            "run directory",
                                            terminal_safe(path.substr(0, 200)), why));
    };
    if (path.empty()) refuse("is empty");
    if (path.front() == '/') refuse("is an absolute path");
    if (path.size() > 4096) refuse("is too long");
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find('/', start);
        if (end == std::string_view::npos) end = path.size();
        const std::string_view part = path.substr(start, end - start);
        if (part.empty() || part == ".") refuse("has an empty or '.' part");
        if (part == "..") refuse("climbs out with '..'");
        for (const char c : part)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) refuse("has control characters");
        start = end + 1;
    }
}

std::string terminal_safe(std::string_view text, bool keep_newlines) {
    std::string out;
    out.reserve(text.size());
    const auto hex = [&](unsigned char c) { out += fmt::format("\\x{:02x}", c); };
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            if ((c < 0x20 && !(keep_newlines && (c == '\n' || c == '\t'))) || c == 0x7f)
                hex(c);
            else
                out += static_cast<char>(c);
            ++i;
            continue;
        }
        // A UTF-8 sequence: its length from the lead byte, every continuation byte checked.
        size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        if (c >= 0xf5) len = 0;
        bool ok = len > 0 && i + len <= text.size();
        for (size_t k = 1; ok && k < len; ++k)
            ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
        // C1 controls (U+0080..U+009F) are 0xc2 0x80..0x9f: terminals act on them too.
        if (ok && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) ok = false;
        if (!ok) {
            hex(c);
            ++i;
            continue;
        }
        out.append(text.substr(i, len));
        i += len;
    }
    return out;
}

}  // namespace np
