#pragma once
// A value put into a POSIX shell command line (a remote command over SSH, the shell assignments
// `np-explain params --shell` prints) goes through shell_quote, so an interface name or a path
// can never be read as more shell.
#include <initializer_list>
#include <string>
#include <string_view>

namespace np {

// 'text' with each ' written as '\'' : one word for a POSIX shell, whatever text holds.
std::string shell_quote(std::string_view text);

// The words quoted and joined by spaces: shell_join({"ip", "link", "show", iface}).
std::string shell_join(std::initializer_list<std::string_view> words);

}  // namespace np
