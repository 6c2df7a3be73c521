#pragma once
// What the tools measured, normalised so the explanation engine does not care whether a figure
// came from iperf3 JSON, iperf2 text or ping. Each parser (iperf3.hpp, iperf2.hpp, ping.hpp)
// returns its own typed result and a `measurements()` view of it in these terms. Figures a tool
// or version does not print stay empty (std::nullopt) rather than guessed.
//
// Units are in the names: _bps is bit/s of payload (goodput, what iperf calls bitrate),
// _bytes bytes, _us microseconds, _ms milliseconds, _pct percent (0..100).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace np {

enum class IpVersion { v4, v6 };
enum class Transport { tcp, udp };

enum class Tool { iperf3, iperf2, ping };
const char* to_string(Tool t);

// The platform a uname-like line names by its first word ("Linux host 6.1.0 …", "Darwin …",
// "FreeBSD …", "CYGWIN_NT-10.0-19045 …", which iperf3 builds for Windows print): "Linux",
// "macOS", "FreeBSD", "OpenBSD", "NetBSD", "Windows"; empty for anything else.
std::string platform_of(std::string_view uname);
// How a verdict names the tool that printed a test: "iperf 3.12 on Linux", "iperf3 on macOS",
// "iperf 2.1.9"; empty when the output shows neither.
std::string tool_text(const std::string& version, const std::string& platform);

// One throughput test in one direction (a --bidir run is two of these).
struct ThroughputTest {
    std::string source;  // the file it came from ("session.txt:14" when it holds several runs)
    std::string label;   // "iperf3 TCP", "iperf3 UDP -R", "iperf2 UDP -P 4", …
    // The command line that produced it, as typed after the prompt of a terminal transcript
    // ("iperf -c 192.168.1.1 -u -b 9gbps"); empty when the input does not show it.
    std::string command;
    bool from_server = false;  // read from the server's own output, not the client's
    std::string server_host;   // the address the client connected to, when known
    std::optional<int> port;   // the server's port, when known
    Tool tool = Tool::iperf3;
    std::string tool_version;  // "iperf 3.12"; empty when the output does not say
    // The system the output came from, when it shows it (iperf3's system_info or -V line):
    // "Linux", "macOS", "FreeBSD", "Windows", … (platform_of).
    std::string platform;
    Transport transport = Transport::tcp;
    bool reverse = false;  // the server sent (iperf -R)
    bool bidir = false;    // one direction of iperf3 --bidir: the other ran at the same time
    int streams = 1;
    double duration_s = 0;
    // The probes' phase the test ran in, when the run that made it says (run's UDP ceiling
    // search: udp-ceiling-1, …); empty: the phase named after its transport.
    std::string phase;

    // Payload goodput as each end counted it. iperf2 client output has only the sender's
    // figure unless the server's report is relayed; the receiver's is what arrived.
    std::optional<double> sent_bps;
    std::optional<double> received_bps;
    std::optional<double> sent_bytes;
    std::optional<double> received_bytes;
    // How coarsely the tool printed the rates above: iperf2 prints 3 significant digits, so
    // "9.42 Gbits/sec" means 9.415 … 9.425. 0 when printed exactly (iperf3 JSON).
    double rate_resolution_bps = 0;
    double bytes_resolution = 0;  // likewise for the byte counts ("11.0 GBytes": ±0.05 GiB)

    // What the user asked for (-b); empty when unlimited or not recorded in the output.
    std::optional<double> offered_bps;
    std::string offered_from;  // where the offered rate was read: "target_bitrate", "IPG target"

    std::optional<int> payload_bytes;  // UDP datagram payload / TCP write size (blksize, -l)
    std::optional<int> mss_bytes;      // iperf3 tcp_mss_default (control connection)
    std::optional<int> pmtu_bytes;     // iperf3 per-interval pmtu (Linux tcp_info)

