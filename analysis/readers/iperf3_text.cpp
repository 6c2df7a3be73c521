#include "analysis/readers/iperf3_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "analysis/readers/iperf3.hpp"
#include "analysis/readers/series.hpp"
#include "analysis/readers/text.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

using text::take_number;
using text::take_prefix;
using text::take_word;

[[noreturn]] void bad_iperf3_text(int64_t line, const std::string& what) {
    throw InputError("iperf3", what, line);
}

// One report line: "[  5][TX-C]   0.00-10.00  sec   113 MBytes  94.9 Mbits/sec    0  sender".
struct Line {
    std::string id;    // "5", "SUM"
    std::string role;  // "", "TX-C", "RX-C", "TX-S", "RX-S" (--bidir)
    double start_s = 0, end_s = 0;
    text::Quantity bytes, rate;
    std::optional<int64_t> retransmits;
    std::optional<double> jitter_ms;
    std::optional<int64_t> lost, total;
    std::optional<double> printed_pct;
    std::string loss_text;
    std::optional<int64_t> datagrams;  // a UDP sender's interval "Total Datagrams"
    std::string side;                  // "sender" / "receiver" on a summary line
    bool omitted = false;
};

std::optional<std::string> take_bracket(std::string_view& s) {
    if (!s.starts_with("[")) return std::nullopt;
    const size_t close = s.find(']');
    if (close == std::string_view::npos || close > 16) return std::nullopt;
    std::string inside(text::trim(s.substr(1, close - 1)));
    s.remove_prefix(close + 1);
    return inside;
}

bool has_two_decimals(std::string_view s) {
    s = text::trim(s);
    const size_t dash = s.find('-');
    const size_t dot = s.find('.');
    return dash != std::string_view::npos && dot != std::string_view::npos && dash - dot == 3;
}

std::optional<int64_t> count(std::string_view word) {
    std::string_view w = word;
    const auto v = take_number(w);
    if (!v || !w.empty() || *v < 0 || *v > 9e15 || *v != std::floor(*v)) return std::nullopt;
    return static_cast<int64_t>(*v);
}

// What ends a report line: "(omitted)" for an omitted interval, "sender" or "receiver" on a
// summary. Gives the figures before the side.
std::string_view take_side(Line& l, std::string_view rest) {
    if (rest.ends_with("(omitted)")) l.omitted = true;
    if (rest.ends_with("sender") || rest.ends_with("receiver")) {
        l.side = rest.ends_with("sender") ? "sender" : "receiver";
        rest = text::trim(rest.substr(0, rest.size() - l.side.size()));
    }
    return rest;
}

// A UDP line's datagrams after its jitter, "0/82400 (0%)": lost and total, the share iperf3
// printed and the text as printed.
void read_udp_loss(Line& l, std::string_view u, int64_t number) {
    std::string_view counts = text::trim(u);
    const auto lost = take_number(u);
    if (!lost || !take_prefix(u, "/"))
        bad_iperf3_text(number, "expected lost/total datagrams after the jitter");
    const auto total = take_number(u);
    if (!total) bad_iperf3_text(number, "expected the total datagrams after '/'");
    // Negative, or more lost than the total: a broken counter's print, read as printed and
    // explained by rules_counters.cpp.
    if (std::fabs(*lost) > 9e15 || std::fabs(*total) > 9e15)
        bad_iperf3_text(number, "datagram counts out of range");
    l.lost = static_cast<int64_t>(*lost);
    l.total = static_cast<int64_t>(*total);
    if (take_prefix(u, "(")) {
        const auto pct = take_number(u);
        if (pct && take_prefix(u, "%)")) l.printed_pct = *pct;
    }
    const size_t close = counts.find(')');
    l.loss_text =
        std::string(counts.substr(0, close == std::string_view::npos ? counts.size() : close + 1));
}

// A bare count after the bitrate is the sender's datagrams (UDP) or the retransmits (TCP, before
// a Cwnd or on the sender's summary): the header row says which, so both are kept.
void read_bare_count(Line& l, std::string_view rest) {
    const std::string_view word = take_word(rest);
    const auto n = count(word);
    if (!n) return;
    if (text::trim(rest).empty() && l.side.empty()) {
        l.datagrams = *n;
    } else {
        l.retransmits = *n;
    }
}

