#pragma once
// Names that come from files and the command line and then become parts of paths, file names
// or remote command arguments (a contract's mode, a node's name, a file a contract references),
// validated where they enter; and text from files made safe to print on a terminal.
#include <string>
#include <string_view>

namespace np {

// A mode, as in np_contract_<mode>.json and the run dir's <mode>_tcp.json: 1–64 of letters,
// digits, '.', '_' and '-', not starting with '.' or '-' (so never "..", a hidden file or an
// option). InputError naming `field` otherwise.
bool is_mode_name(std::string_view name);
void check_mode_name(std::string_view name, const std::string& field);

// A node, as ssh and ssh_config name it (a host name, an address or a Host alias): 1–253 of
// letters, digits, '.', '_', '-' and ':' (IPv6), not starting with '.' or '-'. It becomes a file
// name in the run dir (<mode>_trace_<node>.json) and an argument on the node.
bool is_node_name(std::string_view name);
void check_node_name(std::string_view name, const std::string& field);

// A file a contract names (its "traces"): a relative path of plain names below the contract's
// directory — not absolute, no "..", no empty or "." parts. InputError naming `field` otherwise.
void check_contained_path(std::string_view path, const std::string& field);

// Text from an input file made safe for a terminal: control characters (C0, DEL and the C1
// range, in UTF-8 or as raw bytes) and invalid UTF-8 shown as \xNN, tabs and newlines kept when
// `keep_newlines`. Printable text, UTF-8 included, is unchanged.
std::string terminal_safe(std::string_view text, bool keep_newlines = false);

}  // namespace np