    // UDP counts: the sender's count of datagrams sent and the receiver's lost/total.
    std::optional<int64_t> datagrams_sent;
    std::optional<int64_t> datagrams_lost;
    std::optional<int64_t> datagrams_total;  // the receiver's denominator (lost + received)
    std::optional<double> printed_loss_pct;  // what the tool printed next to lost/total
    std::string printed_loss_text;           // verbatim, e.g. "342498/7134255 (0%)"
    std::optional<double> jitter_ms;
    std::optional<int64_t> out_of_order;
    // UDP counts that cannot be true as printed — more lost than the total, a negative loss, a
    // percentage outside 0 … 100 ("-792929/24122", "179%"): kept here verbatim and left out of
    // the counts above, so no rule reads them as a loss (rules_counters.cpp explains them).
    struct ImpossibleCounts {
        std::optional<int64_t> lost, total;
        std::optional<double> printed_pct;
        std::string text;  // as printed: "-792929/24122 (-3287%)", "end.sum_received: …"
    };
    std::optional<ImpossibleCounts> impossible_counts;
    // The receiver's report never reached the sender (iperf2: "WARNING: did not receive ack of
    // last datagram"): what arrived and what was lost are unknown, not zero.
    bool receiver_report_missing = false;
    std::optional<int> omit_s;  // -O: seconds left out of the totals at the start
    // TCP: the times the sender's kernel saw segments arrive out of order (iperf3 3.20+'s
    // "reorder", tcpi_reord_seen); empty before 3.20 or off Linux.
    std::optional<int64_t> reorder_events;
    // UDP GSO/GRO (iperf3 3.21's --gsro: many datagrams per system call), when the output says.
    std::optional<bool> udp_gso, udp_gro;
    bool udp_counters_64bit = false;  // --udp-counters-64bit, when the command shows it

    // TCP, from the sender's tcp_info.
    std::optional<int64_t> retransmits;  // empty when the tool says unavailable (-1)
    std::optional<double> rtt_mean_us;
    std::optional<double> rtt_max_us;
    std::optional<int64_t> snd_cwnd_max_bytes;

    // Socket buffers: iperf3 reports the client's actual SO_SNDBUF/SO_RCVBUF; iperf2 prints
    // "TCP window size" / "UDP buffer size" for the side whose output this is.
    std::optional<int64_t> sndbuf_bytes;
    std::optional<int64_t> rcvbuf_bytes;
    std::optional<int64_t> socket_buffer_bytes;
    std::string socket_buffer_text;  // verbatim, e.g. "208 KByte (default)"
    std::string socket_buffer_side;  // "client" or "server": whose buffer that is

    std::optional<double> sender_cpu_pct;
    std::optional<double> receiver_cpu_pct;

    // Per-interval aggregate goodput (the tool's own intervals), for stability checks.
    std::vector<double> interval_bps;

    // Each stream of the test (iperf3 -P: a TCP connection or UDP socket each) with the counts
    // above for it alone, named by its client-side port: the name the probes give it. Empty
    // when the output does not say (iperf2, iperf3's text, JSON without start.connected).
    struct Stream {
        int port = 0;
        std::optional<double> sent_bytes, received_bytes;
        std::optional<int64_t> datagrams_sent, datagrams_lost, datagrams_total;
        std::optional<int64_t> retransmits;
    };
    std::vector<Stream> per_stream;
};

// `t` as if it were the one stream `s`: its counts and rates, one stream, the label naming it.
ThroughputTest stream_test(const ThroughputTest& t, const ThroughputTest::Stream& s);

// The receiver's UDP lost/total as a reader found them, into `t`: its datagrams_* and printed
// loss, or — counts no receiver can have counted (a negative lost or total, more lost than the
// total, a percentage outside 0 … 100, a count stuck at 2^31 − 1) — its impossible_counts,
// their text prefixed with `where` ("end.sum_received") when given.
void set_receiver_loss_counts(ThroughputTest& t, std::optional<int64_t> lost,
                              std::optional<int64_t> total, std::optional<double> printed_pct,
                              const std::string& text, std::string_view where = {});

