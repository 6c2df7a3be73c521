#include "analysis/iperf3.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include "analysis/error.hpp"
#include "analysis/json_scan.hpp"

namespace np {
namespace {

// Where in the document a value sits; only the places the analysis reads are named, anything
// else is `skip` and its whole subtree is ignored cheaply.
enum class Ctx {
    skip,
    root,
    stream_event,  // one --json-stream line: {"event": …, "data": …}
    start,
    test_start,
    connecting_to,
    intervals,
    interval,
    interval_streams,
    interval_stream,
    interval_sum,
    interval_sum_reverse,
    end,
    end_streams,
    end_stream,
    summary,  // any Iperf3Summary block; the target pointer says which
    cpu,
};

int line_of(std::string_view text, size_t pos) {
    pos = std::min(pos, text.size());
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
}

constexpr size_t kMaxDepth = 64;

class Handler {
  public:
    Handler(Iperf3Run& run, bool stream_line)
        : run_(run), top_(stream_line ? Ctx::stream_event : Ctx::root) {}

    // --- container events ---
    bool start_object() { return open(false); }
    bool start_array() { return open(true); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(std::string& k) {
        key_ = std::move(k);
        return true;
    }

    // --- values ---
    bool null() { return value(Value{Kind::null, 0, false, nullptr}); }
    bool boolean(bool b) { return value(Value{Kind::boolean, b ? 1.0 : 0.0, b, nullptr}); }
    bool number(double v) { return value(Value{Kind::number, v, false, nullptr}); }
    bool string(std::string& s) { return value(Value{Kind::string, 0, false, &s}); }

  private:
    enum class Kind { null, boolean, number, string };
    struct Value {
        Kind kind;
        double number;
        bool boolean;
        std::string* text;
    };
    struct Frame {
        Ctx ctx;
        bool array;
        std::string name;        // the key (or "[i]") this container sits under
        Iperf3Summary* summary;  // for Ctx::summary
        int64_t index = 0;       // next array index
    };

    std::string path(const std::string& leaf) const {
        std::string p;
        for (size_t i = 1; i < stack_.size(); ++i) {  // [0] is the document's own object
            const auto& n = stack_[i].name;
            if (n.empty()) continue;
            if (!p.empty() && n.front() != '[') p += '.';
            p += n;
        }
        if (!leaf.empty()) {
            if (!p.empty()) p += '.';
            p += leaf;
        }
        return p.empty() ? "json" : p;
    }

    [[noreturn]] void bad(const std::string& leaf, const std::string& what) const {
        throw InputError(path(leaf), what);
    }

    double num(const Value& v) const {
        if (v.kind != Kind::number) bad(key_, "expected a number");
        if (!std::isfinite(v.number)) bad(key_, "not a finite number");
        return v.number;
    }
    int64_t integer(const Value& v) const {
        const double d = num(v);
        if (d < -9.0e18 || d > 9.0e18) bad(key_, "integer out of range");
        return static_cast<int64_t>(d);
    }
    bool flag(const Value& v) const {
        // iperf3 writes some flags as 0/1 (reverse, bidir) and others as true/false (sender).
        if (v.kind == Kind::boolean) return v.boolean;
        if (v.kind == Kind::number) return v.number != 0;
        bad(key_, "expected true/false or 0/1");
    }
    std::string text(const Value& v) const {
        if (v.kind != Kind::string) bad(key_, "expected a string");
        return *v.text;
    }

    Ctx child(const Frame& parent, bool array, Iperf3Summary** summary) {
        const std::string& k = key_;
        switch (parent.ctx) {
            case Ctx::root:
                if (k == "start" && !array) return Ctx::start;
                if (k == "intervals" && array) return Ctx::intervals;
                if (k == "end" && !array) return Ctx::end;
                return Ctx::skip;
            case Ctx::stream_event:
                if (k != "data" || array) return Ctx::skip;
                if (event_.empty()) bad("event", "a --json-stream line must name its event first");
                if (event_ == "start") return Ctx::start;
                if (event_ == "interval") return Ctx::interval;
                if (event_ == "end") return Ctx::end;
                return Ctx::skip;
            case Ctx::start:
                if (k == "test_start" && !array) return Ctx::test_start;
                if (k == "connecting_to" && !array) return Ctx::connecting_to;
                return Ctx::skip;
            case Ctx::intervals:
                return array ? Ctx::skip : Ctx::interval;
            case Ctx::interval:
                if (k == "streams" && array) return Ctx::interval_streams;
                if (k == "sum" && !array) return Ctx::interval_sum;
                if (k == "sum_bidir_reverse" && !array) return Ctx::interval_sum_reverse;
                return Ctx::skip;
            case Ctx::interval_streams:
                return array ? Ctx::skip : Ctx::interval_stream;
            case Ctx::end:
                if (array) return k == "streams" ? Ctx::end_streams : Ctx::skip;
                if (k == "cpu_utilization_percent") return Ctx::cpu;
                if (k == "sum_sent") *summary = &run_.sum_sent;
                if (k == "sum_received") *summary = &run_.sum_received;
                if (k == "sum") *summary = &run_.sum;
                if (k == "sum_sent_bidir_reverse") *summary = &run_.sum_sent_bidir_reverse;
                if (k == "sum_received_bidir_reverse") *summary = &run_.sum_received_bidir_reverse;
                return *summary ? Ctx::summary : Ctx::skip;
            case Ctx::end_streams:
                if (array) return Ctx::skip;
                run_.end_streams.emplace_back();
                return Ctx::end_stream;
            case Ctx::end_stream:
                if (array) return Ctx::skip;
                if (k == "sender") *summary = &run_.end_streams.back().sender;
                if (k == "receiver") *summary = &run_.end_streams.back().receiver;
                if (k == "udp") *summary = &run_.end_streams.back().udp;
                return *summary ? Ctx::summary : Ctx::skip;
            default:
                return Ctx::skip;
        }
    }

    bool open(bool array) {
        if (stack_.empty()) {
            stack_.push_back({array ? Ctx::skip : top_, array, "", nullptr});
            return true;
        }
        Frame& parent = stack_.back();
        if (stack_.size() >= kMaxDepth) bad("", "JSON nested deeper than any iperf3 output");
        std::string name = parent.array ? fmt::format("[{}]", parent.index++) : key_;
        Iperf3Summary* summary = nullptr;
        const Ctx ctx = parent.ctx == Ctx::skip ? Ctx::skip : child(parent, array, &summary);
        if (ctx == Ctx::summary) summary->present = true;
        if (ctx == Ctx::start) run_.has_start = true;
        if (ctx == Ctx::end) run_.has_end = true;
        if (ctx == Ctx::interval) begin_interval();
        stack_.push_back({ctx, array, std::move(name), summary});
        return true;
    }

    bool close() {
        if (stack_.back().ctx == Ctx::interval) end_interval();
        stack_.pop_back();
        return true;
    }

    void begin_interval() {
        ++run_.interval_stats.intervals;
        interval_sum_ = std::nullopt;
        interval_reverse_sum_ = std::nullopt;
    }
    void end_interval() {
        if (interval_sum_) run_.interval_stats.sum_bps.push_back(*interval_sum_);
        if (interval_reverse_sum_)
            run_.interval_stats.reverse_sum_bps.push_back(*interval_reverse_sum_);
    }

    bool value(const Value& v) {
        if (stack_.empty()) return true;  // a bare scalar document: nothing iperf3 writes
        Frame& f = stack_.back();
        if (f.array) {
            ++f.index;
            return true;
        }
        const std::string& k = key_;
        switch (f.ctx) {
            case Ctx::root:
                if (k == "error") run_.error = text(v);
                break;
            case Ctx::stream_event:
                if (k == "event") event_ = text(v);
                // 3.17+ streams an error as {"event":"error","data":"message"}.
                if (k == "data" && event_ == "error") run_.error = text(v);
                break;
            case Ctx::start:
                if (k == "version") run_.version = text(v);
                if (k == "tcp_mss_default") run_.tcp_mss_default = static_cast<int>(integer(v));
                if (k == "sndbuf_actual") run_.sndbuf_actual = integer(v);
                if (k == "rcvbuf_actual") run_.rcvbuf_actual = integer(v);
                if (k == "target_bitrate" && num(v) > 0) run_.target_bitrate = num(v);
                break;
            case Ctx::connecting_to:
                if (k == "host") run_.connecting_to_host = text(v);
                break;
            case Ctx::test_start:
                if (k == "protocol") run_.protocol = text(v);
                if (k == "num_streams") run_.num_streams = static_cast<int>(integer(v));
                if (k == "blksize") run_.blksize = integer(v);
                if (k == "duration") run_.duration_s = num(v);
                if (k == "reverse") run_.reverse = flag(v);
                if (k == "bidir") run_.bidir = flag(v);
                if (k == "target_bitrate" && num(v) > 0) run_.target_bitrate = num(v);
                break;
            case Ctx::interval_sum:
                if (k == "bits_per_second") interval_sum_ = num(v);
                break;
            case Ctx::interval_sum_reverse:
                if (k == "bits_per_second") interval_reverse_sum_ = num(v);
                break;
            case Ctx::interval_stream: {
                auto& s = run_.interval_stats;
                if (k == "rtt") {
                    const double rtt = num(v);
                    ++s.rtt_samples;
                    s.rtt_sum_us += rtt;
                    s.rtt_max_us = std::max(s.rtt_max_us, rtt);
                }
                if (k == "snd_cwnd") s.snd_cwnd_max = std::max(s.snd_cwnd_max, integer(v));
                if (k == "pmtu") s.pmtu = static_cast<int>(integer(v));
                break;
            }
            case Ctx::summary:
                set_summary(*f.summary, k, v);
                break;
            case Ctx::cpu:
                if (k == "host_total") run_.cpu_host_total = num(v);
                if (k == "remote_total") run_.cpu_remote_total = num(v);
                break;
            default:
                break;
        }
        return true;
    }

    void set_summary(Iperf3Summary& s, const std::string& k, const Value& v) {
        if (k == "seconds") s.seconds = num(v);
        if (k == "bytes") s.bytes = num(v);
        if (k == "bits_per_second") s.bits_per_second = num(v);
        if (k == "retransmits") {
            const int64_t r = integer(v);
            if (r >= 0) s.retransmits = r;  // -1: not available on this platform
        }
        if (k == "jitter_ms") s.jitter_ms = num(v);
        if (k == "lost_packets") s.lost_packets = integer(v);
        if (k == "packets") s.packets = integer(v);
        if (k == "lost_percent") s.lost_percent = num(v);
        if (k == "out_of_order") s.out_of_order = integer(v);
        if (k == "sender") s.sender = flag(v);
        if (k == "max_snd_cwnd") s.max_snd_cwnd = integer(v);
        if (k == "max_rtt") s.max_rtt_us = num(v);
        if (k == "mean_rtt") s.mean_rtt_us = num(v);
    }

    Iperf3Run& run_;
    Ctx top_;
    std::vector<Frame> stack_;
    std::string key_;
    std::string event_;
    std::optional<double> interval_sum_;
    std::optional<double> interval_reverse_sum_;
};

// Parses one JSON text (a document, or one --json-stream line) into `run`.
void parse_json_text(Iperf3Run& run, std::string_view whole, size_t offset, size_t length,
                     bool stream_line) {
    Handler h(run, stream_line);
    try {
        json_scan::scan(whole.substr(offset, length), h);
    } catch (const json_scan::JsonSyntaxError& e) {
        throw InputError("json", fmt::format("not valid iperf3 JSON: {}", e.what()),
                         line_of(whole, offset + e.offset));
    } catch (const InputError& e) {
        // The handler names the field; add the line for multi-line inputs.
        throw InputError(e.field(), e.what(), stream_line ? line_of(whole, offset) : 0);
    }
}

bool looks_like_json_stream(std::string_view text) {
    // --json-stream writes one compact object per line, the first {"event":"start",…}.
    const size_t start = text.find_first_not_of(" \t\r\n");
    return start != std::string_view::npos && text.substr(start).starts_with("{\"event\"");
}

}  // namespace

Iperf3Run parse_iperf3(std::string_view text) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        throw InputError("json", "empty input: no iperf3 JSON", 1);
    if (text.find('\0') != std::string_view::npos)
        throw InputError("json", "binary data, not iperf3 JSON text",
                         line_of(text, text.find('\0')));
    Iperf3Run run;
    if (looks_like_json_stream(text)) {
        run.json_stream = true;
        size_t pos = 0;
        while (pos < text.size()) {
            size_t nl = text.find('\n', pos);
            if (nl == std::string_view::npos) nl = text.size();
            std::string_view line = text.substr(pos, nl - pos);
            if (line.find_first_not_of(" \t\r") != std::string_view::npos)
                parse_json_text(run, text, pos, line.size(), true);
            pos = nl + 1;
        }
    } else {
        parse_json_text(run, text, 0, text.size(), false);
    }
    if (!run.error && !run.has_start)
        throw InputError("start", "no \"start\" object: not iperf3 -J output");
    if (!run.error && !run.has_end)
        throw InputError("end", "no \"end\" object: the iperf3 output is incomplete");
    return run;
}

namespace {

void fill_tcp_info(ThroughputTest& t, const Iperf3Run& run, bool sender_is_client) {
    // The sender's tcp_info: end.streams[].sender carries it when this side sent; the
    // per-interval figures exist only on the side that sent.
    const auto& is = run.interval_stats;
    if (is.rtt_samples > 0 && sender_is_client) {
        t.rtt_mean_us = is.rtt_sum_us / static_cast<double>(is.rtt_samples);
        t.rtt_max_us = is.rtt_max_us;
    }
    if (is.snd_cwnd_max > 0 && sender_is_client) t.snd_cwnd_max_bytes = is.snd_cwnd_max;
    if (is.pmtu && sender_is_client) t.pmtu_bytes = is.pmtu;
    for (const auto& s : run.end_streams) {
        if (s.sender.max_snd_cwnd)
            t.snd_cwnd_max_bytes =
                std::max<int64_t>(t.snd_cwnd_max_bytes.value_or(0), *s.sender.max_snd_cwnd);
        if (s.sender.max_rtt_us)
            t.rtt_max_us = std::max(t.rtt_max_us.value_or(0), *s.sender.max_rtt_us);
        if (s.sender.mean_rtt_us && !t.rtt_mean_us) t.rtt_mean_us = s.sender.mean_rtt_us;
    }
}

}  // namespace

Measurements measurements_from(const Iperf3Run& run, const std::string& source) {
    Measurements m;
    const bool any_sum = run.sum_sent.present || run.sum_received.present || run.sum.present;
    if (run.error) {
        std::optional<Transport> transport;
        if (run.protocol == "TCP") transport = Transport::tcp;
        if (run.protocol == "UDP") transport = Transport::udp;
        m.failures.push_back({source, Tool::iperf3, *run.error, transport});
        if (!any_sum) return m;  // iperf3 writes an empty "end" when it could not run
    }
    const bool udp = run.protocol == "UDP";
    // test_start.bidir exists only from 3.13; the *_bidir_reverse sums say it in every version.
    const bool bidir =
        run.bidir || run.sum_sent_bidir_reverse.present || run.sum_received_bidir_reverse.present;
    auto base = [&](bool reverse_direction) {
        ThroughputTest t;
        t.source = source;
        t.tool = Tool::iperf3;
        t.tool_version = run.version;
        t.transport = udp ? Transport::udp : Transport::tcp;
        t.reverse = reverse_direction;
        t.bidir = bidir;
        t.streams = run.num_streams;
        t.duration_s = run.duration_s;
        t.label = fmt::format("iperf3 {}{}{}", udp ? "UDP" : "TCP",
                              bidir ? (reverse_direction ? " --bidir reverse" : " --bidir")
                                    : (reverse_direction ? " -R" : ""),
                              run.num_streams > 1 ? fmt::format(" -P {}", run.num_streams) : "");
        if (run.target_bitrate) {
            // iperf3's -b is per stream.
            t.offered_bps = *run.target_bitrate * run.num_streams;
            t.offered_from = "target_bitrate";
        }
        if (run.blksize > 0) t.payload_bytes = static_cast<int>(run.blksize);
        t.mss_bytes = run.tcp_mss_default;
        t.sndbuf_bytes = run.sndbuf_actual;
        t.rcvbuf_bytes = run.rcvbuf_actual;
        // cpu_utilization_percent: host is the client, remote the server.
        const bool client_sends = !reverse_direction;
        t.sender_cpu_pct = client_sends ? run.cpu_host_total : run.cpu_remote_total;
        t.receiver_cpu_pct = client_sends ? run.cpu_remote_total : run.cpu_host_total;
        return t;
    };
    auto fill = [&](ThroughputTest& t, const Iperf3Summary& sent, const Iperf3Summary& received,
                    const std::vector<double>& intervals) {
        if (sent.present) {
            t.sent_bps = sent.bits_per_second;
            t.sent_bytes = sent.bytes;
            t.retransmits = sent.retransmits;
            if (sent.seconds > 0) t.duration_s = sent.seconds;
        }
        if (received.present) {
            t.received_bps = received.bits_per_second;
            t.received_bytes = received.bytes;
        }
        if (udp) {
            // The sender counts what it sent; the receiver's lost/total comes from sequence
            // gaps. Before 3.11 only end.sum exists, holding the receiver's figures.
            if (sent.present && sent.packets) t.datagrams_sent = sent.packets;
            const Iperf3Summary& rx = received.present ? received : run.sum;
            if (rx.present) {
                t.datagrams_lost = rx.lost_packets;
                t.datagrams_total = rx.packets;
                t.printed_loss_pct = rx.lost_percent;
                t.jitter_ms = rx.jitter_ms;
                t.out_of_order = rx.out_of_order;
                if (rx.lost_packets && rx.packets)
                    t.printed_loss_text = fmt::format("{}/{} ({:g}%)", *rx.lost_packets,
                                                      *rx.packets, rx.lost_percent.value_or(0));
            }
            if (!received.present && run.sum.present) {
                // Pre-3.11: end.sum is the receiver's view; the per-stream udp blocks and
                // the interval packets are the sender's.
                t.received_bps = run.sum.bits_per_second;
                t.received_bytes = run.sum.bytes;
                if (!sent.present) {
                    double bytes = 0, bps = 0;
                    for (const auto& s : run.end_streams) {
                        bytes += s.udp.bytes;
                        bps += s.udp.bits_per_second;
                    }
                    if (bps > 0) {
                        t.sent_bps = bps;
                        t.sent_bytes = bytes;
                    }
                }
            }
        }
        t.interval_bps = intervals;
    };

    ThroughputTest fwd = base(run.reverse);
    fill(fwd, run.sum_sent, run.sum_received, run.interval_stats.sum_bps);
    if (!udp) fill_tcp_info(fwd, run, !run.reverse);
    if (!(fwd.sent_bps || fwd.received_bps)) {
        throw InputError("end", "the iperf3 output has no sum_sent, sum_received or sum block");
    }
    m.throughput.push_back(std::move(fwd));
    if (bidir) {
        ThroughputTest rev = base(true);
        fill(rev, run.sum_sent_bidir_reverse, run.sum_received_bidir_reverse,
             run.interval_stats.reverse_sum_bps);
        m.throughput.push_back(std::move(rev));
    }
    return m;
}

}  // namespace np
