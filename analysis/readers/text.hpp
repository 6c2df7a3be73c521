#pragma once
// Small helpers the text readers (iperf2, iperf3 text, ping, transcripts, the nodes' replies to
// `run`'s checks) share: read numbers without locale or exceptions, words and KEY=value lines,
// and the transfer and rate columns iperf2 and iperf3 print.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace np::text {

std::string_view trim(std::string_view s);
// `s` with ASCII letters in lower case (a MAC address as sysfs and ip print it, either case).
std::string lower(std::string_view s);

// A decimal number at the start of `s` (after blanks); advances `s` past it.
std::optional<double> take_number(std::string_view& s);
// The next blank-separated word; advances past it.
std::string_view take_word(std::string_view& s);
// Every blank-separated word of `s`.
std::vector<std::string> words(std::string_view s);
// The KEY=value lines of `s` (split at the first '='; a later line wins, lines without '=' are
// skipped), as a node's shell prints them for `run`'s checks.
std::map<std::string, std::string> key_values(std::string_view s);
// Skips blanks; true when `s` then starts with `prefix` (which is consumed).
bool take_prefix(std::string_view& s, std::string_view prefix);

// A printed figure and its rounding: iperf prints 3 significant digits, so "9.42" means
// 9.415 … 9.425 and `resolution` is half a unit of the last digit, scaled like the value.
struct Quantity {
    double value = 0;
    double resolution = 0;
};
// "11.0 GBytes" (transfers: binary units, as iperf2's and iperf3's byte formatting prints them)
// or, with `rate`, "9.42 Gbits/sec" (decimal units; "MBytes/sec" with -f in bytes). Advances
// `s` past it; leaves `s` alone and returns nothing when it is not one.
std::optional<Quantity> take_quantity(std::string_view& s, bool rate);

}  // namespace np::text
