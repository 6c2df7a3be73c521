#include "analysis/readers/iperf3.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "analysis/readers/iperf3_text.hpp"
#include "analysis/readers/json_scan.hpp"
#include "analysis/readers/series.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

// Where in the document a value sits; only the places the analysis reads are named, anything
// else is `skip` and its whole subtree is ignored cheaply.
enum class Ctx : uint8_t {
    skip,
    root,
    stream_event,  // one --json-stream line: {"event": …, "data": …}
    start,
    test_start,
    connecting_to,
    connected,   // start.connected: the streams' sockets and ports
    connection,  // one entry of it
    intervals,
    interval,
    interval_streams,
    interval_stream,
    interval_sum,
    interval_sum_reverse,
    end,
    end_streams,
    end_stream,
    server_output,  // --get-server-output's server_output_json: the server's own document
    server_start,
    server_connected,
    server_end,
    server_end_streams,
    server_end_stream,
    summary,  // any Iperf3Summary block; the frame's target says which
    cpu,
    count_,
};

// What a known key holds. `event_data` is --json-stream's "data": an object, or the message
// of an "error" event.
enum class FieldKind : uint8_t { text, number, integer, flag, object, array, event_data };

const char* kind_name(FieldKind k) {
    switch (k) {
        case FieldKind::text:
            return "a string";
        case FieldKind::number:
        case FieldKind::integer:
            return "a number";
        case FieldKind::flag:
            return "true/false or 0/1";
        case FieldKind::object:
        case FieldKind::event_data:
            return "an object";
        case FieldKind::array:
            return "a list";
    }
    return "a value";
}

constexpr size_t kMaxDepth = 64;
// Entries of end.streams and of an interval's streams: two per stream with --bidir.
constexpr int64_t kMaxStreamEntries = 2 * kMaxIperf3Streams;

class Iperf3JsonReader;

struct Value {
    std::string_view text;
    double number = 0;
    int64_t integer = 0;
    bool flag = false;
};

// One key the reader knows, in one context: its kind, the range its numbers must be in, and
// what reading it does. Containers name the context they open instead.
struct Field {
    Ctx ctx;
    std::string_view key;
    FieldKind kind;
    double min = 0;
    double max = 0;
    void (*set)(Iperf3JsonReader&, const Value&) = nullptr;
    Ctx child = Ctx::skip;
    Iperf3Summary* (*target)(Iperf3JsonReader&) = nullptr;  // the summary block a child fills
};

constexpr double kAny = std::numeric_limits<double>::max();
// The largest integer a field may hold (below 2^63).
constexpr double kI64 = 9.0e18;

// Length, first and last byte: two keys of one context that share these are compared whole.
uint32_t tag_of(std::string_view k) {
    if (k.empty()) return 0;
    return static_cast<uint32_t>(k.size() & 0xFFFF) |
           static_cast<uint32_t>(static_cast<uint8_t>(k.front())) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(k.back())) << 24;
}

// The reader is a json_scan handler. A key is looked up the moment it is read (its view is
// valid only then): `field_` is what the next value under it means, nullptr when nothing reads
// it. Containers under unknown keys are skipped whole.
class Iperf3JsonReader {
  public:
    Iperf3JsonReader(Iperf3Run& run, Ctx top) : run_(run), top_(top) {}

    void start_object() { open(false); }
    void start_array() { open(true); }
    void end_object() { close(); }
    void end_array() { close(); }
    void key(std::string_view k) {
        const Frame& f = frames_[depth_ - 1];
        field_ = f.ctx == Ctx::skip ? nullptr : find(f.ctx, k);
    }
    void null() {
        // cJSON writes a NaN or infinite number as null: the figure is not there.
        if (const Field* f = scalar_field();
            f && (f->kind == FieldKind::object || f->kind == FieldKind::array))
            wrong_type(f, "null");
    }
    void boolean(bool b) {
        const Field* f = scalar_field();
        if (!f) return;
        if (f->kind != FieldKind::flag) wrong_type(f, b ? "true" : "false");
        Value v;
        v.flag = b;
        f->set(*this, v);
    }
    void number(std::string_view text) {
        const Field* f = scalar_field();
        if (!f) return;
        Value v;
        v.text = text;
        switch (f->kind) {
            case FieldKind::number:
                v.number = to_double(text, f);
                break;
            case FieldKind::integer:
                v.integer = to_integer(text, f);
                break;
            case FieldKind::flag:
                v.flag = to_double(text, f) != 0;
                break;
            default:
                wrong_type(f, "a number");
        }
        f->set(*this, v);
    }
    void string(std::string_view s) {
        const Field* f = scalar_field();
        if (!f) return;
        if (f->kind == FieldKind::event_data) {
            // 3.17+ streams an error as {"event":"error","data":"message"}.
            if (event_ == "error") run_.error = std::string(s);
            return;
        }
        if (f->kind != FieldKind::text) wrong_type(f, "a string");
        Value v;
        v.text = s;
        f->set(*this, v);
    }