// One echo reply as ping printed it ("64 bytes from …: icmp_seq=3 ttl=64 time=0.054 ms").
struct PingReply {
    // icmp_seq (iputils, from 1; BSD and macOS, from 0) or seq (busybox, from 0); Windows
    // prints none, so its replies are numbered from 1 in the order printed.
    int64_t seq = 0;
    double rtt_ms = 0;       // 0 for Windows' "time<1ms": below its resolution (rtt_resolution_ms)
    bool duplicate = false;  // "(DUP!)": a second reply to the same request
};

struct PingTest {
    std::string source;
    std::string label;    // "ping 198.18.10.2"
    std::string command;  // "ping -c 5 -I enp0s25 192.168.200.1", when the transcript shows it
    std::string target;
    // Whose ping printed it, as far as its output tells (ping.hpp): "iputils", "busybox",
    // "BSD-style" (macOS, FreeBSD or GNU inetutils: one layout), "macOS" (when its "Request
    // timeout" lines show it), "OpenBSD", "BSD-style or busybox", "Windows".
    std::string flavour;
    int64_t transmitted = 0;
    int64_t received = 0;  // echo replies, not counting duplicates
    int64_t duplicates = 0;
    int64_t errors = 0;  // ICMP errors instead of a reply ("Destination Host Unreachable")
    // Windows counts a "Reply from …: Destination host unreachable." in its Received; those
    // are errors above, and here, so that its printed loss can be explained.
    int64_t errors_counted_as_received = 0;
    // The first ICMP error as ping printed it ("Destination host unreachable.", "TTL expired in
    // transit."); empty when it printed none.
    std::string error_text;
    std::optional<double> printed_loss_pct;
    // The deviation is iputils' mdev, BSD's stddev and OpenBSD's std-dev: the same quantity.
    std::optional<double> rtt_min_ms, rtt_avg_ms, rtt_max_ms, rtt_mdev_ms;
    // The finest time the tool prints: 1 for Windows (whole milliseconds, "time<1ms"); 0 when
    // it prints microseconds, as every other ping does.
    double rtt_resolution_ms = 0;
    // Every reply line before the summary, in order; empty with ping -q. The summary stays the
    // authority for the counts: a line that does not read as a reply is skipped, not an error.
    // A run of more than kMaxSeriesPoints replies keeps every 2nd, 4th, … (series.hpp).
    std::vector<PingReply> replies;
};

// The tool ran but reported failure instead of a result (iperf3's top-level "error").
struct ToolFailure {
    std::string source;
    Tool tool = Tool::iperf3;
    std::string message;  // verbatim from the tool
    // The test that failed, when the output or the caller says (iperf3 prints its protocol only
    // once the test started; `run` knows which phase it ran).
    std::optional<Transport> transport{};
};

// What a server printed about itself before any test: iperf2's "Server listening on UDP port
// 5001" / "Receiving 1470 byte datagrams" / "UDP buffer size: 208 KByte (default)", iperf3's
// "Server listening on 5201". Not a test of its own but the context of the client runs that
// reached it: the receive buffer is what a receive-side loss explanation needs.
struct ServerBanner {
    std::string source;  // "server.txt" or "session.txt:40"
    Tool tool = Tool::iperf2;
    std::optional<Transport> transport;  // iperf3's server serves both
    std::optional<int> port;
    std::optional<int64_t> buffer_bytes;  // the server's socket buffer (its receive side)
    std::string buffer_text;              // verbatim, "208 KByte (default)"
    std::optional<int> datagram_bytes;    // "Receiving 1470 byte datagrams" (iperf 2.0)
    std::string command;                  // "iperf -s -u", when the transcript shows it
};

struct Measurements {
    std::vector<ThroughputTest> throughput;
    std::vector<PingTest> pings;
    std::vector<ToolFailure> failures;
    std::vector<ServerBanner> servers;
    // What an input held but could not be explained, one line each for the reader: a run of a
    // transcript that was interrupted before its result, a banner no client run matches.
    std::vector<std::string> notes;

    void append(Measurements other);
};

}  // namespace np
