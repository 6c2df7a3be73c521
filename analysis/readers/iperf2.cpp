#include "analysis/readers/iperf2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "analysis/readers/text.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

using text::take_number;
using text::take_prefix;
using text::take_word;

[[noreturn]] void bad_iperf2(int64_t line, const std::string& what) {
    throw InputError("iperf2", what, line);
}

struct Report {
    double start_s = 0, end_s = 0;
    double bytes = 0;
    double bytes_resolution = 0;  // half a unit of the last printed digit
    double bps = 0;
    double bps_resolution = 0;
    std::optional<double> jitter_ms;
    std::optional<int64_t> lost;
    std::optional<int64_t> total;
    std::optional<double> printed_loss_pct;
    std::string loss_text;  // "342498/7134255 (0%)"
};

bool is_sum(std::string_view id) {
    return id == "SUM" || id.starts_with("SUM-");
}

// "[  3]" / "[SUM]" / "[SUM-4]" / "[  1][TX-C]"… at the start of a line: the id inside.
std::optional<std::string> take_id(std::string_view& s) {
    if (!s.starts_with("[")) return std::nullopt;
    const size_t close = s.find(']');
    if (close == std::string_view::npos || close > 16) return std::nullopt;
    std::string id(text::trim(s.substr(1, close - 1)));
    s.remove_prefix(close + 1);
    if (id.empty() || id == "ID") return std::nullopt;
    return id;
}

// "A-B sec" with iperf2's 1 or 4 decimals (iperf3 prints 2).
bool iperf2_interval(std::string_view s) {
    std::string_view p = text::trim(s);
    const std::string_view a = p.substr(0, p.find('-'));
    if (a.size() == p.size() || a.find('.') == std::string_view::npos) return false;
    const size_t decimals = a.size() - a.find('.') - 1;
    return (decimals == 1 || decimals == 4) && take_number(p) && take_prefix(p, "-") &&
           take_number(p) && take_prefix(p, "sec");
}

