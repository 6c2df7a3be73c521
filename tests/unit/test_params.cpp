#include <gtest/gtest.h>

#include "analysis/readers/params.hpp"
#include "common/errors.hpp"

namespace {

using np::InputError;
using np::parse_params;

// What scripts/testbed.sh up --profile 100M writes.
constexpr const char* kTestbedParams = R"(# network-performance_params.yml for the local testbed
np_data_iface: enp0s25
np_server_ip: 198.18.0.1
np_client_ip: 198.18.0.2
np_prefix_len: 24
np_port: 5201
np_ping_count: 5
np_tcp_duration_s: 10
np_udp_duration_s: 10
np_udp_bandwidth: 1G
np_image_marker: /run/np-testbed/omf-image-name
np_link_rate: 100M
)";

// The key and line an InputError names, for a params text expected to be rejected.
std::pair<std::string, int> rejected(const std::string& yaml) {
    try {
        parse_params(yaml, "params.yml");
    } catch (const InputError& e) {
        return {e.field(), e.line()};
    }
    ADD_FAILURE() << "accepted:\n" << yaml;
    return {"", 0};
}

TEST(Params, ReadsTheTestbedParamsFile) {
    const auto r = parse_params(kTestbedParams, "params.yml");
    EXPECT_TRUE(r.warnings.empty());
    EXPECT_EQ(r.params.data_iface, "enp0s25");
    EXPECT_EQ(r.params.server_ip, "198.18.0.1");
    EXPECT_EQ(r.params.client_ip, "198.18.0.2");
    EXPECT_EQ(r.params.prefix_len, 24);
    EXPECT_EQ(r.params.port, 5201);
    EXPECT_EQ(r.params.ping_count, 5);
    EXPECT_EQ(r.params.tcp_duration_s, 10);
    EXPECT_EQ(r.params.udp_duration_s, 10);
    EXPECT_EQ(r.params.udp_bandwidth, "1G");
    EXPECT_DOUBLE_EQ(r.params.udp_bandwidth_bps, 1e9);
    EXPECT_EQ(r.params.image_marker, "/run/np-testbed/omf-image-name");
    ASSERT_TRUE(r.params.link_rate_bps.has_value());
    EXPECT_DOUBLE_EQ(*r.params.link_rate_bps, 100e6);
}

TEST(Params, AbsentKeysTakeTheTutorialDefaults) {
    const auto r = parse_params("np_tcp_duration_s: 3\n", "params.yml");
    EXPECT_EQ(r.params.data_iface, "enp0s25");
    EXPECT_EQ(r.params.server_ip, "192.168.200.1");
    EXPECT_EQ(r.params.client_ip, "192.168.200.2");
    EXPECT_EQ(r.params.port, 5201);
    EXPECT_EQ(r.params.ping_count, 5);
    EXPECT_EQ(r.params.tcp_duration_s, 3);
    EXPECT_EQ(r.params.image_marker, "/.omf-image-name");
    EXPECT_FALSE(r.params.link_rate_bps.has_value());
}

// IPv6 addresses without np_prefix_len are a /64 (an IPv6 segment's prefix), not the /24 an
// IPv4 pair defaults to; a prefix given is kept.
TEST(Params, AnIpv6PairWithoutAPrefixIsASlash64) {
    const std::string pair = "np_server_ip: \"2001:2::1\"\nnp_client_ip: \"2001:2::2\"\n";
    EXPECT_EQ(parse_params(pair, "params.yml").params.prefix_len, 64);
    EXPECT_EQ(parse_params(pair + "np_prefix_len: 112\n", "params.yml").params.prefix_len, 112);
    EXPECT_EQ(parse_params("np_tcp_duration_s: 3\n", "params.yml").params.prefix_len, 24);
    // Addresses of another /64 are still refused, naming the client's key.
    try {
        parse_params("np_server_ip: \"2001:2::1\"\nnp_client_ip: \"2001:2:0:1::2\"\n",
                     "params.yml");
        ADD_FAILURE() << "accepted two /64s";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "np_client_ip");
    }
}

// Not a params file at all (/etc/shadow given by mistake): refused naming the file, and none
// of its content is repeated — an entry is named only by a key that reads as a name.
TEST(Params, AFileWithNoNpKeyIsRefusedAndItsContentIsNeverEchoed) {
    const std::string shadow =
        "root: $y$j9T$Qx0secret0hash$Zz\n\"daemon:*:19000:0:99999:7:::\": x\n";
    try {
        parse_params(shadow, "/etc/shadow");
        ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "/etc/shadow");
        EXPECT_NE(std::string(e.what()).find("has no np_* key"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
    }
    const auto r = parse_params("np_port: 5202\n\"daemon:*:19000:0:99999:7:::\": x\n", "p.yml");
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0], "p.yml: line 2: an entry that is not an np_* key (ignored)");
    // No file at all: the built-in defaults, from an empty mapping.
    EXPECT_NO_THROW(parse_params("{}", "built-in defaults"));
}