std::optional<Line> parse_line(std::string_view s, int64_t number) {
    auto id = take_bracket(s);
    if (!id || id->empty() || *id == "ID") return std::nullopt;
    Line l;
    l.id = *id;
    if (s.starts_with("[")) l.role = take_bracket(s).value_or("");
    std::string_view probe = s;
    const auto start = take_number(probe);
    if (!start || !take_prefix(probe, "-")) return std::nullopt;  // "local … connected to …"
    const auto end = take_number(probe);
    if (!end || !take_prefix(probe, "sec"))
        bad_iperf3_text(number, "expected 'A-B sec' after the id");
    if (*start < 0 || *end < *start) bad_iperf3_text(number, "the interval ends before it starts");
    {
        std::string_view ooo = probe;  // "[  5] 0.0-10.0 sec  3 datagrams received out-of-order"
        if (take_number(ooo) && take_prefix(ooo, "datagrams")) return std::nullopt;
    }
    l.start_s = *start;
    l.end_s = *end;
    const auto bytes = text::take_quantity(probe, false);
    if (!bytes) bad_iperf3_text(number, "expected a transfer like '112 MBytes'");
    const auto rate = text::take_quantity(probe, true);
    if (!rate) bad_iperf3_text(number, "expected a bitrate like '94.1 Mbits/sec'");
    l.bytes = *bytes;
    l.rate = *rate;
    const std::string_view rest = take_side(l, text::trim(probe));
    // UDP: "0.093 ms  0/82400 (0%)"; a sender's interval: "8317"; TCP: "0   48.1 KBytes" or "0".
    std::string_view u = rest;
    const auto first = take_number(u);
    if (first && take_prefix(u, "ms")) {
        if (*first < 0) bad_iperf3_text(number, "a negative jitter");
        l.jitter_ms = *first;
        read_udp_loss(l, u, number);
    } else {
        read_bare_count(l, rest);
    }
    return l;
}

// The summary figures of one direction: [SUM] when iperf3 printed it, else its one stream's.
struct Summary {
    std::optional<Line> sum;
    std::optional<Line> stream;
    std::set<std::string> streams;
    const Line* best() const { return sum ? &*sum : stream ? &*stream : nullptr; }
};

struct DirectionReports {
    Summary sender, receiver;
};

class Iperf3TextReader : public RunReader {
  public:
    void line(std::string_view t, int64_t number) override {
        last_line_ = number;
        if (read_setup(t) || read_marker(t)) return;
        if (auto l = parse_line(t, number)) {
            read_report(std::move(*l), number);
        } else {
            read_other_stream_line(t, number);
        }
    }

    bool next_run_starts(std::string_view t) const override {
        if (!read_any_) return false;
        if (t.starts_with("Connecting to host ")) return true;
        // A server prints its banner again before each test.
        if (t.starts_with("Server listening on ")) return accepted_ || summaries_;
        return done_ && iperf3_text_header(t);
    }

    std::unique_ptr<RunReader> next_run() const override {
        auto next = std::make_unique<Iperf3TextReader>();
        if (!client_) {
            next->client_ = false;
            next->carried_ = true;
            next->port_ = port_;
        }
        return next;
    }

    bool empty() const override { return !read_any_; }
    int64_t last_line() const override { return last_line_; }

    std::optional<std::string> finish(const RunInfo& info, Measurements& out) override {
        if (banner_) {
            ServerBanner b;
            b.source = info.source;
            b.tool = Tool::iperf3;
            b.port = port_;
            if (info.command) b.command = info.command->text;
            out.servers.push_back(std::move(b));
        }
        if (summaries_) {
            emit(info, out);
            return std::nullopt;
        }
        if (!failure_.empty()) {
            out.failures.push_back(
                {info.source, Tool::iperf3, failure_, udp_ ? Transport::udp : Transport::tcp});
            return std::nullopt;
        }
        if (!client_ && !accepted_) return std::nullopt;  // a server waiting: its banner only
        return std::string(
            "iperf3's text output has no summary ('… sender' / '… receiver' lines): the run did "
            "not finish, or the output is truncated");
    }

