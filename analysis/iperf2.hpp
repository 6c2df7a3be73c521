#pragma once
// iperf2's text output, client or server, TCP or UDP: the 2.0.x layout
// ("[  3]  0.0-10.0 sec  11.0 GBytes  9.42 Gbits/sec") and the 2.1+ layout
// ("[  1] 0.0000-10.0001 sec   112 MBytes  94.0 Mbits/sec", with -e extra columns), the
// "Sent N datagrams" line, the relayed "Server Report:" with jitter and lost/total (pct%), [SUM]
// lines of -P, and the header lines (TCP window size / UDP buffer size, "Sending 1470 byte
// datagrams, IPG target: …").
//
// iperf2 prints transfers in binary units (KBytes = 1024 bytes) and rates in decimal ones
// (Mbits/sec = 1e6 bit/s), each to about 3 significant digits: the parser keeps the rounding
// interval so the analysis can tell "9.42 > 9.415" from a real excess.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measurement.hpp"

namespace np {

struct Iperf2Report {
    int line = 0;
    std::string id;  // "1", "SUM", "SUM-4"
    double start_s = 0, end_s = 0;
    double bytes = 0;
    double bytes_resolution = 0;  // half a unit of the last printed digit
    double bps = 0;
    double bps_resolution = 0;
    std::optional<double> jitter_ms;
    std::optional<int64_t> lost;
    std::optional<int64_t> total;
    std::optional<double> printed_loss_pct;
    std::string loss_text;       // "342498/7134255 (0%)"
    bool server_report = false;  // printed under "Server Report:" (the receiver's figures)
};

struct Iperf2Run {
    enum class Role { client, server };
    Role role = Role::client;
    Transport transport = Transport::tcp;
    bool reverse = false;
    std::string peer;  // "Client connecting to <peer>"
    std::optional<int> datagram_bytes;
    std::optional<double> ipg_target_us;
    std::optional<int64_t> buffer_bytes;  // TCP window size / UDP buffer size
    std::string buffer_text;              // "208 KByte (default)"
    std::vector<Iperf2Report> reports;
    std::vector<std::pair<std::string, int64_t>> datagrams_sent;  // per id, "Sent N datagrams"
    bool ack_missing = false;  // "WARNING: did not receive ack of last datagram"
};

// Throws InputError (field "iperf2", with the line) for text that is not iperf2 output, a
// malformed report line, or an output without any final report.
Iperf2Run parse_iperf2(std::string_view text);

Measurements measurements_from(const Iperf2Run& run, const std::string& source);

// The offered rate behind an IPG target printed to 2 decimals: the simplest -b value (fewest
// significant digits) that prints as that IPG, since people type -b 9g, not -b 8.977g. iperf2
// reads a lowercase suffix as decimal (9g = 9e9) and an uppercase one as binary
// (90M = 90 × 2^20), so both readings are tried.
struct OfferedRate {
    double bps = 0;
    std::string typed;  // "9g", "90M": the -b that gives this IPG
};
OfferedRate offered_rate_from_ipg(int datagram_bytes, double ipg_us);

inline constexpr size_t kMaxIperf2TextBytes = 256u << 20;

}  // namespace np
