#include "analysis/iperf2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "analysis/error.hpp"
#include "analysis/text.hpp"

namespace np {
namespace {

using text::take_number;
using text::take_prefix;
using text::take_word;

[[noreturn]] void bad(int line, const std::string& what) {
    throw InputError("iperf2", what, line);
}

int decimals_of(std::string_view printed) {
    const size_t dot = printed.find('.');
    return dot == std::string_view::npos ? 0 : static_cast<int>(printed.size() - dot - 1);
}

// "11.0 GBytes" → bytes (binary units, as iperf2's byte_snprintf prints transfers).
std::optional<double> bytes_unit(std::string_view u) {
    if (u == "Bytes" || u == "Byte") return 1.0;
    if (u == "KBytes" || u == "KByte") return 1024.0;
    if (u == "MBytes" || u == "MByte") return 1024.0 * 1024;
    if (u == "GBytes" || u == "GByte") return 1024.0 * 1024 * 1024;
    if (u == "TBytes" || u == "TByte") return 1024.0 * 1024 * 1024 * 1024;
    return std::nullopt;
}

// "9.42 Gbits/sec" → bit/s (decimal units). -f with byte units prints "MBytes/sec".
std::optional<double> rate_unit(std::string_view u) {
    if (u == "bits/sec") return 1.0;
    if (u == "Kbits/sec") return 1e3;
    if (u == "Mbits/sec") return 1e6;
    if (u == "Gbits/sec") return 1e9;
    if (u == "Tbits/sec") return 1e12;
    if (u.ends_with("/sec")) {
        if (auto b = bytes_unit(u.substr(0, u.size() - 4))) return *b * 8;
    }
    return std::nullopt;
}

// A number and its unit: value, resolution (half a unit of the last digit), both scaled.
struct Quantity {
    double value = 0;
    double resolution = 0;
};

std::optional<Quantity> take_quantity(std::string_view& s, bool rate) {
    std::string_view save = s;
    std::string_view digits = take_word(s);
    std::string_view d = digits;
    const auto v = take_number(d);
    if (!v || !d.empty()) {
        s = save;
        return std::nullopt;
    }
    const std::string_view unit = take_word(s);
    const auto scale = rate ? rate_unit(unit) : bytes_unit(unit);
    if (!scale) {
        s = save;
        return std::nullopt;
    }
    return Quantity{*v * *scale, 0.5 * std::pow(10.0, -decimals_of(digits)) * *scale};
}

// "[  3]" / "[SUM]" / "[SUM-4]" / "[  1][TX-C]"… at the start of a line: the id inside.
std::optional<std::string> take_id(std::string_view& s) {
    if (!s.starts_with("[")) return std::nullopt;
    const size_t close = s.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string id(text::trim(s.substr(1, close - 1)));
    s.remove_prefix(close + 1);
    if (id.empty() || id == "ID") return std::nullopt;
    return id;
}

// The rest of a UDP report after the rate: "  0.005 ms 342498/7134255 (0%)…".
void parse_udp_tail(Iperf2Report& r, std::string_view rest, int line) {
    std::string_view s = rest;
    const auto jitter = take_number(s);
    if (!jitter || !take_prefix(s, "ms")) return;  // a TCP -e tail or a sender's UDP line
    r.jitter_ms = *jitter;
    std::string_view counts = text::trim(s);
    const auto lost = take_number(s);
    if (!lost || !take_prefix(s, "/")) bad(line, "expected lost/total datagrams after the jitter");
    const auto total = take_number(s);
    if (!total) bad(line, "expected the total datagrams after '/'");
    if (*lost < 0 || *total < 0 || *total > 9e15 || *lost > 9e15)
        bad(line, "datagram counts out of range");
    r.lost = static_cast<int64_t>(*lost);
    r.total = static_cast<int64_t>(*total);
    if (take_prefix(s, "(")) {
        const auto pct = take_number(s);
        if (pct && take_prefix(s, "%)")) r.printed_loss_pct = *pct;
    }
    const size_t end = counts.find(')');
    r.loss_text =
        std::string(counts.substr(0, end == std::string_view::npos ? counts.size() : end + 1));
}

std::optional<Iperf2Report> parse_report(std::string_view s, int line) {
    auto id = take_id(s);
    if (!id) return std::nullopt;
    // Role tags of 2.1's full-duplex output ("[  1][TX-C]"): keep the id, skip the tag.
    if (s.starts_with("[")) {
        const size_t close = s.find(']');
        if (close != std::string_view::npos) s.remove_prefix(close + 1);
    }
    std::string_view probe = s;
    const auto start = take_number(probe);
    if (!start || !take_prefix(probe, "-")) return std::nullopt;  // "Sent …", "local …"
    const auto end = take_number(probe);
    if (!end || !take_prefix(probe, "sec")) bad(line, "expected 'A-B sec' after the id");
    {
        std::string_view ooo =
            probe;  // "[  3] 0.0000-10.0256 sec  2 datagrams received out-of-order"
        if (take_number(ooo) && take_prefix(ooo, "datagrams")) return std::nullopt;
    }
    Iperf2Report r;
    r.line = line;
    r.id = *id;
    r.start_s = *start;
    r.end_s = *end;
    if (r.end_s < r.start_s) bad(line, "the interval ends before it starts");
    const auto bytes = take_quantity(probe, false);
    if (!bytes) bad(line, "expected a transfer like '11.0 GBytes'");
    const auto rate = take_quantity(probe, true);
    if (!rate) bad(line, "expected a rate like '9.42 Gbits/sec'");
    r.bytes = bytes->value;
    r.bytes_resolution = bytes->resolution;
    r.bps = rate->value;
    r.bps_resolution = rate->resolution;
    parse_udp_tail(r, probe, line);
    return r;
}

// "208 KByte (default)" → bytes; the text is kept verbatim for the reader.
std::optional<int64_t> buffer_size(std::string_view s) {
    std::string_view p = s;
    const auto v = take_number(p);
    if (!v) return std::nullopt;
    const auto unit = bytes_unit(take_word(p));
    if (!unit || *v < 0 || *v * *unit > 9e15) return std::nullopt;  // no such buffer
    return static_cast<int64_t>(*v * *unit);
}

}  // namespace

OfferedRate offered_rate_from_ipg(int datagram_bytes, double ipg_us) {
    // Printed with %4.2f: the true IPG lies within ±0.005 us.
    const double lo = datagram_bytes * 8.0 / ((ipg_us + 0.005) * 1e-6);
    const double hi = ipg_us > 0.005 ? datagram_bytes * 8.0 / ((ipg_us - 0.005) * 1e-6) : lo * 1e3;
    const double mid = datagram_bytes * 8.0 / (ipg_us * 1e-6);
    struct Unit {
        double scale;
        const char* suffix;
    };
    static const Unit units[] = {{1e9, "g"},          {1e6, "m"},       {1e3, "k"},
                                 {1073741824.0, "G"}, {1048576.0, "M"}, {1024.0, "K"}};
    for (int digits = 1; digits <= 4; ++digits) {
        for (const auto& u : units) {
            const double v = mid / u.scale;
            if (v < 1 || v >= 1000) continue;
            const double magnitude = std::pow(10.0, std::floor(std::log10(v)) - digits + 1);
            const double rounded = std::round(v / magnitude) * magnitude;
            const double candidate = rounded * u.scale;
            if (candidate >= lo && candidate <= hi)
                return {candidate, fmt::format("{:g}{}", rounded, u.suffix)};
        }
    }
    return {mid, ""};
}

Iperf2Run parse_iperf2(std::string_view input) {
    text::require_text(input, "iperf2", "iperf2 output", kMaxIperf2TextBytes);
    Iperf2Run run;
    bool saw_header = false;
    bool in_server_report = false;
    for (const auto& l : text::split_lines(input)) {
        std::string_view t = l.text;
        if (t.starts_with("Client connecting to ")) {
            saw_header = true;
            run.role = Iperf2Run::Role::client;
            std::string_view rest = t.substr(21);
            run.peer = std::string(rest.substr(0, rest.find(',')));
            run.transport =
                t.find("UDP port") != std::string_view::npos ? Transport::udp : Transport::tcp;
            if (t.find("(reverse)") != std::string_view::npos) run.reverse = true;
            continue;
        }
        if (t.starts_with("Server listening on ")) {
            saw_header = true;
            run.role = Iperf2Run::Role::server;
            run.transport =
                t.find("UDP port") != std::string_view::npos ? Transport::udp : Transport::tcp;
            continue;
        }
        if (t.starts_with("Sending ") && t.find("byte datagrams") != std::string_view::npos) {
            std::string_view s = t.substr(8);
            if (auto n = take_number(s); n && *n > 0 && *n < 65536)
                run.datagram_bytes = static_cast<int>(*n);
            if (const size_t ipg = t.find("IPG target:"); ipg != std::string_view::npos) {
                std::string_view r = t.substr(ipg + 11);
                const auto us = take_number(r);
                if (us && *us > 0 && take_prefix(r, "us")) run.ipg_target_us = *us;
            }
            continue;
        }
        if (t.starts_with("Receiving ") && t.find("byte datagrams") != std::string_view::npos) {
            std::string_view s = t.substr(10);
            if (auto n = take_number(s); n && *n > 0 && *n < 65536)
                run.datagram_bytes = static_cast<int>(*n);
            continue;
        }
        if (t.starts_with("TCP window size:") || t.starts_with("UDP buffer size:")) {
            std::string_view s = text::trim(t.substr(16));
            run.buffer_text = std::string(s);
            run.buffer_bytes = buffer_size(s);
            continue;
        }
        if (t.find("did not receive ack of last datagram") != std::string_view::npos) {
            run.ack_missing = true;
            continue;
        }
        std::string_view s = t;
        std::string_view probe = s;
        if (const auto id = take_id(probe)) {
            if (take_prefix(probe, "Server Report:")) {
                in_server_report = true;
                continue;
            }
            std::string_view sent = probe;
            if (take_prefix(sent, "Sent ")) {
                const auto n = take_number(sent);
                if (!n || *n < 0 || *n > 9e15 || !take_prefix(sent, "datagrams"))
                    bad(l.number, "expected 'Sent N datagrams'");
                run.datagrams_sent.emplace_back(*id, static_cast<int64_t>(*n));
                continue;
            }
        }
        if (auto r = parse_report(s, l.number)) {
            r->server_report = in_server_report;
            in_server_report = false;
            run.reports.push_back(std::move(*r));
        }
    }
    if (!saw_header && run.reports.empty())
        bad(1,
            "no 'Client connecting to' / 'Server listening on' header and no report lines: "
            "not iperf2 output");
    if (run.reports.empty())
        bad(static_cast<int>(text::split_lines(input).size()),
            "no bandwidth report line (the run did not finish, or the output is truncated)");
    return run;
}

namespace {

// The final report of each id: the line covering the longest interval from the start (interval
// lines of -i come first and cover less).
std::map<std::string, const Iperf2Report*> finals(const Iperf2Run& run, bool server_report) {
    std::map<std::string, const Iperf2Report*> out;
    for (const auto& r : run.reports) {
        if (r.server_report != server_report || r.start_s > 0.5) continue;
        auto& slot = out[r.id];
        if (!slot || r.end_s - r.start_s >= slot->end_s - slot->start_s) slot = &r;
    }
    return out;
}

struct Totals {
    bool any = false;
    double bytes = 0, bytes_res = 0, bps = 0, bps_res = 0, seconds = 0;
    int streams = 0;
    std::optional<int64_t> lost, total;
    std::optional<double> printed_pct, jitter_ms;
    std::string loss_text;
};

Totals totals(const std::map<std::string, const Iperf2Report*>& f) {
    Totals t;
    const Iperf2Report* sum = nullptr;
    for (const auto& [id, r] : f)
        if (id == "SUM" || id.starts_with("SUM-")) sum = r;
    auto add_udp = [&](const Iperf2Report& r) {
        if (r.lost) t.lost = t.lost.value_or(0) + *r.lost;
        if (r.total) t.total = t.total.value_or(0) + *r.total;
        if (r.jitter_ms) t.jitter_ms = std::max(t.jitter_ms.value_or(0), *r.jitter_ms);
    };
    for (const auto& [id, r] : f) {
        if (id == "SUM" || id.starts_with("SUM-")) continue;
        ++t.streams;
        t.any = true;
        if (!sum) {
            t.bytes += r->bytes;
            t.bytes_res += r->bytes_resolution;
            t.bps += r->bps;
            t.bps_res += r->bps_resolution;
            t.seconds = std::max(t.seconds, r->end_s - r->start_s);
        }
        add_udp(*r);
        if (f.size() == 1) {
            t.printed_pct = r->printed_loss_pct;
            t.loss_text = r->loss_text;
        }
    }
    if (sum) {
        t.any = true;
        t.bytes = sum->bytes;
        t.bytes_res = sum->bytes_resolution;
        t.bps = sum->bps;
        t.bps_res = sum->bps_resolution;
        t.seconds = sum->end_s - sum->start_s;
        if (sum->lost) {
            t.lost = sum->lost;
            t.total = sum->total;
            t.printed_pct = sum->printed_loss_pct;
            t.loss_text = sum->loss_text;
        }
    }
    return t;
}

}  // namespace

Measurements measurements_from(const Iperf2Run& run, const std::string& source) {
    Measurements m;
    ThroughputTest t;
    t.source = source;
    t.tool = Tool::iperf2;
    t.transport = run.transport;
    t.reverse = run.reverse;
    const bool udp = run.transport == Transport::udp;
    const auto local = totals(finals(run, false));
    const auto relayed = totals(finals(run, true));
    t.streams = std::max(1, local.any ? local.streams : relayed.streams);
    t.duration_s = local.any ? local.seconds : relayed.seconds;
    // This side's own line is the sender's figure on a client (unless -R) and the receiver's
    // on a server; a relayed Server Report is the receiver's.
    const bool local_is_sender = (run.role == Iperf2Run::Role::client) != run.reverse;
    if (local.any) {
        if (local_is_sender) {
            t.sent_bps = local.bps;
            t.sent_bytes = local.bytes;
            t.bytes_resolution = local.bytes_res;
        } else {
            t.received_bps = local.bps;
            t.received_bytes = local.bytes;
            t.bytes_resolution = local.bytes_res;
        }
        t.rate_resolution_bps = local.bps_res;
    }
    const Totals& rx = relayed.any ? relayed : (local_is_sender ? Totals{} : local);
    if (relayed.any) {
        t.received_bps = relayed.bps;
        t.received_bytes = relayed.bytes;
        t.bytes_resolution = relayed.bytes_res;
        t.rate_resolution_bps = std::max(t.rate_resolution_bps, relayed.bps_res);
    }
    if (udp) {
        t.datagrams_lost = rx.lost;
        t.datagrams_total = rx.total;
        t.printed_loss_pct = rx.printed_pct;
        t.printed_loss_text = rx.loss_text;
        t.jitter_ms = rx.jitter_ms;
        int64_t sent = 0;
        for (const auto& [id, n] : run.datagrams_sent)
            if (!(id == "SUM" || id.starts_with("SUM-"))) sent += n;
        if (!run.datagrams_sent.empty()) t.datagrams_sent = sent;
        t.payload_bytes = run.datagram_bytes;
        if (run.datagram_bytes && run.ipg_target_us) {
            // The IPG target is per sending thread.
            const auto offered = offered_rate_from_ipg(*run.datagram_bytes, *run.ipg_target_us);
            t.offered_bps = offered.bps * t.streams;
            t.offered_from = fmt::format("the IPG target {:.2f} us", *run.ipg_target_us);
            if (!offered.typed.empty()) {
                const bool binary = std::isupper(static_cast<unsigned char>(offered.typed.back()));
                t.offered_from += fmt::format(
                    ", i.e. -b {}{}", offered.typed,
                    binary ? ", which iperf2 reads in binary units (an uppercase suffix)" : "");
            }
        }
    }
    t.socket_buffer_bytes = run.buffer_bytes;
    t.socket_buffer_text = run.buffer_text;
    t.socket_buffer_side = run.role == Iperf2Run::Role::client ? "client" : "server";
    t.label = fmt::format("iperf2 {}{}{}{}", udp ? "UDP" : "TCP", run.reverse ? " -R" : "",
                          t.streams > 1 ? fmt::format(" -P {}", t.streams) : "",
                          run.role == Iperf2Run::Role::server ? " (server side)" : "");
    m.throughput.push_back(std::move(t));
    return m;
}

}  // namespace np
