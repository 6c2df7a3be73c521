#pragma once
// The tutorial's network-performance_params.yml: the single source of truth for the data
// interface, addresses, durations and UDP offered load. Every value is validated here, before
// anything is sent to a node: several end up in remote commands.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/readers/measurement.hpp"

namespace np {

// Which way the tests' data flows, as iperf3 runs it: client to server (its default), server to
// client (-R), or both at once (--bidir).
enum class Direction { forward, reverse, bidir };
const char* to_string(Direction d);  // "forward", "reverse", "bidir": the np_direction values

struct Params {
    std::string data_iface = "enp0s25";       // np_data_iface
    std::string server_ip = "192.168.200.1";  // np_server_ip (node A, the iperf3 server)
    std::string client_ip = "192.168.200.2";  // np_client_ip (node B)
    int prefix_len = 24;                      // np_prefix_len (64 for IPv6 addresses)
    int port = 5201;                          // np_port (iperf3)
    int ping_count = 5;                       // np_ping_count
    int tcp_duration_s = 10;                  // np_tcp_duration_s
    int udp_duration_s = 10;                  // np_udp_duration_s
    std::string udp_bandwidth = "1G";         // np_udp_bandwidth, as written (iperf3 -b)
    double udp_bandwidth_bps = 1e9;
    std::string image_marker = "/.omf-image-name";  // np_image_marker
    // np_link_rate: the nominal rate to model against when the NIC's speed cannot tell (a
    // shaped veth reports 10000 Mb/s); unset means "take the link speed the NIC reports".
    std::optional<double> link_rate_bps;

    // How iperf3 runs the tests, as its options do (both tests unless said otherwise).
    int parallel = 1;                          // np_parallel (-P): streams per test
    Direction direction = Direction::forward;  // np_direction (-R, --bidir)
    // np_udp_length (-l with -u): the UDP test's datagram payload in bytes; unset: iperf3's own
    // choice (the path MTU's, 1448 on a 1500-byte Ethernet).
    std::optional<int> udp_length;
    std::string window;       // np_window (-w): socket buffer size as written ("4M"); "": kernel's
    std::string congestion;   // np_tcp_congestion (-C): the TCP test's; "": the node's default
    std::string pacing_rate;  // np_pacing_rate (--fq-rate) as written ("900M"); "": no pacing
    bool zerocopy = false;    // np_zerocopy (-Z)
    // np_affinity (-A): the client's CPU, or "CLIENT,SERVER"; "": wherever the scheduler puts
    // them.
    std::string affinity;
    // np_mtu: the data iface's MTU for the run, set on both nodes and set back after (jumbo
    // frames: 9000); unset: the MTU the nodes have.
    std::optional<int> mtu;

    // run --repeat: the TCP and UDP tests run this many times, each repetition explained, and
    // each test's median, spread and verdicts side by side (np_repeat, 1 … 20).
    int repeat = 1;
    // run --find-udp-ceiling: after the fixed tests, search the highest UDP offered load with
    // loss at most ceiling_loss_pct (one direction: not with bidir).
    bool find_udp_ceiling = false;  // np_find_udp_ceiling
    double ceiling_loss_pct = 0.1;  // np_ceiling_loss_pct, 0.001 … 50
};

// iperf3's client options for one of the run's tests, everything after `-c SERVER`: the port,
// the duration, the test's keys above, -J (JSON), and for UDP -u -b and --get-server-output
// (only the server's report counts datagrams that arrived out of order). Each word is safe to
// put in a command unquoted. The one place the tests' command lines are made: `run` and every
// tutorial mode (through `np-explain params`) use them.
std::vector<std::string> iperf3_client_options(const Params& p, Transport t);

struct ParamsReading {
    Params params;
    std::vector<std::string> warnings;  // e.g. unknown keys, which are ignored
};

// Parses the YAML text of a params file. `source` names it in warnings. Throws InputError
// naming the key (and its line) for a wrong type, an out-of-range value or a bad iface name,
// and naming `source` when the text is not a YAML mapping.
ParamsReading parse_params(std::string_view yaml_text, const std::string& source);

// A server/client pair of data addresses as np_server_ip/np_client_ip are checked: IP
// addresses of one version, different, in the same /prefix_len subnet. InputError naming
// `field` (and `line`, 0 when not known) otherwise. The fan-out's pairs are checked the same.
void check_address_pair(const std::string& server_ip, const std::string& client_ip, int prefix_len,
                        const std::string& field, int line);

// A Linux interface name as the kernel accepts it and as is safe to put in a command:
// 1-15 characters of [A-Za-z0-9_.-], not "." or "..".
bool is_valid_ifname(std::string_view name);
// Whether two address texts are one address (2001:2::1 and 2001:2:0:0::1 are); texts that do not
// parse as addresses are compared as written.
bool same_address(const std::string& a, const std::string& b);

}  // namespace np