  private:
    // The lines that say who ran the test and how, before its reports: -V's version and
    // platform, the client's connecting, the server's banner and accepting, reverse mode. Gives
    // whether the line was one.
    bool read_setup(std::string_view t) {
        // -V: "iperf 3.12" and the system's uname before the test ("Linux host 6.1.0 …").
        if (!read_any_ && iperf3_version_line(t)) {
            version_ = std::string(t.substr(0, t.find(' ', 6)));
            return true;
        }
        if (!read_any_ && !version_.empty() && platform_.empty()) {
            platform_ = platform_of(t);
            if (!platform_.empty()) return true;
        }
        if (t.starts_with("Connecting to host ")) {
            read_any_ = true;
            client_ = true;
            std::string_view rest = t.substr(19);
            host_ = std::string(rest.substr(0, std::min<size_t>(rest.find(','), 200)));
            port_ = port_after(rest);
            return true;
        }
        if (t.starts_with("Server listening on ")) {
            read_any_ = true;
            client_ = false;
            if (!carried_) banner_ = true;
            std::string_view rest = t.substr(20);
            if (const auto p = take_number(rest); p && *p >= 1 && *p <= 65535)
                port_ = static_cast<int>(*p);
            return true;
        }
        if (t.starts_with("Accepted connection from ")) {
            read_any_ = accepted_ = true;
            client_ = false;
            return true;
        }
        if (t.starts_with("Reverse mode, remote host ")) {
            reverse_ = true;
            return true;
        }
        return false;
    }

    // The lines that mark the test's course around its reports: an error, the end, -V's start
    // and CPU lines, the summary's start, --debug's late datagrams, the header row. Gives whether
    // the line was one.
    bool read_marker(std::string_view t) {
        if (t.starts_with("iperf3: error - ") || t.starts_with("iperf3: ")) {
            read_any_ = true;
            if (failure_.empty()) {
                std::string_view m = t.substr(t.starts_with("iperf3: error - ") ? 16 : 8);
                failure_ = std::string(m.substr(0, 500));
            }
            return true;
        }
        if (t == "iperf Done.") {
            done_ = true;
            return true;
        }
        if (t.starts_with("Starting Test: protocol: ")) {
            read_verbose_start(t.substr(25));
            return true;
        }
        // The summary follows: "- - - - …" and, before it, 3.0's "Test Complete. Summary
        // Results:" (and -V's since).
        if (t.starts_with("- - - -") || t == "Test Complete. Summary Results:") {
            in_summary_ = true;
            return true;
        }
        // --debug on the receiver: one line per late datagram (iperf_udp.c).
        if (t.starts_with("OUT OF ORDER - received packet ")) {
            ++out_of_order_lines_;
            return true;
        }
        if (t.starts_with("CPU Utilization: ")) {
            read_cpu(t.substr(17));
            return true;
        }
        if (t.starts_with("[ ID]")) {
            if (t.find("Jitter") != std::string_view::npos ||
                t.find("Datagrams") != std::string_view::npos)
                udp_ = true;
            if (t.find("[Role]") != std::string_view::npos) bidir_ = true;
            return true;
        }
        return false;
    }

    // A stream's line that is no report: its connection, its late datagrams, or 3.0's sent count.
    void read_other_stream_line(std::string_view t, int64_t number) {
        std::string_view probe = t;
        auto id = take_bracket(probe);
        if (id && probe.find(" connected to ") != std::string_view::npos) stream_seen(*id, number);
        // "[  4] Sent 162217 datagrams": 3.0's UDP client, under its untagged summary.
        if (id) out_of_order(*id, probe);
        if (id && in_summary_ && take_prefix(probe, "Sent ")) {
            const auto n = take_number(probe);
            if (n && *n >= 0 && *n <= 9e15 && take_prefix(probe, "datagrams"))
                sent_datagrams_[*id] = static_cast<int64_t>(*n);
        }
    }