    void finish() {
        run_.interval_stats.sum_bps = sum_bps_.take();
        run_.interval_stats.reverse_sum_bps = reverse_sum_bps_.take();
    }

  private:
    struct Frame {
        Ctx ctx = Ctx::skip;
        bool array = false;
        int64_t index = -1;    // this container's index in its parent list; -1 in an object
        int64_t next = 0;      // for a list: the index of its next element
        std::string_view key;  // the known key this container sits under
        Iperf3Summary* summary = nullptr;
    };
    using EndStream = Iperf3StreamEnd;
    // The known keys, sorted by context, and where each context's run of them is.
    struct Table {
        std::vector<Field> fields;
        std::vector<uint32_t> tags;
        std::array<std::pair<size_t, size_t>, static_cast<size_t>(Ctx::count_)> ranges{};
    };
    static std::vector<Field> start_fields();
    static std::vector<Field> interval_fields();
    static std::vector<Field> end_fields();
    static std::vector<Field> summary_fields();
    static Table build_table();
    static inline const Table table_ = build_table();

    static const Field* find(Ctx ctx, std::string_view k) {
        const uint32_t tag = tag_of(k);
        const auto [b, e] = table_.ranges[static_cast<size_t>(ctx)];
        for (size_t i = b; i < e; ++i) {
            if (table_.tags[i] != tag) continue;
            // Same length, first and last byte: the middle decides (a loop: these are short,
            // and a memcmp call per known key showed in the profile).
            const std::string_view f = table_.fields[i].key;
            size_t j = 1;
            while (j + 1 < k.size() && f[j] == k[j]) ++j;
            if (j + 1 >= k.size()) return &table_.fields[i];
        }
        return nullptr;
    }

    // The field a scalar at the current position sets; nullptr when nothing reads it.
    const Field* scalar_field() {
        if (depth_ == 0) return nullptr;  // a bare scalar document: nothing iperf3 writes
        Frame& f = frames_[depth_ - 1];
        if (f.ctx == Ctx::skip) return nullptr;
        if (f.array) {
            const int64_t i = f.next++;
            if (element_ctx(f.ctx) != Ctx::skip)
                throw InputError(path(fmt::format("[{}]", i)), "expected an object in the list");
            return nullptr;
        }
        return field_;
    }