// Ansible reads the same file as YAML 1.1: what it would read differently is refused, naming
// the key, so every mode reads the same params.
TEST(Params, WhatAnsibleReadsDifferentlyIsRefused) {
    for (const char* number : {"010", "0x1451", "5_201", "1:30", "0b1", "-05"}) {
        SCOPED_TRACE(number);
        EXPECT_EQ(rejected(std::string("np_port: ") + number + "\n"),
                  std::make_pair(std::string("np_port"), 1));
    }
    EXPECT_EQ(parse_params("np_ping_count: 10\n", "p").params.ping_count, 10);
    // A negative zero is no load; an offered load past any link (2^64 bit/s would wrap
    // iperf3's 64-bit -b).
    EXPECT_EQ(rejected("np_udp_bandwidth: \"-0\"\n"),
              std::make_pair(std::string("np_udp_bandwidth"), 1));
    EXPECT_EQ(rejected("np_udp_bandwidth: \"18446744073709551616\"\n"),
              std::make_pair(std::string("np_udp_bandwidth"), 1));
    // A merge key: Ansible merges the anchored mapping in, yaml-cpp does not.
    EXPECT_EQ(rejected("np_port: 5202\n<<: {np_tcp_duration_s: 3}\n"),
              std::make_pair(std::string("params.yml"), 2));
}

TEST(Params, UnknownKeysAreWarnedAboutWithTheirLineAndIgnored) {
    const auto r =
        parse_params("np_port: 5202\nnp_prot: 5203\nomf_image: baseline.ndz\n", "params.yml");
    EXPECT_EQ(r.params.port, 5202);
    ASSERT_EQ(r.warnings.size(), 2u);
    EXPECT_EQ(r.warnings[0], "params.yml: line 2: unknown key 'np_prot' (ignored)");
    EXPECT_NE(r.warnings[1].find("'omf_image'"), std::string::npos);
}

TEST(Params, UdpBandwidthIsParsedAsIperfWritesRates) {
    EXPECT_DOUBLE_EQ(parse_params("np_udp_bandwidth: 9gbps\n", "p").params.udp_bandwidth_bps, 9e9);
    EXPECT_DOUBLE_EQ(parse_params("np_udp_bandwidth: 500M\n", "p").params.udp_bandwidth_bps, 500e6);
    EXPECT_EQ(rejected("np_udp_bandwidth: fast\n"),
              std::make_pair(std::string("np_udp_bandwidth"), 1));
    // iperf3's RATE/BURST: the rate is offered in bursts of that many packets, kept as written.
    const auto burst = parse_params("np_udp_bandwidth: 30M/100\n", "p").params;
    EXPECT_DOUBLE_EQ(burst.udp_bandwidth_bps, 30e6);
    EXPECT_EQ(burst.udp_bandwidth, "30M/100");
    for (const char* bad : {"30M/0", "30M/1001", "30M/", "30M/ten", "30M/5x", "/100"})
        EXPECT_EQ(rejected(std::string("np_udp_bandwidth: ") + bad + "\n"),
                  std::make_pair(std::string("np_udp_bandwidth"), 1))
            << bad;
}

TEST(Params, IfaceWithShellMetacharactersIsRejectedNamingTheKey) {
    EXPECT_EQ(rejected("np_port: 1\nnp_data_iface: 'enp0s25; reboot'\n"),
              std::make_pair(std::string("np_data_iface"), 2));
    EXPECT_EQ(rejected("np_data_iface: $(id)\n").first, "np_data_iface");
    EXPECT_EQ(rejected("np_data_iface: eth0`x`\n").first, "np_data_iface");
    EXPECT_EQ(rejected("np_data_iface: averyveryverylong0\n").first, "np_data_iface");
    EXPECT_EQ(rejected("np_data_iface: -v\n").first, "np_data_iface");
    EXPECT_EQ(rejected("np_data_iface: ''\n").first, "np_data_iface");
}

