#pragma once
// iperf3 JSON output (-J, versions 3.0 … 3.21; docs/formats.md says what each lacks) and the
// --json-stream NDJSON of 3.17+: one
// {"event": "start" | "interval" | "end" | "error", "data": …} object per line.
//
// The reader streams (json_scan.hpp) and keeps only the fields the analysis uses, folded as they
// go by: per-interval figures into running statistics and a bounded series, end.streams into
// sums and maxima. So a document of any length is read in constant memory; a 1-hour -P 8 run
// with 0.1 s intervals is ~108 MB of JSON, a day-long one 2.6 GB.
//
// A value of the wrong type or sign is an error naming its field, never a silent 0: iperf3
// writes rates, byte and datagram counts as non-negative numbers, at most 128 streams (its
// MAX_STREAMS), and retransmits as -1 only for "unavailable".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/readers/iperf3_text.hpp"
#include "analysis/readers/measurement.hpp"
#include "analysis/readers/source.hpp"

namespace np {

// iperf3's own limit on -P (MAX_STREAMS in iperf.h); end.streams holds two per stream with
// --bidir.
inline constexpr int kMaxIperf3Streams = 128;

// One summary block of "end": sum_sent, sum_received, sum (UDP before 3.11), or a stream's
// sender / receiver / udp block. Fields a version does not print stay empty.
struct Iperf3Summary {
    bool present = false;
    double seconds = 0;
    std::optional<double> bytes;
    std::optional<double> bits_per_second;
    std::optional<int64_t> retransmits;  // -1 in the JSON means unavailable: left empty
    std::optional<double> jitter_ms;
    std::optional<int64_t> lost_packets;
    std::optional<int64_t> packets;
    std::optional<double> lost_percent;
    std::optional<int64_t> out_of_order;
    std::optional<int64_t> reorder;  // 3.20+: the sender's tcpi_reord_seen
    std::optional<bool> sender;
    std::optional<int64_t> max_snd_cwnd;
    std::optional<double> max_rtt_us;
    std::optional<double> mean_rtt_us;
    std::optional<int64_t> socket;  // the stream's socket (file descriptor) on that end
};

// One entry of start.connected: a stream's socket on this end and its two ports.
struct Iperf3Connection {
    int64_t socket = -1;
    int local_port = 0, remote_port = 0;
};

// One entry of end.streams, as printed: TCP's sender and receiver blocks, or UDP's one block.
struct Iperf3StreamEnd {
    Iperf3Summary sender, receiver, udp;
};

// end.streams, folded as the entries go by: the analysis needs their sums and maxima.
struct Iperf3EndStreams {
    int count = 0;
    double sender_bps = 0;    // sum of the streams' sender blocks
    double receiver_bps = 0;  // sum of the streams' receiver blocks
    // The sum of the receiving streams' "udp" blocks' out_of_order: the only place iperf3
    // (3.2 … 3.21) prints it. Only the receiving end's own output holds it: the results the ends
    // exchange carry no out-of-order count, and a sending stream's block ("sender": true) holds
    // the sender's own, 0, which is left out.
    std::optional<int64_t> udp_out_of_order;
    // The sender blocks' reorder (3.20+'s tcpi_reord_seen): sum_sent has none.
    std::optional<int64_t> reorder;
    std::optional<int64_t> max_snd_cwnd;  // largest of the sender blocks
    std::optional<double> max_rtt_us;
    std::optional<double> mean_rtt_us;  // the first sender block's
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
    std::string system_info;           // "Linux host 6.1.0-13-amd64 #1 SMP … x86_64"
    std::optional<std::string> error;  // top-level "error" (or an "error" event)

    bool has_start = false;
    std::string protocol;  // "TCP" / "UDP"
    int num_streams = 1;
    int64_t blksize = 0;
    int omit_s = 0;                // test_start.omit (-O)
    std::optional<bool> gso, gro;  // test_start.gso / gro (3.21+)
    double duration_s = 0;
    bool reverse = false;
    bool bidir = false;
    std::optional<double> target_bitrate;  // 0 or absent: unlimited / not recorded
    std::optional<int> tcp_mss_default;
    std::optional<int64_t> sndbuf_actual;
    std::optional<int64_t> rcvbuf_actual;
    std::string connecting_to_host;
    std::optional<int> connecting_to_port;

    bool has_end = false;
    Iperf3EndStreams end_streams;
    Iperf3Summary sum_sent, sum_received, sum;  // sum: UDP totals before 3.11
    Iperf3Summary sum_sent_bidir_reverse, sum_received_bidir_reverse;
    std::optional<double> cpu_host_total;
    std::optional<double> cpu_remote_total;
    // --get-server-output: the server's own output inside the client's, as server_output_text
    // (a server without -J) or server_output_json. What is read of it is the receiving end's
    // out-of-order count, which a client that sent has no other way to know. A text longer than
    // the JSON scanner keeps (64 KiB: a test of some minutes) loses its summary, and the count.
    std::optional<int64_t> server_udp_out_of_order;

    // Each stream by itself: start.connected and end.streams (at most kMaxIperf3Streams entries,
    // two per stream with --bidir), of this output and of the server's JSON inside it.
    std::vector<Iperf3Connection> connected, server_connected;
    std::vector<Iperf3StreamEnd> stream_ends, server_stream_ends;
    // A server's text output inside the client's: its UDP streams' summary lines.
    std::vector<Iperf3TextStream> server_text_udp_streams;

    // Series of more than kMaxSeriesPoints intervals are kept as means of 2, 4, … intervals.
    Iperf3IntervalStats interval_stats;
};

// Reads a whole -J document or --json-stream NDJSON (detected by its first object) from `in`.
// With `embedded`, reading stops after the document (or, for NDJSON, when `in` ends) and
// anything after it is the caller's: a transcript goes on after iperf3's JSON.
// Throws InputError: field = the JSON path of a bad value ("end.sum_sent.bytes") or "json" for a
// syntax error, with the line (counted from the start of `in`).
Iperf3Run parse_iperf3(ByteSource& in, bool embedded = false);
Iperf3Run parse_iperf3(std::string_view text);

// Whether a text that starts with `head` is --json-stream output ({"event": … first).
bool looks_like_json_stream(std::string_view head);

// The run as normalised measurements: one ThroughputTest per direction, or a ToolFailure when
// iperf3 reported an error.
Measurements measurements_from(const Iperf3Run& run, const std::string& source);

}  // namespace np