    std::string path(std::string_view leaf) const {
        std::string p;
        const auto add = [&](std::string_view name) {
            if (name.empty()) return;
            if (!p.empty() && name.front() != '[') p += '.';
            p += name;
        };
        for (size_t i = 1; i < depth_; ++i) {  // [0] is the document's own object
            const Frame& f = frames_[i];
            if (f.index >= 0) {
                add(fmt::format("[{}]", f.index));
            } else {
                add(f.key);
            }
        }
        add(leaf);
        return p.empty() ? "json" : p;
    }
    [[noreturn]] void bad(std::string_view leaf, const std::string& what) const {
        throw InputError(path(leaf), what);
    }
    [[noreturn]] void wrong_type(const Field* f, std::string_view got) const {
        bad(f->key, fmt::format("expected {}, got {}", kind_name(f->kind), got));
    }
    void check_range(double v, const Field* f, std::string_view text) const {
        if (v < f->min)
            bad(f->key, fmt::format("{} is {}", text, f->min == 0 ? "negative" : "out of range"));
        if (v > f->max) bad(f->key, fmt::format("{} is out of range", text));
    }
    double to_double(std::string_view text, const Field* f) const {
        double v = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc::result_out_of_range || !std::isfinite(v))
            bad(f->key, fmt::format("{} is out of range", text));
        if (ec != std::errc() || p != text.data() + text.size())
            bad(f->key, fmt::format("'{}' is not a number", text));
        check_range(v, f, text);
        return v;
    }
    int64_t to_integer(std::string_view text, const Field* f) const {
        int64_t i = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
        if (ec == std::errc() && p == text.data() + text.size()) {
            check_range(static_cast<double>(i), f, text);
            return i;
        }
        // cJSON prints large integral doubles as 1.2e+10; a fraction is not a count.
        const double d = to_double(text, f);
        if (std::floor(d) != d) bad(f->key, fmt::format("{} is not a whole number", text));
        if (std::fabs(d) > 9.0e18) bad(f->key, fmt::format("{} is out of range", text));
        return static_cast<int64_t>(d);
    }

    Iperf3Summary* summary() const { return frames_[depth_ - 1].summary; }
    Iperf3Run& run() { return run_; }

    static Ctx element_ctx(Ctx list) {
        switch (list) {
            case Ctx::intervals:
                return Ctx::interval;
            case Ctx::interval_streams:
                return Ctx::interval_stream;
            case Ctx::end_streams:
                return Ctx::end_stream;
            case Ctx::server_end_streams:
                return Ctx::server_end_stream;
            case Ctx::connected:
            case Ctx::server_connected:  // the same keys: close() says whose
                return Ctx::connection;
            default:
                return Ctx::skip;
        }
    }

    void open(bool array) {
        if (depth_ == 0) {
            frames_[0] = Frame{array ? Ctx::skip : top_, array, -1, 0, {}, nullptr};
            depth_ = 1;
            event_.clear();
            return;
        }
        if (depth_ >= kMaxDepth) bad("", "JSON nested deeper than any iperf3 output");
        Frame& parent = frames_[depth_ - 1];
        Frame child{Ctx::skip, array, -1, 0, {}, nullptr};
        if (parent.ctx != Ctx::skip) {
            if (parent.array) {
                child.index = parent.next++;
                const Ctx element = element_ctx(parent.ctx);
                if (array && element != Ctx::skip)
                    throw InputError(path(fmt::format("[{}]", child.index)),
                                     "expected an object in the list, got a list");
                child.ctx = array ? Ctx::skip : element;
                if ((element == Ctx::interval_stream || element == Ctx::end_stream ||
                     element == Ctx::server_end_stream || element == Ctx::connection) &&
                    child.index >= kMaxStreamEntries)
                    bad("", fmt::format("more than {} entries: iperf3 runs at most {} streams "
                                        "(-P), two per stream with --bidir",
                                        kMaxStreamEntries, kMaxIperf3Streams));
            } else if (const Field* f = field_) {
                child.key = f->key;
                if (f->kind == FieldKind::event_data) {
                    child.ctx = event_child(array);
                } else {
                    if (f->kind != (array ? FieldKind::array : FieldKind::object))
                        wrong_type(f, array ? "a list" : "an object");
                    child.ctx = f->child;
                    if (f->target) child.summary = f->target(*this);
                }
            }
        }
        frames_[depth_++] = child;
        if (child.summary) child.summary->present = true;
        if (child.ctx == Ctx::start) run_.has_start = true;
        if (child.ctx == Ctx::end) run_.has_end = true;
        if (child.ctx == Ctx::interval) begin_interval();
        if (child.ctx == Ctx::end_stream || child.ctx == Ctx::server_end_stream)
            end_stream_ = EndStream{};
        if (child.ctx == Ctx::connection) connection_ = Iperf3Connection{};
    }

    Ctx event_child(bool array) {
        if (array) return Ctx::skip;
        if (event_.empty()) bad("event", "a --json-stream line must name its event first");
        if (event_ == "start") return Ctx::start;
        if (event_ == "interval") return Ctx::interval;
        if (event_ == "end") return Ctx::end;
        return Ctx::skip;
    }

    void close() {
        const Ctx ctx = frames_[--depth_].ctx;
        if (ctx == Ctx::interval) end_interval();
        if (ctx == Ctx::end_stream) fold_end_stream();
        if (ctx == Ctx::server_end_stream) {
            if (receiving(end_stream_.udp))
                add(run_.server_udp_out_of_order, end_stream_.udp.out_of_order);
            run_.server_stream_ends.push_back(end_stream_);
        }
        if (ctx == Ctx::connection)  // an entry of this output's list, or of the server's
            (frames_[depth_ - 1].ctx == Ctx::server_connected ? run_.server_connected
                                                              : run_.connected)
                .push_back(connection_);
    }

    // Whether a stream's "udp" block is the receiving end's: "sender" says so from 3.2; a block
    // without it is taken as printed.
    static bool receiving(const Iperf3Summary& udp) { return !udp.sender.value_or(false); }
    static void add(std::optional<int64_t>& sum, const std::optional<int64_t>& n) {
        if (n) sum = sum.value_or(0) + *n;
    }

    void begin_interval() {
        ++run_.interval_stats.intervals;
        interval_sum_.reset();
        interval_reverse_sum_.reset();
    }
    void end_interval() {
        if (interval_sum_) sum_bps_.push(*interval_sum_);
        if (interval_reverse_sum_) reverse_sum_bps_.push(*interval_reverse_sum_);
    }

    void fold_end_stream() {
        auto& e = run_.end_streams;
        const auto& s = end_stream_;
        run_.stream_ends.push_back(s);
        ++e.count;
        e.sender_bps += s.sender.bits_per_second.value_or(0);
        e.receiver_bps += s.receiver.bits_per_second.value_or(0);
        if (receiving(s.udp)) add(e.udp_out_of_order, s.udp.out_of_order);
        if (s.sender.reorder) e.reorder = e.reorder.value_or(0) + *s.sender.reorder;
        if (s.sender.max_snd_cwnd)
            e.max_snd_cwnd = std::max(e.max_snd_cwnd.value_or(0), *s.sender.max_snd_cwnd);
        if (s.sender.max_rtt_us)
            e.max_rtt_us = std::max(e.max_rtt_us.value_or(0), *s.sender.max_rtt_us);
        if (s.sender.mean_rtt_us && !e.mean_rtt_us) e.mean_rtt_us = s.sender.mean_rtt_us;
    }

    Iperf3Run& run_;
    Ctx top_;
    std::array<Frame, kMaxDepth> frames_{};
    size_t depth_ = 0;
    const Field* field_ = nullptr;
    std::string event_;
    std::optional<double> interval_sum_;
    std::optional<double> interval_reverse_sum_;
    RateSeries sum_bps_;
    RateSeries reverse_sum_bps_;
    EndStream end_stream_;
    Iperf3Connection connection_;
};