TEST(Params, IfnameRulesFollowTheKernelAndStaySafeInACommand) {
    EXPECT_TRUE(np::is_valid_ifname("enp0s25"));
    EXPECT_TRUE(np::is_valid_ifname("eth0.100"));
    EXPECT_TRUE(np::is_valid_ifname("br-data_1"));
    EXPECT_TRUE(np::is_valid_ifname("abcdefghijklmno"));  // 15, the most IFNAMSIZ allows
    EXPECT_FALSE(np::is_valid_ifname("abcdefghijklmnop"));
    EXPECT_FALSE(np::is_valid_ifname("eth 0"));
    EXPECT_FALSE(np::is_valid_ifname("eth0/1"));
    EXPECT_FALSE(np::is_valid_ifname(".."));
    EXPECT_FALSE(np::is_valid_ifname("a|b"));
}

TEST(Params, WrongTypesAreRejectedNamingTheKey) {
    EXPECT_EQ(rejected("np_port: fivethousand\n").first, "np_port");
    EXPECT_EQ(rejected("np_port: 5201.5\n").first, "np_port");
    EXPECT_EQ(rejected("np_ping_count: [1, 2]\n").first, "np_ping_count");
    EXPECT_EQ(rejected("np_tcp_duration_s:\n").first, "np_tcp_duration_s");
    EXPECT_EQ(rejected("np_server_ip: {a: 1}\n").first, "np_server_ip");
    EXPECT_EQ(rejected("np_server_ip: node1-1\n").first, "np_server_ip");
}

TEST(Params, OutOfRangeValuesAreRejectedNamingTheKey) {
    EXPECT_EQ(rejected("np_port: 0\n").first, "np_port");
    EXPECT_EQ(rejected("np_port: 65536\n").first, "np_port");
    EXPECT_EQ(rejected("np_ping_count: 0\n").first, "np_ping_count");
    EXPECT_EQ(rejected("np_udp_duration_s: -1\n").first, "np_udp_duration_s");
    EXPECT_EQ(rejected("np_prefix_len: 33\n").first, "np_prefix_len");
    EXPECT_EQ(rejected("np_link_rate: 5M\n").first, "np_link_rate");
    EXPECT_EQ(rejected("np_image_marker: relative/path\n").first, "np_image_marker");
}

TEST(Params, ServerAndClientMustShareTheSubnet) {
    EXPECT_EQ(rejected("np_server_ip: 198.18.0.1\nnp_client_ip: 198.18.1.2\n"),
              std::make_pair(std::string("np_client_ip"), 2));
    EXPECT_EQ(rejected("np_server_ip: 198.18.0.1\nnp_client_ip: 198.18.0.1\n").first,
              "np_client_ip");
    EXPECT_EQ(rejected("np_server_ip: 198.18.0.1\nnp_client_ip: 'fd00::2'\n").first,
              "np_client_ip");
    EXPECT_NO_THROW(parse_params(
        "np_server_ip: 198.18.0.1\nnp_client_ip: 198.18.1.2\nnp_prefix_len: 16\n", "p"));
    EXPECT_NO_THROW(
        parse_params("np_server_ip: 'fd00::1'\nnp_client_ip: 'fd00::2'\nnp_prefix_len: 64\n", "p"));
}

TEST(Params, NotAMappingIsRejectedNamingTheFile) {
    EXPECT_EQ(rejected("").first, "params.yml");
    EXPECT_EQ(rejected("- np_port\n").first, "params.yml");
    EXPECT_EQ(rejected("np_port: [\n").first, "params.yml");
}

// The keys that say how iperf3 runs the tests, as its options do; absent, the command lines are
// the tutorial's own.
TEST(Params, TheTestOptionsBecomeIperf3sOwnOptions) {
    using np::Transport;
    const auto options = [](const std::string& yaml, Transport t) {
        std::string line;
        for (const auto& w : np::iperf3_client_options(parse_params(yaml, "p.yml").params, t))
            line += (line.empty() ? "" : " ") + w;
        return line;
    };
    EXPECT_EQ(options("np_port: 5202\n", Transport::tcp), "-p 5202 -t 10 -J");
    EXPECT_EQ(options("np_port: 5202\n", Transport::udp),
              "-p 5202 -u -b 1G -t 10 -J --get-server-output");
    const std::string all =
        "np_parallel: 4\nnp_direction: reverse\nnp_udp_length: 1200\nnp_window: 4M\n"
        "np_tcp_congestion: reno\nnp_pacing_rate: 900M\nnp_zerocopy: true\n";
    // -C is TCP's, -l the UDP test's datagram: each only on its own test.
    EXPECT_EQ(options(all, Transport::tcp),
              "-p 5201 -t 10 -P 4 -R -w 4M -C reno --fq-rate 900M -Z -J");
    EXPECT_EQ(options(all, Transport::udp),
              "-p 5201 -u -b 1G -t 10 -l 1200 -P 4 -R -w 4M --fq-rate 900M -Z -J "
              "--get-server-output");
    EXPECT_EQ(options("np_direction: bidir\n", Transport::tcp), "-p 5201 -t 10 --bidir -J");
    const auto p = parse_params(all, "p.yml").params;
    EXPECT_EQ(p.parallel, 4);
    EXPECT_EQ(p.direction, np::Direction::reverse);
    EXPECT_EQ(p.udp_length, 1200);
    EXPECT_TRUE(p.zerocopy);
}