// The rest of a UDP report after the rate: "  0.005 ms 342498/7134255 (0%)…".
void parse_udp_tail(Report& r, std::string_view rest, int64_t line) {
    std::string_view s = rest;
    const auto jitter = take_number(s);
    if (!jitter || !take_prefix(s, "ms")) return;  // a TCP -e tail or a sender's UDP line
    if (*jitter < 0) bad_iperf2(line, "a negative jitter");
    r.jitter_ms = *jitter;
    std::string_view counts = text::trim(s);
    const auto lost = take_number(s);
    if (!lost || !take_prefix(s, "/"))
        bad_iperf2(line, "expected lost/total datagrams after the jitter");
    const auto total = take_number(s);
    if (!total) bad_iperf2(line, "expected the total datagrams after '/'");
    // A negative count or more lost than the total is what a broken counter prints: read as
    // printed, explained by rules_counters.cpp.
    if (std::fabs(*total) > 9e15 || std::fabs(*lost) > 9e15)
        bad_iperf2(line, "datagram counts out of range");
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

// A report line, with its id; nothing when the line is not one ("Sent …", "local …").
std::optional<std::pair<std::string, Report>> parse_report(std::string_view s, int64_t line) {
    auto id = take_id(s);
    if (!id) return std::nullopt;
    // Role tags of 2.1's full-duplex output ("[  1][TX-C]"): keep the id, skip the tag.
    if (s.starts_with("[")) {
        const size_t close = s.find(']');
        if (close != std::string_view::npos) s.remove_prefix(close + 1);
    }
    std::string_view probe = s;
    const auto start = take_number(probe);
    if (!start || !take_prefix(probe, "-")) return std::nullopt;
    const auto end = take_number(probe);
    if (!end || !take_prefix(probe, "sec")) bad_iperf2(line, "expected 'A-B sec' after the id");
    {
        // "[  3] 0.0000-10.0256 sec  2 datagrams received out-of-order"
        std::string_view ooo = probe;
        if (take_number(ooo) && take_prefix(ooo, "datagrams")) return std::nullopt;
    }
    Report r;
    r.start_s = *start;
    r.end_s = *end;
    if (r.start_s < 0 || r.end_s < r.start_s)
        bad_iperf2(line, "the interval ends before it starts");
    const auto bytes = text::take_quantity(probe, false);
    if (!bytes) bad_iperf2(line, "expected a transfer like '11.0 GBytes'");
    const auto rate = text::take_quantity(probe, true);
    if (!rate) bad_iperf2(line, "expected a rate like '9.42 Gbits/sec'");
    r.bytes = bytes->value;
    r.bytes_resolution = bytes->resolution;
    r.bps = rate->value;
    r.bps_resolution = rate->resolution;
    parse_udp_tail(r, probe, line);
    return std::pair{std::move(*id), std::move(r)};
}

// "208 KByte (default)" → bytes; the text is kept verbatim for the reader.
std::optional<int64_t> buffer_size(std::string_view s) {
    std::string_view p = s;
    const auto v = take_number(p);
    if (!v) return std::nullopt;
    std::string_view unit = take_word(p);
    double scale = 0;
    if (unit == "Byte" || unit == "Bytes") scale = 1;
    if (unit == "KByte" || unit == "KBytes") scale = 1024;
    if (unit == "MByte" || unit == "MBytes") scale = 1024.0 * 1024;
    if (scale == 0 || *v < 0 || *v * scale > 9e15) return std::nullopt;  // no such buffer
    return static_cast<int64_t>(*v * scale);
}

// "…, UDP port 5001 with pid 12 (1 flows)" → 5001.
std::optional<int> port_after(std::string_view s) {
    const size_t at = s.find("port ");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view p = s.substr(at + 5);
    const auto v = take_number(p);
    if (!v || *v < 1 || *v > 65535 || *v != std::floor(*v)) return std::nullopt;
    return static_cast<int>(*v);
}

// What iperf2 printed for one run, folded as it is read: per stream id only the final report
// (the one covering the longest interval from the start; -i interval lines cover less).
struct Run {
    bool client = true;
    bool banner = false;  // this run read the header block (a server's banner is read once)
    Transport transport = Transport::tcp;
    bool reverse = false;
    std::string peer;  // "Client connecting to <peer>"
    std::optional<int> port;
    std::optional<int> datagram_bytes;
    std::optional<double> ipg_target_us;
    std::optional<int64_t> buffer_bytes;          // TCP window size / UDP buffer size
    std::string buffer_text;                      // "208 KByte (default)"
    std::map<std::string, Report> finals;         // this side's own reports, per id
    std::map<std::string, Report> server_finals;  // relayed "Server Report:"s, per id
    std::map<std::string, int64_t> datagrams_sent;
    std::set<std::string> connected;  // ids of "[ id] local … connected with …"
    std::string failure;              // "connect failed: Connection refused"
    // "[  1] WARNING: did not receive ack of last datagram after 10 tries.": the server's
    // report never came back, so the receiver's counts are unknown.
    bool no_server_report = false;
};

struct Totals {
    bool any = false;
    double bytes = 0, bytes_res = 0, bps = 0, bps_res = 0, seconds = 0;
    int streams = 0;
    std::optional<int64_t> lost, total;
    std::optional<double> printed_pct, jitter_ms;
    std::string loss_text;
};

Totals totals(const std::map<std::string, Report>& f) {
    Totals t;
    const Report* sum = nullptr;
    for (const auto& [id, r] : f)
        if (is_sum(id)) sum = &r;
    for (const auto& [id, r] : f) {
        if (is_sum(id)) continue;
        ++t.streams;
        t.any = true;
        if (!sum) {
            t.bytes += r.bytes;
            t.bytes_res += r.bytes_resolution;
            t.bps += r.bps;
            t.bps_res += r.bps_resolution;
            t.seconds = std::max(t.seconds, r.end_s - r.start_s);
        }
        if (r.lost) t.lost = t.lost.value_or(0) + *r.lost;
        if (r.total) t.total = t.total.value_or(0) + *r.total;
        if (r.jitter_ms) t.jitter_ms = std::max(t.jitter_ms.value_or(0), *r.jitter_ms);
        if (f.size() == 1) {
            t.printed_pct = r.printed_loss_pct;
            t.loss_text = r.loss_text;
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

// The load a UDP run's IPG target offered, over all its sending threads (t.streams), and how
// the explanation names it.
void set_offered_from_ipg(ThroughputTest& t, int datagram_bytes, double ipg_target_us) {
    // The IPG target is per sending thread.
    const auto offered = offered_rate_from_ipg(datagram_bytes, ipg_target_us);
    t.offered_bps = offered.bps * t.streams;
    t.offered_from = fmt::format("the IPG target {:.2f} us", ipg_target_us);
    if (!offered.typed.empty()) {
        const bool binary = std::isupper(static_cast<unsigned char>(offered.typed.back()));
        t.offered_from +=
            fmt::format(", i.e. -b {}{}", offered.typed,
                        binary ? ", which iperf2 reads in binary units (an uppercase suffix)" : "");
    }
}

// A UDP run's figures: the receiver's counts (rx, relayed when a Server Report came back) and
// what the sender sent and offered.
void set_udp_figures(ThroughputTest& t, const Run& run, const Totals& rx, bool relayed) {
    set_receiver_loss_counts(t, rx.lost, rx.total, rx.printed_pct, rx.loss_text);
    t.jitter_ms = rx.jitter_ms;
    t.receiver_report_missing = run.no_server_report && !relayed;
    int64_t sent = 0;
    for (const auto& [id, n] : run.datagrams_sent)
        if (!is_sum(id)) sent += n;
    if (!run.datagrams_sent.empty()) t.datagrams_sent = sent;
    t.payload_bytes = run.datagram_bytes;
    if (run.datagram_bytes && run.ipg_target_us)
        set_offered_from_ipg(t, *run.datagram_bytes, *run.ipg_target_us);
}

ThroughputTest test_of(const Run& run, const std::string& source) {
    ThroughputTest t;
    t.source = source;
    t.tool = Tool::iperf2;
    t.transport = run.transport;
    t.reverse = run.reverse;
    t.from_server = !run.client;
    t.server_host = run.client ? run.peer : std::string();
    t.port = run.port;
    const bool udp = run.transport == Transport::udp;
    const auto local = totals(run.finals);
    const auto relayed = totals(run.server_finals);
    t.streams = std::max(1, local.any ? local.streams : relayed.streams);
    t.duration_s = local.any ? local.seconds : relayed.seconds;
    // This side's own line is the sender's figure on a client (unless -R) and the receiver's
    // on a server; a relayed Server Report is the receiver's.
    const bool local_is_sender = run.client != run.reverse;
    if (local.any) {
        if (local_is_sender) {
            t.sent_bps = local.bps;
            t.sent_bytes = local.bytes;
        } else {
            t.received_bps = local.bps;
            t.received_bytes = local.bytes;
        }
        t.bytes_resolution = local.bytes_res;
        t.rate_resolution_bps = local.bps_res;
    }
    const Totals& rx = relayed.any ? relayed : (local_is_sender ? Totals{} : local);
    if (relayed.any) {
        t.received_bps = relayed.bps;
        t.received_bytes = relayed.bytes;
        t.bytes_resolution = relayed.bytes_res;
        t.rate_resolution_bps = std::max(t.rate_resolution_bps, relayed.bps_res);
    }
    if (udp) set_udp_figures(t, run, rx, relayed.any);
    t.socket_buffer_bytes = run.buffer_bytes;
    t.socket_buffer_text = run.buffer_text;
    t.socket_buffer_side = run.client ? "client" : "server";
    t.label = fmt::format("iperf2 {}{}{}{}", udp ? "UDP" : "TCP", run.reverse ? " -R" : "",
                          t.streams > 1 ? fmt::format(" -P {}", t.streams) : "",
                          run.client ? "" : " (server side)");
    return t;
}

class Iperf2Reader : public RunReader {
  public:
    void line(std::string_view t, int64_t number) override {
        last_line_ = number;
        if (t.starts_with("[")) {
            id_line(t, number);
        } else {
            header_line(t);
        }
    }

  private:
    void header_line(std::string_view t) {
        if (t.starts_with("Client connecting to ")) {
            read_any_ = run_.banner = true;
            run_.client = true;
            const std::string_view rest = t.substr(21);
            run_.peer = std::string(rest.substr(0, rest.find(',')));
            run_.port = port_after(rest);
            run_.transport =
                t.find("UDP port") != std::string_view::npos ? Transport::udp : Transport::tcp;
            if (t.find("(reverse)") != std::string_view::npos) run_.reverse = true;
            return;
        }
        if (t.starts_with("Server listening on ")) {
            read_any_ = run_.banner = true;
            run_.client = false;
            run_.port = port_after(t);
            run_.transport =
                t.find("UDP port") != std::string_view::npos ? Transport::udp : Transport::tcp;
            return;
        }
        if ((t.starts_with("Sending ") || t.starts_with("Receiving ")) &&
            t.find("byte datagrams") != std::string_view::npos) {
            std::string_view s = t.substr(t.find(' ') + 1);
            if (auto n = take_number(s); n && *n > 0 && *n < 65536)
                run_.datagram_bytes = static_cast<int>(*n);
            if (const size_t ipg = t.find("IPG target:"); ipg != std::string_view::npos) {
                std::string_view r = t.substr(ipg + 11);
                const auto us = take_number(r);
                if (us && *us > 0 && take_prefix(r, "us")) run_.ipg_target_us = *us;
            }
            read_any_ = true;
            return;
        }
        if (t.starts_with("TCP window size:") || t.starts_with("UDP buffer size:")) {
            std::string_view s = text::trim(t.substr(16));
            run_.buffer_text = std::string(s.substr(0, 200));
            run_.buffer_bytes = buffer_size(s);
            read_any_ = true;
            return;
        }
        if (t.starts_with("connect failed:") || t.starts_with("write failed:") ||
            t.starts_with("ERROR:")) {
            if (run_.failure.empty()) run_.failure = std::string(t.substr(0, 500));
            read_any_ = true;
        }
    }

    // "[ id] …": a report, "Sent N datagrams", "Server Report:" or a connection.
    void id_line(std::string_view t, int64_t number) {
        std::string_view probe = t;
        const auto id = take_id(probe);
        if (!id) return;
        if (take_prefix(probe, "Server Report:")) {
            in_server_report_ = true;
            return;
        }
        // Locale.c's warn_no_ack: the server's report never came back.
        if (take_prefix(probe, "WARNING: did not receive ack of last datagram")) {
            run_.no_server_report = true;
            return;
        }
        {
            std::string_view sent = probe;
            if (take_prefix(sent, "Sent ")) {
                const auto n = take_number(sent);
                if (!n || *n < 0 || *n > 9e15 || !take_prefix(sent, "datagrams"))
                    bad_iperf2(number, "expected 'Sent N datagrams'");
                new_id(*id, number);
                run_.datagrams_sent[*id] = static_cast<int64_t>(*n);
                return;
            }
            std::string_view local = probe;
            if (take_prefix(local, "local ") &&
                t.find(" connected with ") != std::string_view::npos) {
                new_id(*id, number);
                run_.connected.insert(*id);
                read_any_ = true;
                return;
            }
        }
        auto report = parse_report(t, number);
        if (!report) return;
        auto& [rid, r] = *report;
        new_id(rid, number);
        saw_report_ = read_any_ = true;
        auto& finals = in_server_report_ ? run_.server_finals : run_.finals;
        in_server_report_ = false;
        if (r.start_s > 0.5) return;  // an interval line of -i: not the run's figure
        auto it = finals.find(rid);
        if (it == finals.end()) {
            finals.emplace(std::move(rid), std::move(r));
        } else if (r.end_s - r.start_s >= it->second.end_s - it->second.start_s) {
            it->second = std::move(r);
        }
    }

  public:
    bool next_run_starts(std::string_view t) const override {
        if (!read_any_) return false;
        if (iperf2_header(t)) return true;
        // A new connection once this run has reported: a server's next test, or a second
        // client output pasted without its header.
        std::string_view probe = t;
        const auto id = take_id(probe);
        return id && saw_report_ && take_prefix(probe, "local ") &&
               t.find(" connected with ") != std::string_view::npos && !run_.connected.count(*id);
    }

    std::unique_ptr<RunReader> next_run() const override {
        auto next = std::make_unique<Iperf2Reader>();
        if (!run_.client) {
            // The same server goes on: what its banner said holds for its next test.
            next->run_.client = false;
            next->run_.transport = run_.transport;
            next->run_.port = run_.port;
            next->run_.datagram_bytes = run_.datagram_bytes;
            next->run_.buffer_bytes = run_.buffer_bytes;
            next->run_.buffer_text = run_.buffer_text;
        }
        return next;
    }

    bool empty() const override { return !read_any_; }
    int64_t last_line() const override { return last_line_; }

    std::optional<std::string> finish(const RunInfo& info, Measurements& out) override {
        if (!run_.client && run_.banner) {
            ServerBanner b;
            b.source = info.source;
            b.tool = Tool::iperf2;
            b.transport = run_.transport;
            b.port = run_.port;
            b.buffer_bytes = run_.buffer_bytes;
            b.buffer_text = run_.buffer_text;
            b.datagram_bytes = run_.datagram_bytes;
            if (info.command) b.command = info.command->text;
            out.servers.push_back(std::move(b));
        }
        if (!run_.finals.empty() || !run_.server_finals.empty()) {
            out.throughput.push_back(test_of(run_, info.source));
            return std::nullopt;
        }
        if (!run_.failure.empty()) {
            out.failures.push_back({info.source, Tool::iperf2, run_.failure, run_.transport});
            return std::nullopt;
        }
        if (!run_.client && run_.connected.empty()) return std::nullopt;  // a banner, and no test
        return std::string(
            "iperf2 printed no bandwidth report line (the run did not finish, or the output is "
            "truncated)");
    }

  private:
    void new_id(const std::string& id, int64_t number) {
        if (run_.connected.count(id) || run_.finals.count(id) || run_.server_finals.count(id) ||
            run_.datagrams_sent.count(id))
            return;
        if (++ids_ > kMaxIperf2Streams)
            bad_iperf2(number,
                       fmt::format("more than {} stream ids in one run: not one iperf2 test",
                                   kMaxIperf2Streams));
    }

    Run run_;
    bool read_any_ = false;
    bool saw_report_ = false;
    bool in_server_report_ = false;
    size_t ids_ = 0;
    int64_t last_line_ = 0;
};

}  // namespace

bool iperf2_header(std::string_view line) {
    if (line.starts_with("Client connecting to "))
        return line.find(", TCP port") != std::string_view::npos ||
               line.find(", UDP port") != std::string_view::npos;
    if (line.starts_with("Server listening on "))
        return line.starts_with("Server listening on TCP port") ||
               line.starts_with("Server listening on UDP port");
    return false;
}

bool iperf2_report(std::string_view line) {
    std::string_view s = line;
    if (!take_id(s)) return false;
    if (s.starts_with("[")) s.remove_prefix(std::min(s.size(), s.find(']') + 1));
    return iperf2_interval(s);
}

std::unique_ptr<RunReader> make_iperf2_reader() {
    return std::make_unique<Iperf2Reader>();
}

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

}  // namespace np
