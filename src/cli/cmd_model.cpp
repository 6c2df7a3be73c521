#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "analysis/explanation/format.hpp"
#include "analysis/explanation/model.hpp"
#include "analysis/readers/rate.hpp"
#include "common/errors.hpp"
#include "src/cli/commands.hpp"

namespace np::cli {
namespace {

struct ModelOptions {
    std::string link = "1G";
    int mtu = 1500;
    int vlan = 0;
    bool ipv6 = false;
    bool no_tcp_timestamps = false;
    int udp_payload = 0;
    bool udp_payload_given = false;
    bool json = false;
};

std::string render(const Model& m) {
    const auto& p = m.params;
    std::string out = fmt::format(
        "Header-overhead model: {} link, MTU {}, {}{}, TCP timestamps {}, UDP payload {} B\n\n",
        format_link_rate(p.link_bps), p.mtu_bytes, p.ip == IpVersion::v4 ? "IPv4" : "IPv6",
        p.vlan_tags ? fmt::format(", {} VLAN tag{}", p.vlan_tags, p.vlan_tags > 1 ? "s" : "") : "",
        p.tcp_timestamps ? "on" : "off", p.udp_payload_bytes);
    Table t({"", "goodput ceiling", "efficiency", "payload B", "wire B", "frames/s"});
    for (const Ceiling* c : {&m.tcp, &m.udp}) {
        t.add_row({c->transport == Transport::tcp ? "TCP" : "UDP", format_rate(c->goodput_bps),
                   format_pct(c->efficiency), std::to_string(c->payload_bytes_per_unit),
                   std::to_string(c->wire_bytes_per_unit), format_count(c->frames_per_second)});
    }
    out += t.render() + "\n";
    out += fmt::format("TCP: {}.\n", describe_overhead(m.tcp));
    out += fmt::format("UDP: {}.\n", describe_overhead(m.udp));
    const int tcp_l4 = m.tcp.frames.front().bytes_of("tcp_header") +
                       m.tcp.frames.front().bytes_of("tcp_timestamps");
    if (m.udp.efficiency > m.tcp.efficiency) {
        out += fmt::format(
            "UDP's ceiling is above TCP's because its L4 header is {} bytes against TCP's {}.\n",
            kUdpHeaderBytes, tcp_l4);
    }
    if (m.udp.fragmented()) {
        out += fmt::format(
            "The {}-byte UDP payload exceeds MTU {} minus headers, so each datagram is "
            "IP-fragmented "
            "into {} frames; losing any one of them loses the datagram.\n",
            p.udp_payload_bytes, p.mtu_bytes, m.udp.frames.size());
    }
    return out;
}

int run_model(const ModelOptions& o) {
    ModelParams p;
    p.link_bps = parse_link_rate_bps(o.link, "--link");
    p.mtu_bytes = o.mtu;
    p.vlan_tags = o.vlan;
    p.ip = o.ipv6 ? IpVersion::v6 : IpVersion::v4;
    p.tcp_timestamps = !o.no_tcp_timestamps;
    // Unless given, what iperf3 (3.1.5+) sends: datagrams of its control connection's MSS, so
    // 1448 over IPv4 at MTU 1500 with timestamps, 1428 over IPv6, 8948 at MTU 9000.
    p.udp_payload_bytes = o.udp_payload_given
                              ? o.udp_payload
                              : std::clamp(tcp_mss_bytes(p), 1, max_udp_payload_bytes(p.ip));
    Model m;
    try {
        m = compute_model(p);
    } catch (const InputError& e) {
        throw InputError("--" + e.field(), e.what());
    }
    if (o.json) {
        fmt::print("{}\n", to_json(m).dump(2));
    } else {
        fmt::print("{}", render(m));
    }
    return 0;
}

}  // namespace

void add_model_command(CLI::App& app, Runner& run) {
    auto opts = std::make_shared<ModelOptions>();
    CLI::App* sub = app.add_subcommand(
        "model", "Header-overhead model: TCP and UDP goodput ceilings, frame breakdown, frames/s");
    sub->add_option("--link", opts->link,
                    "Link rate: 10M..400G, suffix k/M/G/T (decimal), or plain bit/s (default 1G)");
    sub->add_option("--mtu", opts->mtu,
                    "IP MTU in bytes, 68..65535 (1280.. for IPv6); default 1500");
    sub->add_option("--vlan", opts->vlan, "Number of 802.1Q tags, 0..2; default 0");
    sub->add_flag("--ipv6", opts->ipv6, "Model IPv6 (40-byte header) instead of IPv4");
    sub->add_flag("--no-tcp-timestamps", opts->no_tcp_timestamps,
                  "TCP without the 12-byte timestamp option (Linux enables it by default)");
    CLI::Option* payload = sub->add_option(
        "--udp-payload", opts->udp_payload,
        "UDP datagram payload in bytes; default iperf3's: its TCP MSS (1448 over IPv4 at MTU "
        "1500, 1428 over IPv6); iperf2 uses 1470");
    sub->add_flag("--json", opts->json, "Print the model as JSON (units in key names)");
    sub->callback([&run, opts, payload] {
        opts->udp_payload_given = payload->count() > 0;
        run = [opts] { return run_model(*opts); };
    });
}

}  // namespace np::cli
