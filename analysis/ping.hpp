#pragma once
// ping's summary: iputils ("10 packets transmitted, 9 received, +1 duplicates, +2 errors,
// 10% packet loss, time 9013ms" and "rtt min/avg/max/mdev = a/b/c/d ms", which is absent when
// nothing came back) and busybox ("3 packets transmitted, 3 packets received, 0% packet loss",
// "round-trip min/avg/max = a/b/c ms"). A file may hold several runs; each summary is one test.
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measurement.hpp"

namespace np {

// Throws InputError (field "ping", with the line) when there is no summary or it is malformed.
std::vector<PingTest> parse_ping(std::string_view text, const std::string& source = "");

inline constexpr size_t kMaxPingTextBytes = 64u << 20;

}  // namespace np
