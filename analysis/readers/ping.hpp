#pragma once
// ping's output, as each platform's ping prints it. Two layouts:
//  - the Unix one ("PING host …" header, "64 bytes from …" replies, "--- host ping statistics
//    ---", a counts line and a round-trip line): iputils ("10 packets transmitted, 9 received,
//    +1 duplicates, +2 errors, 10% packet loss, time 9013ms", "rtt min/avg/max/mdev = a/b/c/d
//    ms"), busybox ("3 packets received", "round-trip min/avg/max = a/b/c ms"), GNU inetutils,
//    FreeBSD and macOS ("round-trip min/avg/max/stddev", "0.0% packet loss", macOS's "Request
//    timeout for icmp_seq N", KAME ping6's "PING6(…)" or FreeBSD's "PING(…)" header and "ping6
//    statistics") and OpenBSD ("round-trip min/avg/max/std-dev"). The round-trip line is absent
//    when nothing came back.
//  - Windows' ("Pinging host with 32 bytes of data:", "Reply from …: bytes=32 time<1ms TTL=64",
//    "Ping statistics for host:", "Packets: Sent = 4, Received = 4, Lost = 0 (0% loss),",
//    "Minimum = 0ms, Maximum = 1ms, Average = 0ms"), in English; its replies in another
//    language are recognised and named as such.
// docs/formats.md ("Tool outputs") lists each with where its format comes from. Each run (header …
// summary) is one test; ping's own error ("ping: connect: Network is unreachable", "Ping request
// could not find host …") is a tool failure.
#include <memory>
#include <string_view>

#include "analysis/readers/run_reader.hpp"

namespace np {

// Whether a line is ping's own: its header, its statistics header or a reply.
bool ping_header(std::string_view line);
bool ping_line(std::string_view line);

std::unique_ptr<RunReader> make_ping_reader();

}  // namespace np