    // A report line: an interval joins the forward direction's series, a summary its
    // direction's figures.
    void read_report(Line l, int64_t number) {
        read_any_ = true;
        if (l.jitter_ms) udp_ = true;
        if (l.role.starts_with("TX") || l.role.starts_with("RX")) bidir_ = true;
        const bool sum = l.id == "SUM";
        if (!sum) stream_seen(l.id, number);
        if (l.omitted) return;
        // iperf3 3.0 and 3.1 tag no UDP summary line (their TCP ones are tagged): the figures
        // are what the stream sent, with the receiver's jitter and lost/total beside them
        // (iperf_api.c's iperf_print_results of 3.0.11 … 3.1.7).
        // With -P, "- - -" also parts the interval blocks: only a UDP line (jitter, lost/total)
        // from 0 over at least twice the longest interval before it is such a summary.
        const double span = l.end_s - l.start_s;
        if (l.side.empty() && in_summary_ && l.jitter_ms && l.start_s == 0 &&
            longest_interval_s_ > 0 && span >= 2 * longest_interval_s_) {
            l.side = client_ ? "sender" : "receiver";
            untagged_ = true;
        }
        if (l.side.empty()) {
            longest_interval_s_ = std::max(longest_interval_s_, span);
            // An interval: the series of the forward direction, [SUM] when there is one.
            if (l.role.empty() || l.role == "TX-C" || l.role == "RX-S") {
                (sum ? sum_intervals_ : stream_intervals_).push(l.rate.value);
            }
            return;
        }
        DirectionReports& d = direction(l.role);
        Summary& s = l.side == "sender" ? d.sender : d.receiver;
        summaries_ = true;
        if (sum) {
            s.sum = std::move(l);
        } else {
            s.streams.insert(l.id);
            if (!s.stream) {
                s.stream = std::move(l);
            } else {
                add(*s.stream, l);
            }
        }
    }

    static std::optional<int> port_after(std::string_view s) {
        const size_t at = s.find("port ");
        if (at == std::string_view::npos) return std::nullopt;
        std::string_view p = s.substr(at + 5);
        const auto v = take_number(p);
        if (!v || *v < 1 || *v > 65535) return std::nullopt;
        return static_cast<int>(*v);
    }

    void stream_seen(const std::string& id, int64_t number) {
        if (stream_ids_.count(id)) return;
        if (stream_ids_.size() >= 2 * static_cast<size_t>(kMaxIperf3Streams))
            bad_iperf3_text(
                number, fmt::format("more than {} stream ids in one run: iperf3 runs at most {} "
                                    "streams (-P)",
                                    2 * kMaxIperf3Streams, kMaxIperf3Streams));
        stream_ids_.insert(id);
    }

    // "UDP, 1 streams, 1448 byte blocks, omitting 0 seconds, 10 second test, tos 0"
    void read_verbose_start(std::string_view s) {
        const std::string_view protocol = take_word(s);
        if (protocol.starts_with("UDP")) udp_ = true;
        if (take_prefix(s, ",")) {
            if (const auto n = take_number(s); n && *n >= 1 && *n <= kMaxIperf3Streams)
                verbose_streams_ = static_cast<int>(*n);
        }
        if (take_prefix(s, "streams,")) {
            if (const auto b = take_number(s);
                b && *b >= 1 && *b <= 65535 && take_prefix(s, "byte"))
                block_bytes_ = static_cast<int>(*b);
        }
    }
    // "local/sender 5.3% (0.2%u/5.1%s), remote/receiver 12.1% (1.5%u/10.6%s)"
    void read_cpu(std::string_view s) {
        for (int side = 0; side < 2; ++side) {
            const bool local = take_prefix(s, "local/");
            if (!local && !take_prefix(s, "remote/")) return;
            take_word(s);  // "sender" / "receiver" (3.x prints the role after the slash)
            const auto pct = take_number(s);
            if (!pct || *pct < 0 || !take_prefix(s, "%")) return;
            (local ? cpu_local_ : cpu_remote_) = *pct;
            const size_t comma = s.find(',');
            if (comma == std::string_view::npos) return;
            s.remove_prefix(comma + 1);
        }
    }

    DirectionReports& direction(const std::string& role) {
        // The client's TX and the server's RX are one direction; so are RX-C and TX-S.
        if (role == "RX-C" || role == "TX-S") return back_;
        return forward_;
    }