TEST(Params, BadTestOptionsAreRejectedNamingTheKey) {
    for (const char* bad : {"np_parallel: 0\n", "np_parallel: 129\n", "np_parallel: two\n"})
        EXPECT_EQ(rejected(bad).first, "np_parallel") << bad;
    for (const char* bad : {"np_direction: backwards\n", "np_direction: -R\n"})
        EXPECT_EQ(rejected(bad).first, "np_direction") << bad;
    for (const char* bad : {"np_udp_length: 15\n", "np_udp_length: 65508\n"})
        EXPECT_EQ(rejected(bad).first, "np_udp_length") << bad;
    // iperf3's -w takes K, M, G as powers of 1024 and refuses more than 512 MiB.
    for (const char* bad : {"np_window: 4Mb\n", "np_window: 1G\n", "np_window: 512\n",
                            "np_window: '4M; reboot'\n", "np_window: -4M\n"})
        EXPECT_EQ(rejected(bad).first, "np_window") << bad;
    for (const char* bad : {"np_tcp_congestion: 'bbr;ls'\n", "np_tcp_congestion: BBR\n",
                            "np_tcp_congestion: averyverylongname\n"})
        EXPECT_EQ(rejected(bad).first, "np_tcp_congestion") << bad;
    for (const char* bad : {"np_pacing_rate: fast\n", "np_pacing_rate: 2T\n"})
        EXPECT_EQ(rejected(bad).first, "np_pacing_rate") << bad;
    // Ansible (YAML 1.1) reads yes/on as true; np-explain takes only true and false.
    for (const char* bad : {"np_zerocopy: yes\n", "np_zerocopy: 1\n"})
        EXPECT_EQ(rejected(bad), std::make_pair(std::string("np_zerocopy"), 1)) << bad;
    EXPECT_NO_THROW(parse_params("np_window: 512M\nnp_zerocopy: false\n", "p"));
    // iperf3 -A: a CPU, or the client's and the server's.
    for (const char* bad : {"np_affinity: x\n", "np_affinity: '1,'\n", "np_affinity: -1\n",
                            "np_affinity: 5000\n", "np_affinity: '1,2,3'\n"})
        EXPECT_EQ(rejected(bad).first, "np_affinity") << bad;
    for (const char* good : {"np_affinity: 1\n", "np_affinity: '1,0'\n"}) {
        const np::Params p = parse_params(good, "p").params;
        const auto o = np::iperf3_client_options(p, np::Transport::udp);
        const auto a = std::find(o.begin(), o.end(), "-A");
        ASSERT_NE(a, o.end()) << good;
        EXPECT_EQ(*(a + 1), p.affinity) << good;
    }
    // The UDP ceiling search: one direction, a threshold in 0.001 … 50 %.
    EXPECT_EQ(rejected("np_find_udp_ceiling: true\nnp_direction: bidir\n").first,
              "np_find_udp_ceiling");
    for (const char* bad :
         {"np_ceiling_loss_pct: 0\n", "np_ceiling_loss_pct: 51\n", "np_ceiling_loss_pct: 1%\n"})
        EXPECT_EQ(rejected(bad).first, "np_ceiling_loss_pct") << bad;
    EXPECT_EQ(parse_params("np_ceiling_loss_pct: 0.5\n", "p").params.ceiling_loss_pct, 0.5);
    // The run's MTU: 576 … 65535, and IPv6's 1280 at least over IPv6.
    for (const char* bad : {"np_mtu: 575\n", "np_mtu: 65536\n", "np_mtu: 9k\n",
                            "np_server_ip: '2001:2::1'\nnp_client_ip: '2001:2::2'\nnp_mtu: 1279\n"})
        EXPECT_EQ(rejected(bad).first, "np_mtu") << bad;
    EXPECT_EQ(parse_params("np_mtu: 9000\n", "p").params.mtu, 9000);
    for (const char* bad : {"np_repeat: 0\n", "np_repeat: 21\n"})
        EXPECT_EQ(rejected(bad).first, "np_repeat") << bad;
}

}  // namespace