// The document's top, a --json-stream line's event, and "start": the test as set up.
std::vector<Field> Iperf3JsonReader::start_fields() {
    using R = Iperf3JsonReader;
    return {
        {Ctx::root, "start", FieldKind::object, 0, 0, nullptr, Ctx::start},
        {Ctx::root, "intervals", FieldKind::array, 0, 0, nullptr, Ctx::intervals},
        {Ctx::root, "end", FieldKind::object, 0, 0, nullptr, Ctx::end},
        {Ctx::root, "error", FieldKind::text, 0, 0,
         [](R& r, const Value& v) { r.run().error = std::string(v.text); }},
        {Ctx::root, "server_output_text", FieldKind::text, 0, 0,
         [](R& r, const Value& v) {
             r.run().server_udp_out_of_order = iperf3_text_out_of_order(v.text);
             r.run().server_text_udp_streams = iperf3_text_udp_streams(v.text);
         }},
        {Ctx::root, "server_output_json", FieldKind::object, 0, 0, nullptr, Ctx::server_output},
        {Ctx::server_output, "end", FieldKind::object, 0, 0, nullptr, Ctx::server_end},
        {Ctx::server_output, "start", FieldKind::object, 0, 0, nullptr, Ctx::server_start},
        {Ctx::server_start, "connected", FieldKind::array, 0, 0, nullptr, Ctx::server_connected},
        {Ctx::server_end, "streams", FieldKind::array, 0, 0, nullptr, Ctx::server_end_streams},
        {Ctx::server_end_stream, "udp", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.end_stream_.udp; }},

        {Ctx::stream_event, "event", FieldKind::text, 0, 0,
         [](R& r, const Value& v) { r.event_.assign(v.text); }},
        {Ctx::stream_event, "data", FieldKind::event_data},

        {Ctx::start, "test_start", FieldKind::object, 0, 0, nullptr, Ctx::test_start},
        {Ctx::start, "connecting_to", FieldKind::object, 0, 0, nullptr, Ctx::connecting_to},
        {Ctx::start, "connected", FieldKind::array, 0, 0, nullptr, Ctx::connected},
        {Ctx::start, "version", FieldKind::text, 0, 0,
         [](R& r, const Value& v) { r.run().version = std::string(v.text); }},
        {Ctx::start, "system_info", FieldKind::text, 0, 0,
         [](R& r, const Value& v) { r.run().system_info = std::string(v.text.substr(0, 200)); }},
        {Ctx::start, "tcp_mss_default", FieldKind::integer, 0, 65535,
         [](R& r, const Value& v) { r.run().tcp_mss_default = static_cast<int>(v.integer); }},
        {Ctx::start, "sndbuf_actual", FieldKind::integer, 0, kI64,
         [](R& r, const Value& v) { r.run().sndbuf_actual = v.integer; }},
        {Ctx::start, "rcvbuf_actual", FieldKind::integer, 0, kI64,
         [](R& r, const Value& v) { r.run().rcvbuf_actual = v.integer; }},
        {Ctx::start, "target_bitrate", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) {
             if (v.number > 0) r.run().target_bitrate = v.number;
         }},

        {Ctx::connecting_to, "host", FieldKind::text, 0, 0,
         [](R& r, const Value& v) { r.run().connecting_to_host = std::string(v.text); }},
        {Ctx::connecting_to, "port", FieldKind::integer, 0, 65535,
         [](R& r, const Value& v) { r.run().connecting_to_port = static_cast<int>(v.integer); }},
        {Ctx::connection, "socket", FieldKind::integer, 0, kI64,
         [](R& r, const Value& v) { r.connection_.socket = v.integer; }},
        {Ctx::connection, "local_port", FieldKind::integer, 0, 65535,
         [](R& r, const Value& v) { r.connection_.local_port = static_cast<int>(v.integer); }},
        {Ctx::connection, "remote_port", FieldKind::integer, 0, 65535,
         [](R& r, const Value& v) { r.connection_.remote_port = static_cast<int>(v.integer); }},

        {Ctx::test_start, "protocol", FieldKind::text, 0, 0,
         [](R& r, const Value& v) { r.run().protocol = std::string(v.text); }},
        {Ctx::test_start, "num_streams", FieldKind::integer, 1, kMaxIperf3Streams,
         [](R& r, const Value& v) { r.run().num_streams = static_cast<int>(v.integer); }},
        {Ctx::test_start, "blksize", FieldKind::integer, 0, kI64,
         [](R& r, const Value& v) { r.run().blksize = v.integer; }},
        {Ctx::test_start, "omit", FieldKind::integer, 0, 86400,
         [](R& r, const Value& v) { r.run().omit_s = static_cast<int>(v.integer); }},
        {Ctx::test_start, "gso", FieldKind::flag, 0, 1,
         [](R& r, const Value& v) { r.run().gso = v.flag; }},
        {Ctx::test_start, "gro", FieldKind::flag, 0, 1,
         [](R& r, const Value& v) { r.run().gro = v.flag; }},
        {Ctx::test_start, "duration", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.run().duration_s = v.number; }},
        {Ctx::test_start, "reverse", FieldKind::flag, 0, 1,
         [](R& r, const Value& v) { r.run().reverse = v.flag; }},
        {Ctx::test_start, "bidir", FieldKind::flag, 0, 1,
         [](R& r, const Value& v) { r.run().bidir = v.flag; }},
        {Ctx::test_start, "target_bitrate", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) {
             if (v.number > 0) r.run().target_bitrate = v.number;
         }},
    };
}