    // "  0.00-10.00 sec  3 datagrams received out-of-order" after the id: the receiver's count
    // of late datagrams, a stream's or [SUM]'s.
    void out_of_order(const std::string& id, std::string_view s) {
        if (!take_number(s) || !take_prefix(s, "-") || !take_number(s) || !take_prefix(s, "sec"))
            return;
        const auto n = take_number(s);
        if (!n || *n < 0 || *n > 9e15 || !take_prefix(s, "datagrams received out-of-order")) return;
        (id == "SUM" ? sum_out_of_order_ : stream_out_of_order_) += static_cast<int64_t>(*n);
        saw_out_of_order_ = true;
    }

    // The receiver's lost/total and jitter; counts no receiver can have counted are kept apart.
    static void receiver_counts(ThroughputTest& t, const Line& l) {
        t.jitter_ms = l.jitter_ms;
        set_receiver_loss_counts(t, l.lost, l.total, l.printed_pct, l.loss_text);
    }

    static void add(Line& into, const Line& l) {
        into.bytes.value += l.bytes.value;
        into.bytes.resolution += l.bytes.resolution;
        into.rate.value += l.rate.value;
        into.rate.resolution += l.rate.resolution;
        into.end_s = std::max(into.end_s, l.end_s);
        if (l.retransmits) into.retransmits = into.retransmits.value_or(0) + *l.retransmits;
        if (l.lost) into.lost = into.lost.value_or(0) + *l.lost;
        if (l.total) into.total = into.total.value_or(0) + *l.total;
        if (l.jitter_ms) into.jitter_ms = std::max(into.jitter_ms.value_or(0), *l.jitter_ms);
        into.printed_pct.reset();
        into.loss_text.clear();
    }

    void emit(const RunInfo& info, Measurements& out) {
        // What the output shows wins; the command says what a pasted fragment of it leaves out
        // (no header row to tell UDP, no "Reverse mode" line).
        if (const ToolCommand* c = info.command; c && client_) {
            udp_ = udp_ || c->udp;
            reverse_ = reverse_ || c->reverse;
            if (!verbose_streams_ && c->parallel) verbose_streams_ = c->parallel;
        }
        // On a server's log, the summary this side printed says which way the data went.
        const bool server_sent =
            !client_ && !bidir_ && forward_.sender.best() && !forward_.receiver.best();
        const bool reverse = client_ ? reverse_ : server_sent;
        out.throughput.push_back(test_of(info, forward_, false, reverse));
        if (bidir_ && (back_.sender.best() || back_.receiver.best()))
            out.throughput.push_back(test_of(info, back_, true, reverse));
    }

    // One direction's test: who ran it and how, then what each side's summary says.
    ThroughputTest test_of(const RunInfo& info, const DirectionReports& d, bool back,
                           bool reverse) {
        ThroughputTest t;
        t.source = info.source;
        t.tool = Tool::iperf3;
        // A UDP summary line without sender/receiver is 3.0's and 3.1's layout alone.
        t.tool_version = !version_.empty() ? version_ : untagged_ ? "iperf 3.0 or 3.1" : "";
        t.platform = platform_;
        t.transport = udp_ ? Transport::udp : Transport::tcp;
        t.from_server = !client_;
        t.server_host = client_ ? host_ : std::string();
        t.port = port_;
        t.bidir = bidir_;
        t.reverse = bidir_ ? back : reverse;
        const Line* tx = d.sender.best();
        const Line* rx = d.receiver.best();
        t.streams = static_cast<int>(
            std::max<size_t>({size_t{1}, d.sender.streams.size(), d.receiver.streams.size(),
                              static_cast<size_t>(verbose_streams_.value_or(1))}));
        if (tx) sender_figures(t, *tx);
        if (udp_ && untagged_ && tx && tx->jitter_ms && !rx) {
            // 3.0's client line: the receiver's counts beside the sender's transfer.
            receiver_counts(t, *tx);
        }
        if (udp_ && !back && !sent_datagrams_.empty()) {
            int64_t sent = 0;
            for (const auto& [id, n] : sent_datagrams_) sent += n;
            t.datagrams_sent = sent;
        }
        if (rx) receiver_figures(t, *rx);
        if (udp_ && !back && saw_out_of_order_)
            t.out_of_order = sum_out_of_order_ > 0 ? sum_out_of_order_ : stream_out_of_order_;
        else if (udp_ && !back && out_of_order_lines_ > 0)
            t.out_of_order = out_of_order_lines_;
        if (udp_ && block_bytes_) t.payload_bytes = block_bytes_;
        // cpu: local is this side of the output.
        const bool this_side_sends = client_ != t.reverse;
        t.sender_cpu_pct = this_side_sends ? cpu_local_ : cpu_remote_;
        t.receiver_cpu_pct = this_side_sends ? cpu_remote_ : cpu_local_;
        if (!back) {
            if (!sum_intervals_.empty()) {
                t.interval_bps = sum_intervals_.take();
            } else if (t.streams == 1) {
                t.interval_bps = stream_intervals_.take();
            }
        }
        t.label = fmt::format(
            "iperf3 {}{}{}{}", udp_ ? "UDP" : "TCP",
            bidir_ ? (back ? " --bidir reverse" : " --bidir") : (t.reverse ? " -R" : ""),
            t.streams > 1 ? fmt::format(" -P {}", t.streams) : "", client_ ? "" : " (server side)");
        return t;
    }

