#pragma once
// iperf3's plain text output (without -J), client or server. What it holds and the analysis
// uses: the summary lines ("… sender", "… receiver"; [SUM] with -P; [TX-C]/[RX-C] with
// --bidir), TCP retransmits, UDP jitter and lost/total, the datagrams sent, "Reverse mode",
// and with -V the protocol, streams, block size and CPU. Its rates and transfers are printed to
// 3 significant digits, like iperf2's, and the rounding is kept. It does not hold -b, -l, the
// MSS or the path MTU: a transcript's command line gives the first two, the model assumes the
// rest (MSS with timestamps, MTU 1500).
//
// A server's log is one test per "Server listening on 5201" banner; a banner with no test after
// it (the server was waiting) is context for the client runs (a ServerBanner), not a test.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/readers/run_reader.hpp"

namespace np {

// Whether a line begins an iperf3 text output: "Connecting to host H, port 5201", "Server
// listening on 5201", or iperf3's "iperf3: error - …".
bool iperf3_text_header(std::string_view line);
// "iperf 3.12", the first line -V prints (and --version's).
bool iperf3_version_line(std::string_view line);
// Whether a line is an iperf3 report line: "[  5]   0.00-1.00   sec  11.8 MBytes …" (2
// decimals, unlike iperf2's 1 or 4).
bool iperf3_text_report(std::string_view line);

std::unique_ptr<RunReader> make_iperf3_text_reader();

// The receiver's out-of-order count in an iperf3 text output: its "N datagrams received
// out-of-order" summary, or --debug's "OUT OF ORDER" lines. What a client's -J
// --get-server-output carries of a server's text output (server_output_text). Empty when the
// text holds no such count or cannot be read.
std::optional<int64_t> iperf3_text_out_of_order(std::string_view text);

// One UDP stream's summary line in an iperf3 text output ("[  5]   0.00-10.02  sec  38.1 MBytes
// 31.9 Mbits/sec  0.001 ms  0/27567 (0%)  receiver"), with its socket's ports from its
// "[  5] local A port P connected to B port Q" line.
struct Iperf3TextStream {
    int local_port = 0, remote_port = 0;
    std::string side;  // "sender" or "receiver"
    int64_t lost = 0, total = 0;
};
// Each such stream of the text (what a client's -J --get-server-output carries of a server's
// text output); empty when it holds none or cannot be read.
std::vector<Iperf3TextStream> iperf3_text_udp_streams(std::string_view text);

}  // namespace np
