#pragma once
// What np-explain makes of a node's shell replies. Every value put into a remote command goes
// through shell_quote (common/shell_quote.hpp).
#include <string>
#include <string_view>

namespace np::remote {

// A command's reply without the newlines, carriage returns and blanks at its end.
std::string trimmed(std::string reply);

// What `mktemp -d "${TMPDIR:-/tmp}/np-explain.XXXXXXXXXX"` prints (CommandShell::
// make_private_dir): the node's TMPDIR is honoured, as mktemp's own default does, because a
// node's /tmp may be mounted noexec and np-probe runs from there. The reply becomes an argument
// of rm -rf at teardown, so only an absolute path of plain components ([A-Za-z0-9._+@-], no
// "." or "..", no blank, no second line) ending in `np-explain.` and ten letters or digits is
// accepted.
inline constexpr std::string_view kPrivateDirName = "np-explain.";
bool is_private_dir_reply(std::string_view path);

}  // namespace np::remote