    // The sender's summary: what it sent, over how long, and its retransmits or datagrams.
    void sender_figures(ThroughputTest& t, const Line& tx) const {
        t.sent_bps = tx.rate.value;
        t.sent_bytes = tx.bytes.value;
        t.duration_s = tx.end_s - tx.start_s;
        t.rate_resolution_bps = tx.rate.resolution;
        t.bytes_resolution = tx.bytes.resolution;
        if (!udp_ && tx.retransmits) t.retransmits = tx.retransmits;
        // 3.0's untagged line holds the receiver's total instead.
        if (udp_ && tx.total && !untagged_) t.datagrams_sent = tx.total;
    }

    // The receiver's summary: what arrived and, over UDP, its counts.
    void receiver_figures(ThroughputTest& t, const Line& rx) const {
        // On 3.0's and 3.1's server that line holds the sent bytes too, never what arrived:
        // only its counts are the receiver's.
        if (!untagged_) {
            t.received_bps = rx.rate.value;
            t.received_bytes = rx.bytes.value;
        }
        if (t.duration_s == 0) t.duration_s = rx.end_s - rx.start_s;
        t.rate_resolution_bps = std::max(t.rate_resolution_bps, rx.rate.resolution);
        t.bytes_resolution = std::max(t.bytes_resolution, rx.bytes.resolution);
        if (udp_) receiver_counts(t, rx);
    }

    bool read_any_ = false;
    bool client_ = true;
    bool carried_ = false;  // the next test of a server whose banner an earlier run read
    bool banner_ = false;
    bool accepted_ = false;
    bool reverse_ = false;
    bool bidir_ = false;
    bool udp_ = false;
    bool done_ = false;
    bool summaries_ = false;
    bool in_summary_ = false;  // past the "- - -" line or "Test Complete. Summary Results:"
    bool untagged_ = false;    // summary lines without sender/receiver: iperf3 3.0
    double longest_interval_s_ = 0;
    std::map<std::string, int64_t> sent_datagrams_;  // "[  4] Sent N datagrams", by stream
    int64_t sum_out_of_order_ = 0, stream_out_of_order_ = 0;
    bool saw_out_of_order_ = false;
    int64_t out_of_order_lines_ = 0;  // --debug's "OUT OF ORDER - received packet …" lines
    std::string host_;
    std::string version_;   // "iperf 3.12", from -V's first line
    std::string platform_;  // "Linux", from -V's uname line
    std::optional<int> port_;
    std::optional<int> verbose_streams_;
    std::optional<int> block_bytes_;
    std::optional<double> cpu_local_, cpu_remote_;
    std::string failure_;
    std::set<std::string> stream_ids_;
    DirectionReports forward_, back_;
    RateSeries sum_intervals_, stream_intervals_;
    int64_t last_line_ = 0;
};

}  // namespace

