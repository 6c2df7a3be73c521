#pragma once
// iperf3 JSON output (-J, versions 3.9 … 3.19) and the --json-stream NDJSON of 3.17+: one
// {"event": "start" | "interval" | "end" | "error", "data": …} object per line.
//
// The parser streams (nlohmann's SAX interface) and keeps only the fields the analysis uses:
// a 1-hour -P 8 run with 0.1 s intervals is ~0.5 GB of JSON, and a DOM of it would not fit the
// memory budget (bench/). Per-interval figures are folded into running statistics.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measurement.hpp"

namespace np {

// One summary block of "end": sum_sent, sum_received, sum (UDP before 3.11), or a stream's
// sender / receiver / udp block. Fields a version does not print stay empty.
struct Iperf3Summary {
    bool present = false;
    double seconds = 0;
    double bytes = 0;
    double bits_per_second = 0;
    std::optional<int64_t> retransmits;  // -1 in the JSON means unavailable: left empty
    std::optional<double> jitter_ms;
    std::optional<int64_t> lost_packets;
    std::optional<int64_t> packets;
    std::optional<double> lost_percent;
    std::optional<int64_t> out_of_order;
    std::optional<bool> sender;
    std::optional<int64_t> max_snd_cwnd;
    std::optional<double> max_rtt_us;
    std::optional<double> mean_rtt_us;
};

struct Iperf3EndStream {
    Iperf3Summary sender;
    Iperf3Summary receiver;
    Iperf3Summary udp;
};

// Per-interval figures folded as they stream by.
struct Iperf3IntervalStats {
    int64_t intervals = 0;
    std::vector<double> sum_bps;          // "sum" of each interval (forward direction)
    std::vector<double> reverse_sum_bps;  // "sum_bidir_reverse" (--bidir)
    int64_t rtt_samples = 0;
    double rtt_sum_us = 0;
    double rtt_max_us = 0;
    int64_t snd_cwnd_max = 0;
    std::optional<int> pmtu;  // the last one reported
};

struct Iperf3Run {
    bool json_stream = false;          // read from --json-stream NDJSON
    std::string version;               // "iperf 3.12"
    std::optional<std::string> error;  // top-level "error" (or an "error" event)

    bool has_start = false;
    std::string protocol;  // "TCP" / "UDP"
    int num_streams = 1;
    int64_t blksize = 0;
    double duration_s = 0;
    bool reverse = false;
    bool bidir = false;
    std::optional<double> target_bitrate;  // 0 or absent: unlimited / not recorded
    std::optional<int> tcp_mss_default;
    std::optional<int64_t> sndbuf_actual;
    std::optional<int64_t> rcvbuf_actual;
    std::string connecting_to_host;

    bool has_end = false;
    std::vector<Iperf3EndStream> end_streams;
    Iperf3Summary sum_sent, sum_received, sum;  // sum: UDP totals before 3.11
    Iperf3Summary sum_sent_bidir_reverse, sum_received_bidir_reverse;
    std::optional<double> cpu_host_total;
    std::optional<double> cpu_remote_total;

    Iperf3IntervalStats interval_stats;
};

// Parses a whole -J document or a --json-stream NDJSON text (detected by its first line).
// Throws InputError: field = the JSON path of a bad value ("end.sum_sent.bytes") or "json"
// for a syntax error, with the line where it happened.
Iperf3Run parse_iperf3(std::string_view text);

// The run as normalised measurements: one ThroughputTest per direction, or a ToolFailure when
// iperf3 reported an error.
Measurements measurements_from(const Iperf3Run& run, const std::string& source);

}  // namespace np
