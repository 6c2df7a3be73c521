#include "analysis/readers/params.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>

#include "analysis/readers/rate.hpp"
#include "analysis/readers/yaml_scalar.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

int integer(const std::string& key, const YAML::Node& value, int min, int max) {
    const std::string text = yaml_scalar(key, value);
    // Ansible reads YAML 1.1, where a leading 0 makes an integer octal (010 is 8), and 0x, 0b,
    // 1_000 and 1:30 are integers too: written so, a key would mean one thing to the playbook
    // and another here, so only plain decimal is accepted.
    const size_t digits = text.find_first_not_of("+-");
    if (digits != std::string::npos && ((text.size() > digits + 1 && text[digits] == '0') ||
                                        text.find_first_of("_:xXbBoO") != std::string::npos)) {
        throw InputError(key,
                         fmt::format("'{}': write the number in plain decimal (Ansible, which "
                                     "reads this file too, takes a leading 0 for octal and "
                                     "reads _, 0x, 0b and : as parts of a number)",
                                     text),
                         yaml_line(value));
    }
    long long v = 0;
    size_t used = 0;
    try {
        v = std::stoll(text, &used, 10);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size()) {
        throw InputError(key, fmt::format("'{}' is not a whole number", text), yaml_line(value));
    }
    if (v < min || v > max) {
        throw InputError(key, fmt::format("{} is out of range {} … {}", v, min, max),
                         yaml_line(value));
    }
    return static_cast<int>(v);
}

struct Address {
    int family = 0;
    std::array<uint8_t, 16> bytes{};
};

std::optional<Address> address_of(const std::string& text) {
    Address a;
    if (inet_pton(AF_INET, text.c_str(), a.bytes.data()) == 1) {
        a.family = AF_INET;
    } else if (inet_pton(AF_INET6, text.c_str(), a.bytes.data()) == 1) {
        a.family = AF_INET6;
    } else {
        return std::nullopt;
    }
    return a;
}

Address parse_address(const std::string& text, const std::string& field, int line) {
    if (auto a = address_of(text)) return *a;
    throw InputError(field, fmt::format("'{}' is not an IPv4 or IPv6 address", text), line);
}

Address address(const std::string& key, const YAML::Node& value) {
    return parse_address(yaml_scalar(key, value), key, yaml_line(value));
}

bool same_prefix(const Address& a, const Address& b, int prefix_len) {
    for (int bit = 0; bit < prefix_len; ++bit) {
        const uint8_t mask = static_cast<uint8_t>(0x80u >> (bit % 8));
        if ((a.bytes[bit / 8] & mask) != (b.bytes[bit / 8] & mask)) return false;
    }
    return true;
}

}  // namespace

void check_address_pair(const std::string& server_ip, const std::string& client_ip, int prefix_len,
                        const std::string& field, int line) {
    const Address server = parse_address(server_ip, field, line);
    const Address client = parse_address(client_ip, field, line);
    if (server.family != client.family) {
        throw InputError(
            field, fmt::format("{} and {} are not of the same IP version", server_ip, client_ip),
            line);
    }
    if (server.bytes == client.bytes) {
        throw InputError(
            field, fmt::format("the server and the client both have address {}", server_ip), line);
    }
    if (prefix_len > (server.family == AF_INET ? 32 : 128) ||
        !same_prefix(server, client, prefix_len)) {
        throw InputError(field,
                         fmt::format("{} and {} are not in the same /{} subnet, so the data "
                                     "interfaces would not reach each other directly",
                                     server_ip, client_ip, prefix_len),
                         line);
    }
}

bool same_address(const std::string& a, const std::string& b) {
    const auto x = address_of(a), y = address_of(b);
    if (!x || !y) return a == b;
    return x->family == y->family && x->bytes == y->bytes;
}

bool is_valid_ifname(std::string_view name) {
    // IFNAMSIZ is 16 including the NUL. A leading '-' would read as an option to ip/ethtool.
    if (name.empty() || name.size() > 15 || name == "." || name == ".." || name.front() == '-') {
        return false;
    }
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
        if (!ok) return false;
    }
    return true;
}

