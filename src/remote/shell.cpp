#include "src/remote/shell.hpp"

namespace np::remote {

std::string trimmed(std::string reply) {
    while (!reply.empty() && (reply.back() == '\n' || reply.back() == '\r' || reply.back() == ' '))
        reply.pop_back();
    return reply;
}

namespace {

bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

bool is_private_dir_reply(std::string_view path) {
    constexpr size_t kMaxPath = 4096;
    if (path.size() > kMaxPath || !path.starts_with('/')) return false;
    const size_t last = path.rfind('/');
    const std::string_view name = path.substr(last + 1);
    if (name.size() != kPrivateDirName.size() + 10 || !name.starts_with(kPrivateDirName))
        return false;
    for (const char c : name.substr(kPrivateDirName.size()))
        if (!is_alnum(c)) return false;
    // The parent (TMPDIR): plain components only.
    std::string_view parent = path.substr(1, last == 0 ? 0 : last - 1);
    while (!parent.empty()) {
        const size_t slash = parent.find('/');
        const std::string_view part = parent.substr(0, slash);
        if (part.empty() || part == "." || part == "..") return false;
        for (const char c : part)
            if (!is_alnum(c) && c != '.' && c != '_' && c != '-' && c != '+' && c != '@')
                return false;
        if (slash == std::string_view::npos) break;
        parent.remove_prefix(slash + 1);
        if (parent.empty()) return false;  // a trailing slash: "//" before the name
    }
    return true;
}

}  // namespace np::remote
