#pragma once
// Remote commands are shell command lines (that is what an SSH exec request carries). Every
// value put into one goes through shell_quote, so an interface name or a path can never be
// read as more shell.
#include <initializer_list>
#include <string>
#include <string_view>

namespace np::remote {

// 'text' with each ' written as '\'' : one word for a POSIX shell, whatever text holds.
std::string shell_quote(std::string_view text);

// The words quoted and joined by spaces: shell_join({"ip", "link", "show", iface}).
std::string shell_join(std::initializer_list<std::string_view> words);

// What `mktemp -d /tmp/np-explain.XXXXXXXXXX` prints, exactly: the node's reply becomes an
// argument of rm -rf at teardown, so nothing else — no other directory, no second line, no
// "..", no blank — is accepted (CommandShell::make_private_dir).
inline constexpr std::string_view kPrivateDirPrefix = "/tmp/np-explain.";
bool is_private_dir_reply(std::string_view path);

}  // namespace np::remote
