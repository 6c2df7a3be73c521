#include "common/shell_quote.hpp"

namespace np {

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

}  // namespace np