namespace {

// What the key readers fill: the params, and where the address keys were, for the pair's check.
struct KeyReading {
    Params& p;
    int server_line = 0, client_line = 0, prefix_line = 0;
    bool prefix_given = false;
};

using KeyReader = void (*)(KeyReading&, const std::string&, const YAML::Node&);

// A rate as iperf3's -b and --fq-rate read it, as written, checked: at least 1 bit/s, at most
// 1 Tbit/s (iperf3 keeps it in 64 bits, and no link modelled is above 400G: more is a typo).
// iperf3's -b: RATE, or RATE/BURST to send BURST packets back to back at each pacing interval
// (1 to 1,000: iperf3's MAX_BURST). Returns the rate.
double offered_rate(const std::string& key, const YAML::Node& value, const std::string& text) {
    double bps = 0;
    std::string rate = text;
    if (const auto slash = text.find('/'); slash != std::string::npos) {
        const std::string burst = text.substr(slash + 1);
        int packets = 0;
        const auto [ptr, ec] = std::from_chars(burst.data(), burst.data() + burst.size(), packets);
        if (ec != std::errc() || ptr != burst.data() + burst.size() || packets < 1 ||
            packets > 1000) {
            throw InputError(key,
                             fmt::format("'{}': the burst after '/' must be a number of packets "
                                         "from 1 to 1000, as iperf3 -b RATE/BURST takes it",
                                         text),
                             yaml_line(value));
        }
        rate = text.substr(0, slash);
    }
    try {
        bps = parse_rate_bps(rate, key);
    } catch (const InputError& e) {
        throw InputError(key, e.what(), yaml_line(value));
    }
    if (bps < 1) throw InputError(key, "the rate must be at least 1 bit/s", yaml_line(value));
    if (bps > 1e12) {
        throw InputError(key,
                         fmt::format("'{}' is above 1 Tbit/s, more than any link np-explain "
                                     "models (10M to 400G)",
                                     text),
                         yaml_line(value));
    }
    return bps;
}

// A size as iperf3's -w reads it: a number of bytes with an optional K, M or G (powers of 1024).
void socket_buffer(KeyReading& r, const std::string& k, const YAML::Node& v) {
    const std::string text = yaml_scalar(k, v);
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
    const std::string_view unit(ptr, static_cast<size_t>(end - ptr));
    const double scale = unit.empty()                 ? 1
                         : unit == "K" || unit == "k" ? 1024
                         : unit == "M" || unit == "m" ? 1024.0 * 1024
                         : unit == "G" || unit == "g" ? 1024.0 * 1024 * 1024
                                                      : 0;
    if (ec != std::errc() || ptr == text.data() || scale == 0 || !std::isfinite(value)) {
        throw InputError(k,
                         fmt::format("'{}' is not a size: a number of bytes with an optional K, "
                                     "M or G (as iperf3's -w: 256K, 4M)",
                                     text),
                         yaml_line(v));
    }
    // iperf3 refuses a buffer above 512 MiB; below 1 KiB the kernel raises it to its minimum.
    if (value * scale < 1024 || value * scale > 512.0 * 1024 * 1024) {
        throw InputError(k, fmt::format("'{}' is out of range 1K … 512M", text), yaml_line(v));
    }
    r.p.window = text;
}

bool boolean(const std::string& k, const YAML::Node& v) {
    const std::string text = yaml_scalar(k, v);
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    throw InputError(k,
                     fmt::format("'{}': write true or false (Ansible, which reads this file "
                                 "too, also takes yes, no, on and off; np-explain does not)",
                                 text),
                     yaml_line(v));
}

// iperf3 -A's value: a CPU number, or two ("CLIENT,SERVER"), each below 4096 (iperf3 takes it
// whole into sched_setaffinity; a CPU the node lacks makes the tool fail, said as its error).
std::string cpu_affinity(const std::string& k, const YAML::Node& v) {
    const std::string text = yaml_scalar(k, v);
    const auto cpu = [](std::string_view s) {
        if (s.empty() || s.size() > 4) return false;
        for (const char c : s)
            if (c < '0' || c > '9') return false;
        return std::stoi(std::string(s)) < 4096;
    };
    const size_t comma = text.find(',');
    const bool ok = comma == std::string::npos ? cpu(text)
                                               : cpu(std::string_view(text).substr(0, comma)) &&
                                                     cpu(std::string_view(text).substr(comma + 1));
    if (!ok)
        throw InputError(
            k,
            fmt::format("'{}' is not a CPU: write the client's CPU (1) or CLIENT,SERVER (1,0)",
                        text),
            yaml_line(v));
    return text;
}

void data_iface(KeyReading& r, const std::string& k, const YAML::Node& v) {
    r.p.data_iface = yaml_scalar(k, v);
    if (!is_valid_ifname(r.p.data_iface)) {
        throw InputError(k,
                         fmt::format("'{}' is not an interface name (1-15 characters of A-Z a-z "
                                     "0-9 _ . -, not starting with -)",
                                     r.p.data_iface),
                         yaml_line(v));
    }
}

void image_marker(KeyReading& r, const std::string& k, const YAML::Node& v) {
    std::string& m = r.p.image_marker;
    m = yaml_scalar(k, v);
    if (m.empty() || m.front() != '/' ||
        m.find_first_of(std::string("\n\0", 2)) != std::string::npos) {
        throw InputError(k, fmt::format("'{}' is not an absolute path", m), yaml_line(v));
    }
}

void direction(KeyReading& r, const std::string& k, const YAML::Node& v) {
    const std::string text = yaml_scalar(k, v);
    for (Direction d : {Direction::forward, Direction::reverse, Direction::bidir}) {
        if (text == to_string(d)) {
            r.p.direction = d;
            return;
        }
    }
    throw InputError(k,
                     fmt::format("'{}' is not a direction: forward (client to server), reverse "
                                 "(-R: server to client) or bidir (--bidir: both at once)",
                                 text),
                     yaml_line(v));
}

// A congestion control's name as the kernel knows them (TCP_CA_NAME_MAX: 15 characters).
void congestion(KeyReading& r, const std::string& k, const YAML::Node& v) {
    const std::string text = yaml_scalar(k, v);
    if (text.empty() || text.size() > 15 ||
        text.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
        throw InputError(k,
                         fmt::format("'{}' is not a congestion control's name (1-15 characters of "
                                     "a-z 0-9 _, as in cubic, reno, bbr)",
                                     text),
                         yaml_line(v));
    }
    r.p.congestion = text;
}

// A percentage of loss: a plain decimal number in 0.001 … 50.
void loss_pct(KeyReading& r, const std::string& k, const YAML::Node& v) {
    const std::string text = yaml_scalar(k, v);
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
    if (ec != std::errc() || ptr != end || !(value >= 0.001 && value <= 50)) {
        throw InputError(k, fmt::format("'{}' is not a loss percentage in 0.001 … 50", text),
                         yaml_line(v));
    }
    r.p.ceiling_loss_pct = value;
}

// Every key of the params file and how it is read.
const std::map<std::string, KeyReader, std::less<>>& key_readers() {
    static const std::map<std::string, KeyReader, std::less<>> readers = {
        {"np_data_iface", data_iface},
        {"np_server_ip",
         [](KeyReading& r, const std::string& k, const YAML::Node& v) {
             address(k, v);
             r.p.server_ip = v.Scalar();
             r.server_line = yaml_line(v);
         }},
        {"np_client_ip",
         [](KeyReading& r, const std::string& k, const YAML::Node& v) {
             address(k, v);
             r.p.client_ip = v.Scalar();
             r.client_line = yaml_line(v);
         }},
        {"np_prefix_len",
         [](KeyReading& r, const std::string& k, const YAML::Node& v) {
             r.p.prefix_len = integer(k, v, 1, 128);
             r.prefix_line = yaml_line(v);
             r.prefix_given = true;
         }},
        {"np_port", [](KeyReading& r, const std::string& k,
                       const YAML::Node& v) { r.p.port = integer(k, v, 1, 65535); }},
        {"np_ping_count", [](KeyReading& r, const std::string& k,
                             const YAML::Node& v) { r.p.ping_count = integer(k, v, 1, 10000); }},
        {"np_tcp_duration_s",
         [](KeyReading& r, const std::string& k, const YAML::Node& v) {
             r.p.tcp_duration_s = integer(k, v, 1, 86400);
         }},
        {"np_udp_duration_s",
         [](KeyReading& r, const std::string& k, const YAML::Node& v) {
             r.p.udp_duration_s = integer(k, v, 1, 86400);
         }},
        {"np_udp_bandwidth",
         [](KeyReading& r, const std::string& k, const YAML::Node& v) {
             r.p.udp_bandwidth = yaml_scalar(k, v);
             r.p.udp_bandwidth_bps = offered_rate(k, v, r.p.udp_bandwidth);
         }},
        {"np_image_marker", image_marker},
        {"np_link_rate",
         [](KeyReading& r, const std::string& k, const YAML::Node& v) {
             try {
                 r.p.link_rate_bps = parse_link_rate_bps(yaml_scalar(k, v), k);
             } catch (const InputError& e) {
                 throw InputError(k, e.what(), yaml_line(v));
             }
         }},
        // iperf3 runs at most 128 streams (MAX_STREAMS).
        {"np_parallel", [](KeyReading& r, const std::string& k,
                           const YAML::Node& v) { r.p.parallel = integer(k, v, 1, 128); }},
        {"np_direction", direction},
        // iperf3's bounds: a sequence number and a timestamp (16 bytes) … an IPv4 datagram's
        // 65,507.
        {"np_udp_length", [](KeyReading& r, const std::string& k,
                             const YAML::Node& v) { r.p.udp_length = integer(k, v, 16, 65507); }},
        {"np_window", socket_buffer},
        {"np_tcp_congestion", congestion},
        {"np_pacing_rate",
         [](KeyReading& r, const std::string& k, const YAML::Node& v) {
             r.p.pacing_rate = yaml_scalar(k, v);
             offered_rate(k, v, r.p.pacing_rate);
         }},
        {"np_zerocopy", [](KeyReading& r, const std::string& k,
                           const YAML::Node& v) { r.p.zerocopy = boolean(k, v); }},
        {"np_affinity", [](KeyReading& r, const std::string& k,
                           const YAML::Node& v) { r.p.affinity = cpu_affinity(k, v); }},
        // 576: IPv4's smallest datagram every host takes; 65535: the most a Linux link has.
        {"np_mtu", [](KeyReading& r, const std::string& k,
                      const YAML::Node& v) { r.p.mtu = integer(k, v, 576, 65535); }},
        {"np_repeat", [](KeyReading& r, const std::string& k,
                         const YAML::Node& v) { r.p.repeat = integer(k, v, 1, 20); }},
        {"np_find_udp_ceiling", [](KeyReading& r, const std::string& k,
                                   const YAML::Node& v) { r.p.find_udp_ceiling = boolean(k, v); }},
        {"np_ceiling_loss_pct", loss_pct},
    };
    return readers;
}

YAML::Node load_mapping(std::string_view yaml_text, const std::string& source) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml_text));
    } catch (const YAML::ParserException& e) {
        throw InputError(source, e.msg, e.mark.line + 1);
    }
    if (!root.IsMap()) {
        throw InputError(source, root.IsNull() ? "has no keys; expected np_* keys (see README)"
                                               : "must be a mapping of np_* keys to values");
    }
    return root;
}

