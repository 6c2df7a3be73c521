#pragma once
// What np-explain prints for people goes through here: text that came from input files (a
// tool's error, host, mode and file names) has its control characters escaped, so a crafted
// file cannot retitle the window, clear the screen or hide lines (analysis/readers/names.hpp).
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/readers/names.hpp"

namespace np::cli {

inline void print_text(std::FILE* to, std::string_view text) {
    const std::string safe = terminal_safe(text, /*keep_newlines=*/true);
    std::fwrite(safe.data(), 1, safe.size(), to);
}
inline void print_text(std::string_view text) {
    print_text(stdout, text);
}
// Each of `warnings` on stderr, one line each after "np-explain: warning: ".
inline void print_warnings(const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) print_text(stderr, "np-explain: warning: " + w + "\n");
}

}  // namespace np::cli