// "intervals": each interval's sums and per-stream RTT, cwnd and path MTU.
std::vector<Field> Iperf3JsonReader::interval_fields() {
    using R = Iperf3JsonReader;
    return {
        {Ctx::interval, "streams", FieldKind::array, 0, 0, nullptr, Ctx::interval_streams},
        {Ctx::interval, "sum", FieldKind::object, 0, 0, nullptr, Ctx::interval_sum},
        {Ctx::interval, "sum_bidir_reverse", FieldKind::object, 0, 0, nullptr,
         Ctx::interval_sum_reverse},
        {Ctx::interval_sum, "bits_per_second", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.interval_sum_ = v.number; }},
        {Ctx::interval_sum_reverse, "bits_per_second", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.interval_reverse_sum_ = v.number; }},
        {Ctx::interval_stream, "rtt", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) {
             auto& s = r.run().interval_stats;
             ++s.rtt_samples;
             s.rtt_sum_us += v.number;
             s.rtt_max_us = std::max(s.rtt_max_us, v.number);
         }},
        {Ctx::interval_stream, "snd_cwnd", FieldKind::integer, 0, kI64,
         [](R& r, const Value& v) {
             auto& s = r.run().interval_stats;
             s.snd_cwnd_max = std::max(s.snd_cwnd_max, v.integer);
         }},
        {Ctx::interval_stream, "pmtu", FieldKind::integer, 0, 65535,
         [](R& r, const Value& v) { r.run().interval_stats.pmtu = static_cast<int>(v.integer); }},
    };
}

// "end": the totals, each stream's, and the CPU figures.
std::vector<Field> Iperf3JsonReader::end_fields() {
    using R = Iperf3JsonReader;
    return {
        {Ctx::end, "streams", FieldKind::array, 0, 0, nullptr, Ctx::end_streams},
        {Ctx::end, "cpu_utilization_percent", FieldKind::object, 0, 0, nullptr, Ctx::cpu},
        {Ctx::end, "sum_sent", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.run().sum_sent; }},
        {Ctx::end, "sum_received", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.run().sum_received; }},
        {Ctx::end, "sum", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.run().sum; }},
        {Ctx::end, "sum_sent_bidir_reverse", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.run().sum_sent_bidir_reverse; }},
        {Ctx::end, "sum_received_bidir_reverse", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.run().sum_received_bidir_reverse; }},
        {Ctx::end_stream, "sender", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.end_stream_.sender; }},
        {Ctx::end_stream, "receiver", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.end_stream_.receiver; }},
        {Ctx::end_stream, "udp", FieldKind::object, 0, 0, nullptr, Ctx::summary,
         [](R& r) { return &r.end_stream_.udp; }},

        {Ctx::cpu, "host_total", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.run().cpu_host_total = v.number; }},
        {Ctx::cpu, "remote_total", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.run().cpu_remote_total = v.number; }},
    };
}