bool iperf3_version_line(std::string_view line) {
    // "iperf 3.12" (-V before a test) or "iperf 3.12 (cJSON 1.7.15)" (--version).
    std::string_view rest = line;
    if (!take_prefix(rest, "iperf 3.")) return false;
    const auto minor = take_number(rest);
    return minor && (rest.empty() || rest.starts_with(" ") || rest.starts_with(".") ||
                     rest.starts_with("+") || rest.starts_with("-"));
}

bool iperf3_text_header(std::string_view line) {
    if (line.starts_with("Connecting to host "))
        return line.find(", port ") != std::string_view::npos;
    if (line.starts_with("Server listening on ")) {
        std::string_view rest = line.substr(20);
        return take_number(rest).has_value();  // iperf2 says "on TCP port 5001"
    }
    return line.starts_with("iperf3: error - ") || iperf3_version_line(line);
}

bool iperf3_text_report(std::string_view line) {
    std::string_view s = line;
    if (!take_bracket(s)) return false;
    if (s.starts_with("[")) take_bracket(s);
    std::string_view p = s;
    return has_two_decimals(s) && take_number(p) && take_prefix(p, "-") && take_number(p) &&
           take_prefix(p, "sec");
}

std::unique_ptr<RunReader> make_iperf3_text_reader() {
    return std::make_unique<Iperf3TextReader>();
}

std::optional<int64_t> iperf3_text_out_of_order(std::string_view output) {
    Iperf3TextReader reader;
    int64_t number = 0;
    try {
        while (!output.empty()) {
            const size_t end = std::min(output.find('\n'), output.size());
            reader.line(text::trim(output.substr(0, end)), ++number);
            output.remove_prefix(std::min(end + 1, output.size()));
        }
        Measurements m;
        if (reader.finish(RunInfo{"server_output_text", nullptr}, m)) return std::nullopt;
        for (const auto& t : m.throughput)
            if (t.transport == Transport::udp && t.out_of_order) return t.out_of_order;
    } catch (const InputError&) {
    }
    return std::nullopt;
}

namespace {

// "[  5] local 198.18.0.1 port 5201 connected to 198.18.0.2 port 48560": the id and both ports.
std::optional<std::tuple<std::string, int, int>> connected_line(std::string_view s) {
    const auto id = take_bracket(s);
    if (!id) return std::nullopt;
    const auto port_after = [&](std::string_view marker) -> std::optional<int> {
        const size_t at = s.find(marker);
        if (at == std::string_view::npos) return std::nullopt;
        std::string_view rest = s.substr(at + marker.size());
        const size_t port = rest.find(" port ");
        if (port == std::string_view::npos) return std::nullopt;
        rest = text::trim(rest.substr(port + 6));
        const auto n = count(take_word(rest));
        if (!n || *n > 65535) return std::nullopt;
        return static_cast<int>(*n);
    };
    const auto local = port_after("local "), remote = port_after(" connected to ");
    if (!local || !remote) return std::nullopt;
    return std::tuple{*id, *local, *remote};
}

}  // namespace

std::vector<Iperf3TextStream> iperf3_text_udp_streams(std::string_view output) {
    std::map<std::string, std::pair<int, int>> ports;
    std::vector<std::pair<std::string, Iperf3TextStream>> found;
    int64_t number = 0;
    try {
        while (!output.empty()) {
            const size_t end = std::min(output.find('\n'), output.size());
            const std::string_view line = text::trim(output.substr(0, end));
            output.remove_prefix(std::min(end + 1, output.size()));
            ++number;
            if (const auto c = connected_line(line)) {
                ports[std::get<0>(*c)] = {std::get<1>(*c), std::get<2>(*c)};
                continue;
            }
            const auto l = parse_line(line, number);
            if (!l || l->id == "SUM" || l->side.empty() || !l->lost || !l->total) continue;
            Iperf3TextStream st;
            st.side = l->side;
            st.lost = *l->lost;
            st.total = *l->total;
            found.emplace_back(l->id, st);
        }
    } catch (const InputError&) {
        return {};
    }
    std::vector<Iperf3TextStream> out;
    for (auto& [id, st] : found) {
        const auto it = ports.find(id);
        if (it == ports.end()) continue;
        st.local_port = it->second.first;
        st.remote_port = it->second.second;
        out.push_back(st);
    }
    return out;
}

}  // namespace np
