#pragma once
#include <string>
#include <string_view>

namespace np {

// A rate written as users write them for iperf and link speeds: "10G", "2.5g", "100M",
// "9gbps", "1Gbit/s", "1000000000" (plain bit/s). Suffixes are decimal (k=1e3 … T=1e12), as
// iperf uses for rates. Throws InputError naming `field` for anything else.
double parse_rate_bps(std::string_view text, const std::string& field);

// A link rate: parse_rate_bps restricted to what Ethernet links come as, 10 Mbit/s … 400 Gbit/s.
double parse_link_rate_bps(std::string_view text, const std::string& field);

inline constexpr double kMinLinkBps = 10e6;
inline constexpr double kMaxLinkBps = 400e9;

}  // namespace np