// A summary object (sum_sent, sum_received, sum, a stream's sender/receiver/udp).
std::vector<Field> Iperf3JsonReader::summary_fields() {
    using R = Iperf3JsonReader;
    return {
        {Ctx::summary, "seconds", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.summary()->seconds = v.number; }},
        {Ctx::summary, "bytes", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.summary()->bytes = v.number; }},
        {Ctx::summary, "bits_per_second", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.summary()->bits_per_second = v.number; }},
        // -1: not available on this platform.
        {Ctx::summary, "retransmits", FieldKind::integer, -1, kI64,
         [](R& r, const Value& v) {
             if (v.integer >= 0) r.summary()->retransmits = v.integer;
         }},
        {Ctx::summary, "jitter_ms", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.summary()->jitter_ms = v.number; }},
        // Negative, or more lost than counted, is what iperf3 prints with -O or a wrapped 32-bit
        // counter: read as printed, explained (not refused) by rules_counters.cpp.
        {Ctx::summary, "lost_packets", FieldKind::integer, -kI64, kI64,
         [](R& r, const Value& v) { r.summary()->lost_packets = v.integer; }},
        {Ctx::summary, "packets", FieldKind::integer, -kI64, kI64,
         [](R& r, const Value& v) { r.summary()->packets = v.integer; }},
        {Ctx::summary, "lost_percent", FieldKind::number, -kAny, kAny,
         [](R& r, const Value& v) { r.summary()->lost_percent = v.number; }},
        {Ctx::summary, "reorder", FieldKind::integer, -1, kI64,
         [](R& r, const Value& v) {
             if (v.integer >= 0) r.summary()->reorder = v.integer;
         }},
        {Ctx::summary, "out_of_order", FieldKind::integer, 0, kI64,
         [](R& r, const Value& v) { r.summary()->out_of_order = v.integer; }},
        {Ctx::summary, "socket", FieldKind::integer, 0, kI64,
         [](R& r, const Value& v) { r.summary()->socket = v.integer; }},
        {Ctx::summary, "sender", FieldKind::flag, 0, 1,
         [](R& r, const Value& v) { r.summary()->sender = v.flag; }},
        {Ctx::summary, "max_snd_cwnd", FieldKind::integer, 0, kI64,
         [](R& r, const Value& v) { r.summary()->max_snd_cwnd = v.integer; }},
        {Ctx::summary, "max_rtt", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.summary()->max_rtt_us = v.number; }},
        {Ctx::summary, "mean_rtt", FieldKind::number, 0, kAny,
         [](R& r, const Value& v) { r.summary()->mean_rtt_us = v.number; }},
    };
}

Iperf3JsonReader::Table Iperf3JsonReader::build_table() {
    Table t;
    for (auto part : {start_fields, interval_fields, end_fields, summary_fields}) {
        auto fields = part();
        t.fields.insert(t.fields.end(), fields.begin(), fields.end());
    }
    std::stable_sort(t.fields.begin(), t.fields.end(), [](const Field& a, const Field& b) {
        return static_cast<int>(a.ctx) < static_cast<int>(b.ctx);
    });
    for (size_t i = 0; i < t.fields.size(); ++i) {
        t.tags.push_back(tag_of(t.fields[i].key));
        auto& r = t.ranges[static_cast<size_t>(t.fields[i].ctx)];
        if (r.first == r.second) r.first = i;
        r.second = i + 1;
    }
    return t;
}

}  // namespace

bool looks_like_json_stream(std::string_view head) {
    // --json-stream writes one compact object per line, the first {"event":"start",…}.
    const size_t start = head.find_first_not_of(" \t\r\n");
    return start != std::string_view::npos && head.substr(start).starts_with("{\"event\"");
}

Iperf3Run parse_iperf3(ByteSource& source, bool embedded) {
    PeekableSource in(source);
    const std::string_view head = in.peek(4096);
    Iperf3Run run;
    run.json_stream = looks_like_json_stream(head);
    Iperf3JsonReader reader(run, run.json_stream ? Ctx::stream_event : Ctx::root);
    json_scan::Scanner<Iperf3JsonReader> scanner(in, reader);
    try {
        if (!scanner.value()) throw InputError("json", "empty input: no iperf3 JSON", 1);
        if (run.json_stream) {
            while (scanner.value()) {
            }
        } else if (!embedded && scanner.more()) {
            throw json_scan::JsonSyntaxError(scanner.offset(), scanner.line(),
                                             "unexpected content after the JSON value");
        }
    } catch (const json_scan::JsonSyntaxError& e) {
        throw InputError("json", fmt::format("not valid iperf3 JSON: {}", e.what()), e.line);
    } catch (const InputError& e) {
        if (e.line() > 0) throw;
        // The reader names the field; the scanner knows the line.
        throw InputError(e.field(), e.what(), scanner.line());
    }
    reader.finish();
    if (!run.error && !run.has_start)
        throw InputError("start", "no \"start\" object: not iperf3 -J output");
    if (!run.error && !run.has_end)
        throw InputError("end", "no \"end\" object: the iperf3 output is incomplete");
    return run;
}

