#pragma once
// iperf2's text output, client or server, TCP or UDP: the 2.0.x layout
// ("[  3]  0.0-10.0 sec  11.0 GBytes  9.42 Gbits/sec") and the 2.1+ layout
// ("[  1] 0.0000-10.0001 sec   112 MBytes  94.0 Mbits/sec", with -e extra columns), the
// "Sent N datagrams" line, the relayed "Server Report:" with jitter and lost/total (pct%), [SUM]
// lines of -P, and the header lines (TCP window size / UDP buffer size, "Sending 1470 byte
// datagrams, IPG target: …", "Receiving 1470 byte datagrams").
//
// iperf2 prints transfers in binary units (KBytes = 1024 bytes) and rates in decimal ones
// (Mbits/sec = 1e6 bit/s), each to about 3 significant digits: the reader keeps the rounding
// interval so the analysis can tell "9.42 > 9.415" from a real excess.
//
// A server that goes on serving prints one banner and then one test per client connection:
// each test is its own run. A server that printed only its banner measured nothing, but what
// it says of itself — its port, its socket buffer — is context for the client run it served
// (a ServerBanner).
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "analysis/readers/run_reader.hpp"

namespace np {

// More stream ids than this in one run is not one iperf2 test (iperf2 itself has no limit on -P;
// this bounds memory and refuses "-P 1000000" read from a text of a million ids).
inline constexpr size_t kMaxIperf2Streams = 1024;

// Whether a line is iperf2's: its header ("Client connecting to …, TCP port 5001", "Server
// listening on UDP port 5001") or, for a text pasted without it, a report line with iperf2's
// interval format ("0.0-10.0 sec", "0.0000-10.0001 sec").
bool iperf2_header(std::string_view line);
bool iperf2_report(std::string_view line);

std::unique_ptr<RunReader> make_iperf2_reader();

// The offered rate behind an IPG target printed to 2 decimals: the simplest -b value (fewest
// significant digits) that prints as that IPG, since people type -b 9g, not -b 8.977g. iperf2
// reads a lowercase suffix as decimal (9g = 9e9) and an uppercase one as binary
// (90M = 90 × 2^20), so both readings are tried.
struct OfferedRate {
    double bps = 0;
    std::string typed;  // "9g", "90M": the -b that gives this IPG
};
OfferedRate offered_rate_from_ipg(int datagram_bytes, double ipg_us);

}  // namespace np