// A key that is not one of ours: named only when it reads as a key name (the file may not be a
// params file at all, and its lines are not repeated: a password hash is never printed).
std::string unknown_key(const std::string& key, const std::string& source, int line) {
    const bool name_like =
        !key.empty() && key.size() <= 64 &&
        key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
            std::string::npos;
    return name_like ? fmt::format("{}: line {}: unknown key '{}' (ignored)", source, line, key)
                     : fmt::format("{}: line {}: an entry that is not an np_* key (ignored)",
                                   source, line);
}

// Defaults stand in for keys that are absent, so the pair is checked as it will be used. A
// problem with the pair is the client's when its line is given (or neither is).
void check_pair(KeyReading& r) {
    Params& p = r.p;
    const Address server = parse_address(p.server_ip, "np_server_ip", r.server_line);
    const int max_prefix = server.family == AF_INET ? 32 : 128;
    // Without np_prefix_len an IPv6 pair is in a /64, as an IPv6 segment is.
    if (!r.prefix_given && server.family == AF_INET6) p.prefix_len = 64;
    if (p.prefix_len > max_prefix) {
        throw InputError("np_prefix_len",
                         fmt::format("{} is out of range 1 … {} for {}", p.prefix_len, max_prefix,
                                     server.family == AF_INET ? "IPv4" : "IPv6"),
                         r.prefix_line);
    }
    const bool blame_client = r.client_line > 0 || r.server_line == 0;
    check_address_pair(p.server_ip, p.client_ip, p.prefix_len,
                       blame_client ? "np_client_ip" : "np_server_ip",
                       blame_client ? r.client_line : r.server_line);
}

}  // namespace