Iperf3Run parse_iperf3(std::string_view text) {
    StringSource in(text);
    return parse_iperf3(in);
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
    const auto& e = run.end_streams;
    if (e.max_snd_cwnd)
        t.snd_cwnd_max_bytes = std::max<int64_t>(t.snd_cwnd_max_bytes.value_or(0), *e.max_snd_cwnd);
    if (e.max_rtt_us) t.rtt_max_us = std::max(t.rtt_max_us.value_or(0), *e.max_rtt_us);
    if (e.mean_rtt_us && !t.rtt_mean_us) t.rtt_mean_us = e.mean_rtt_us;
}

}  // namespace

// A stream's name: its port that is not the server's (the client's: the probes' name for it).
int stream_port(const Iperf3Connection& c, std::optional<int> server_port) {
    return server_port && c.local_port == *server_port ? c.remote_port : c.local_port;
}

// The port of the stream whose socket on an end is `socket`, from that end's start.connected.
std::optional<int> port_of_socket(const std::vector<Iperf3Connection>& connected,
                                  std::optional<int64_t> socket, std::optional<int> server_port) {
    if (!socket) return std::nullopt;
    for (const auto& c : connected)
        if (c.socket == *socket) return stream_port(c, server_port);
    return std::nullopt;
}

// The streams of one direction, each with its own counts: from this output's end.streams and,
// for the other end's counts of a UDP stream, the server's JSON inside it. `this_end_sends`:
// the direction is the one this output's end sent.
std::vector<ThroughputTest::Stream> streams_of(const Iperf3Run& run, bool udp,
                                               bool this_end_sends) {
    // The server's port: the client's output names it; the server's own holds it on every
    // connection's local end.
    std::optional<int> server_port = run.connecting_to_port;
    if (!server_port && !run.connected.empty()) server_port = run.connected.front().local_port;
    std::vector<ThroughputTest::Stream> out;
    for (const auto& e : run.stream_ends) {
        const Iperf3Summary& own = udp ? e.udp : e.sender;
        // "sender" says which end sent this stream; outputs without it run one direction.
        if (own.sender && *own.sender != this_end_sends) continue;
        const auto port = port_of_socket(run.connected, own.socket, server_port);
        if (!port) continue;
        ThroughputTest::Stream s;
        s.port = *port;
        if (!udp) {
            s.sent_bytes = e.sender.bytes;
            s.received_bytes = e.receiver.bytes;
            s.retransmits = e.sender.retransmits;
            out.push_back(s);
            continue;
        }
        // A stream's UDP block holds the sender's count whichever end printed it (a receiving
        // end prints the count the sender reported at the end) and the receiver's lost count. The
        // receiver's total is in the receiving end's own block: the server's output inside the
        // client's (its JSON, or its text's summary line); a client that received prints none.
        s.datagrams_sent = e.udp.packets;
        s.datagrams_lost = e.udp.lost_packets;
        if (this_end_sends) s.sent_bytes = e.udp.bytes;
        for (const auto& se : run.server_stream_ends) {
            if (port_of_socket(run.server_connected, se.udp.socket, server_port) != port ||
                !this_end_sends)
                continue;
            s.received_bytes = se.udp.bytes;
            s.datagrams_total = se.udp.packets;
            s.datagrams_lost = se.udp.lost_packets;
        }
        for (const auto& t : run.server_text_udp_streams) {
            if (!this_end_sends || s.datagrams_total || t.side != "receiver" ||
                (t.remote_port != *port && t.local_port != *port))
                continue;
            s.datagrams_total = t.total;
            s.datagrams_lost = t.lost;
        }
        out.push_back(s);
    }
    return out;
}

// --bidir: test_start.bidir exists only from 3.13; the *_bidir_reverse sums say it in every
// version.
bool ran_bidir(const Iperf3Run& run) {
    return run.bidir || run.sum_sent_bidir_reverse.present ||
           run.sum_received_bidir_reverse.present;
}

