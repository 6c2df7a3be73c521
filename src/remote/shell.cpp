#include "src/remote/shell.hpp"

namespace np::remote {

std::string shell_quote(std::string_view text) {
    std::string q = "'";
    for (char c : text) {
        if (c == '\'') {
            q += "'\\''";
        } else {
            q += c;
        }
    }
    q += '\'';
    return q;
}

std::string shell_join(std::initializer_list<std::string_view> words) {
    std::string line;
    for (std::string_view w : words) {
        if (!line.empty()) line += ' ';
        line += shell_quote(w);
    }
    return line;
}

bool is_private_dir_reply(std::string_view path) {
    if (path.size() != kPrivateDirPrefix.size() + 10 || !path.starts_with(kPrivateDirPrefix))
        return false;
    for (const char c : path.substr(kPrivateDirPrefix.size())) {
        const bool alnum =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum) return false;
    }
    return true;
}

}  // namespace np::remote