const char* to_string(Direction d) {
    switch (d) {
        case Direction::reverse:
            return "reverse";
        case Direction::bidir:
            return "bidir";
        case Direction::forward:
            break;
    }
    return "forward";
}

ParamsReading parse_params(std::string_view yaml_text, const std::string& source) {
    const YAML::Node root = load_mapping(yaml_text, source);
    ParamsReading out;
    KeyReading r{out.params};
    size_t known = 0;
    for (const auto& entry : root) {
        const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
        if (key == "<<")
            throw InputError(source,
                             "a merge key (<<): write each np_* key out (Ansible merges it, "
                             "np-explain does not, so the modes would read different params)",
                             yaml_line(entry.first));
        const auto reader = key_readers().find(key);
        if (reader == key_readers().end()) {
            out.warnings.push_back(unknown_key(key, source, yaml_line(entry.first)));
            continue;
        }
        reader->second(r, key, entry.second);
        ++known;
    }
    if (known == 0 && root.size() > 0)  // entries, none of them ours (no file at all is "{}")
        throw InputError(source,
                         "has no np_* key: not a params file (the tutorial's "
                         "network-performance_params.yml sets np_data_iface, np_server_ip, …)");
    check_pair(r);
    if (const auto server = address_of(r.p.server_ip);
        r.p.mtu && *r.p.mtu < 1280 && server && server->family == AF_INET6)
        throw InputError("np_mtu", fmt::format("{} is below IPv6's minimum MTU, 1280", *r.p.mtu));
    if (r.p.find_udp_ceiling && r.p.direction == Direction::bidir)
        throw InputError("np_find_udp_ceiling",
                         "searches one direction's load; np_direction bidir runs two at once");
    return out;
}