// The test as iperf3 set it up, one direction of it: what the start and the CPU figures say.
ThroughputTest test_as_set_up(const Iperf3Run& run, bool reverse_direction,
                              const std::string& source) {
    const bool udp = run.protocol == "UDP";
    const bool bidir = ran_bidir(run);
    ThroughputTest t;
    t.source = source;
    t.tool = Tool::iperf3;
    t.tool_version = run.version;
    t.platform = platform_of(run.system_info);
    if (run.omit_s > 0) t.omit_s = run.omit_s;
    if (udp) {
        t.udp_gso = run.gso;
        t.udp_gro = run.gro;
    }
    t.transport = udp ? Transport::udp : Transport::tcp;
    t.reverse = reverse_direction;
    t.bidir = bidir;
    t.streams = run.num_streams;
    t.duration_s = run.duration_s;
    t.server_host = run.connecting_to_host;
    t.port = run.connecting_to_port;
    t.label = fmt::format("iperf3 {}{}{}", udp ? "UDP" : "TCP",
                          bidir ? (reverse_direction ? " --bidir reverse" : " --bidir")
                                : (reverse_direction ? " -R" : ""),
                          run.num_streams > 1 ? fmt::format(" -P {}", run.num_streams) : "");
    if (run.target_bitrate) {
        // iperf3's -b is per stream.
        t.offered_bps = *run.target_bitrate * run.num_streams;
        t.offered_from = "target_bitrate";
    }
    if (run.blksize > 0 && run.blksize <= 65535) t.payload_bytes = static_cast<int>(run.blksize);
    t.mss_bytes = run.tcp_mss_default;
    t.sndbuf_bytes = run.sndbuf_actual;
    t.rcvbuf_bytes = run.rcvbuf_actual;
    // cpu_utilization_percent: host is the client, remote the server.
    const bool client_sends = !reverse_direction;
    t.sender_cpu_pct = client_sends ? run.cpu_host_total : run.cpu_remote_total;
    t.receiver_cpu_pct = client_sends ? run.cpu_remote_total : run.cpu_host_total;
    // The client's output names the server it connected to; the server's own does not.
    const bool client_output = run.connecting_to_port.has_value();
    t.per_stream = streams_of(run, udp, client_output == client_sends);
    return t;
}

// One direction's counts: the sender's and the receiver's summary, and its intervals.
void fill_counts(ThroughputTest& t, const Iperf3Run& run, const Iperf3Summary& sent,
                 const Iperf3Summary& received, const std::vector<double>& intervals) {
    const bool udp = run.protocol == "UDP";
    const bool bidir = ran_bidir(run);
    if (sent.bits_per_second) {
        t.sent_bps = sent.bits_per_second;
        t.sent_bytes = sent.bytes;
        t.retransmits = sent.retransmits;
        // 3.20+ prints reorder in end.streams[].sender only (sum_sent has none).
        if (!udp && !bidir)
            t.reorder_events = sent.reorder ? sent.reorder : run.end_streams.reorder;
        if (sent.seconds > 0) t.duration_s = sent.seconds;
    }
    if (received.bits_per_second) {
        t.received_bps = received.bits_per_second;
        t.received_bytes = received.bytes;
    }
    if (udp) {
        // The sender counts what it sent; the receiver's lost/total comes from sequence
        // gaps. Before 3.11 only end.sum exists, holding the receiver's figures.
        if (sent.present && sent.packets) t.datagrams_sent = sent.packets;
        const Iperf3Summary& rx = received.present ? received : run.sum;
        if (rx.present) {
            t.jitter_ms = rx.jitter_ms;
            // The streams' blocks mix both directions of a --bidir test. A client that
            // sent knows the count only from the server's output (--get-server-output).
            if (rx.out_of_order)
                t.out_of_order = rx.out_of_order;
            else if (!bidir)
                t.out_of_order = run.end_streams.udp_out_of_order ? run.end_streams.udp_out_of_order
                                                                  : run.server_udp_out_of_order;
            const std::string text = rx.lost_packets && rx.packets
                                         ? fmt::format("{}/{} ({:g}%)", *rx.lost_packets,
                                                       *rx.packets, rx.lost_percent.value_or(0))
                                         : "";
            set_receiver_loss_counts(t, rx.lost_packets, rx.packets, rx.lost_percent, text,
                                     received.present ? "end.sum_received" : "end.sum");
        }
        if (!received.present && run.sum.bits_per_second) {
            // Pre-3.11: end.sum holds the sender's bytes (iperf_print_results writes
            // total_sent there) beside the receiver's lost and a total that is the
            // receiver's count in 3.0 and 3.1 but the sender's from 3.2. What arrived is not
            // printed, and the counts do not give it in every release: it stays unknown.
            if (!sent.present) {
                t.sent_bps = run.sum.bits_per_second;
                t.sent_bytes = run.sum.bytes;
            }
        }
    }
    t.interval_bps = intervals;
}

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
    const bool bidir = ran_bidir(run);
    ThroughputTest fwd = test_as_set_up(run, run.reverse, source);
    fill_counts(fwd, run, run.sum_sent, run.sum_received, run.interval_stats.sum_bps);
    if (!udp) fill_tcp_info(fwd, run, !run.reverse);
    if (!(fwd.sent_bps || fwd.received_bps)) {
        throw InputError("end",
                         "the iperf3 output has no sum_sent, sum_received or sum block with "
                         "bits_per_second");
    }
    m.throughput.push_back(std::move(fwd));
    if (bidir) {
        ThroughputTest rev = test_as_set_up(run, true, source);
        fill_counts(rev, run, run.sum_sent_bidir_reverse, run.sum_received_bidir_reverse,
                    run.interval_stats.reverse_sum_bps);
        m.throughput.push_back(std::move(rev));
    }
    return m;
}

}  // namespace np
