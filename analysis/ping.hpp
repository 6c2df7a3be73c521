#pragma once
// ping's output: the reply lines and the summary of iputils ("10 packets transmitted,
// 9 received, +1 duplicates, +2 errors, 10% packet loss, time 9013ms" and "rtt
// min/avg/max/mdev = a/b/c/d ms", which is absent when nothing came back) and of busybox ("3
// packets transmitted, 3 packets received, 0% packet loss", "round-trip min/avg/max = a/b/c
// ms"). Each run (PING header … summary) is one test; ping's own error ("ping: connect: Network
// is unreachable") is a tool failure.
#include <memory>
#include <string_view>

#include "analysis/run_reader.hpp"

namespace np {

// Whether a line is ping's own: its "PING host …" header, its "--- host ping statistics ---"
// summary header or a reply ("64 bytes from …: icmp_seq=1 …").
bool ping_header(std::string_view line);
bool ping_line(std::string_view line);

std::unique_ptr<RunReader> make_ping_reader();

}  // namespace np