std::vector<std::string> iperf3_client_options(const Params& p, Transport t) {
    const bool udp = t == Transport::udp;
    std::vector<std::string> o = {"-p", std::to_string(p.port)};
    if (udp) o.insert(o.end(), {"-u", "-b", p.udp_bandwidth});
    o.insert(o.end(), {"-t", std::to_string(udp ? p.udp_duration_s : p.tcp_duration_s)});
    if (udp && p.udp_length) o.insert(o.end(), {"-l", std::to_string(*p.udp_length)});
    if (p.parallel > 1) o.insert(o.end(), {"-P", std::to_string(p.parallel)});
    if (p.direction == Direction::reverse) o.emplace_back("-R");
    if (p.direction == Direction::bidir) o.emplace_back("--bidir");
    if (!p.window.empty()) o.insert(o.end(), {"-w", p.window});
    if (!udp && !p.congestion.empty()) o.insert(o.end(), {"-C", p.congestion});
    if (!p.pacing_rate.empty()) o.insert(o.end(), {"--fq-rate", p.pacing_rate});
    if (p.zerocopy) o.emplace_back("-Z");
    if (!p.affinity.empty()) o.insert(o.end(), {"-A", p.affinity});
    o.emplace_back("-J");
    if (udp) o.emplace_back("--get-server-output");
    return o;
}

}  // namespace np
