#include "analysis/readers/params.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
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

ParamsReading parse_params(std::string_view yaml_text, const std::string& source) {
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

    ParamsReading r;
    Params& p = r.params;
    int server_line = 0, client_line = 0, prefix_line = 0;
    bool prefix_given = false;
    const std::map<std::string, std::function<void(const std::string&, const YAML::Node&)>> keys = {
        {"np_data_iface",
         [&](const std::string& k, const YAML::Node& v) {
             p.data_iface = yaml_scalar(k, v);
             if (!is_valid_ifname(p.data_iface)) {
                 throw InputError(k,
                                  fmt::format("'{}' is not an interface name (1-15 characters of "
                                              "A-Z a-z 0-9 _ . -, not starting with -)",
                                              p.data_iface),
                                  yaml_line(v));
             }
         }},
        {"np_server_ip",
         [&](const std::string& k, const YAML::Node& v) {
             address(k, v);
             p.server_ip = v.Scalar();
             server_line = yaml_line(v);
         }},
        {"np_client_ip",
         [&](const std::string& k, const YAML::Node& v) {
             address(k, v);
             p.client_ip = v.Scalar();
             client_line = yaml_line(v);
         }},
        {"np_prefix_len",
         [&](const std::string& k, const YAML::Node& v) {
             p.prefix_len = integer(k, v, 1, 128);
             prefix_line = yaml_line(v);
             prefix_given = true;
         }},
        {"np_port",
         [&](const std::string& k, const YAML::Node& v) { p.port = integer(k, v, 1, 65535); }},
        {"np_ping_count", [&](const std::string& k,
                              const YAML::Node& v) { p.ping_count = integer(k, v, 1, 10000); }},
        {"np_tcp_duration_s",
         [&](const std::string& k, const YAML::Node& v) {
             p.tcp_duration_s = integer(k, v, 1, 86400);
         }},
        {"np_udp_duration_s",
         [&](const std::string& k, const YAML::Node& v) {
             p.udp_duration_s = integer(k, v, 1, 86400);
         }},
        {"np_udp_bandwidth",
         [&](const std::string& k, const YAML::Node& v) {
             p.udp_bandwidth = yaml_scalar(k, v);
             try {
                 p.udp_bandwidth_bps = parse_rate_bps(p.udp_bandwidth, k);
             } catch (const InputError& e) {
                 throw InputError(k, e.what(), yaml_line(v));
             }
             if (p.udp_bandwidth_bps < 1) {
                 throw InputError(k, "the offered load must be at least 1 bit/s", yaml_line(v));
             }
             // iperf3 keeps -b in 64 bits and no link modelled is above 400G: a load past
             // 1 Tbit/s is a typo, never a test.
             if (p.udp_bandwidth_bps > 1e12) {
                 throw InputError(k,
                                  fmt::format("'{}' is above 1 Tbit/s, more than any link "
                                              "np-explain models (10M to 400G)",
                                              p.udp_bandwidth),
                                  yaml_line(v));
             }
         }},
        {"np_image_marker",
         [&](const std::string& k, const YAML::Node& v) {
             p.image_marker = yaml_scalar(k, v);
             if (p.image_marker.empty() || p.image_marker.front() != '/' ||
                 p.image_marker.find_first_of(std::string("\n\0", 2)) != std::string::npos) {
                 throw InputError(k, fmt::format("'{}' is not an absolute path", p.image_marker),
                                  yaml_line(v));
             }
         }},
        {"np_link_rate",
         [&](const std::string& k, const YAML::Node& v) {
             try {
                 p.link_rate_bps = parse_link_rate_bps(yaml_scalar(k, v), k);
             } catch (const InputError& e) {
                 throw InputError(k, e.what(), yaml_line(v));
             }
         }},
    };

    size_t known = 0;
    for (const auto& entry : root) {
        const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
        if (key == "<<")
            throw InputError(source,
                             "a merge key (<<): write each np_* key out (Ansible merges it, "
                             "np-explain does not, so the modes would read different params)",
                             yaml_line(entry.first));
        const auto handler = keys.find(key);
        if (handler == keys.end()) {
            // Named only when it reads as a key name: the file may not be a params file at all,
            // and its lines are not repeated (a password hash is never printed).
            const bool name_like =
                !key.empty() && key.size() <= 64 &&
                key.find_first_not_of(
                    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                    std::string::npos;
            r.warnings.push_back(
                name_like ? fmt::format("{}: line {}: unknown key '{}' (ignored)", source,
                                        yaml_line(entry.first), key)
                          : fmt::format("{}: line {}: an entry that is not an np_* key (ignored)",
                                        source, yaml_line(entry.first)));
            continue;
        }
        handler->second(key, entry.second);
        ++known;
    }
    if (known == 0 && root.size() > 0)  // entries, none of them ours (no file at all is "{}")
        throw InputError(source,
                         "has no np_* key: not a params file (the tutorial's "
                         "network-performance_params.yml sets np_data_iface, np_server_ip, …)");

    // Defaults stand in for keys that are absent, so check the pair as it will be used. A
    // problem with the pair is the client's when its line is given (or neither is).
    const auto max_prefix = [&](const Address& a) { return a.family == AF_INET ? 32 : 128; };
    const Address server = parse_address(p.server_ip, "np_server_ip", server_line);
    // Without np_prefix_len an IPv6 pair is in a /64, as an IPv6 segment is.
    if (!prefix_given && server.family == AF_INET6) p.prefix_len = 64;
    if (p.prefix_len > max_prefix(server)) {
        throw InputError(
            "np_prefix_len",
            fmt::format("{} is out of range 1 … {} for {}", p.prefix_len, max_prefix(server),
                        server.family == AF_INET ? "IPv4" : "IPv6"),
            prefix_line);
    }
    const bool blame_client = client_line > 0 || server_line == 0;
    check_address_pair(p.server_ip, p.client_ip, p.prefix_len,
                       blame_client ? "np_client_ip" : "np_server_ip",
                       blame_client ? client_line : server_line);
    return r;
}

}  // namespace np
