// Rules about the tool's own counters when they cannot be right: UDP loss counts that contradict
// themselves or the bytes the same receiver counted, and reordering told apart from loss. An
// output like that is explained — which counter, the known cause, the true figure where the
// evidence gives it, the fix — never refused (docs/codes.md).
#include <fmt/format.h>

#include <cmath>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

// iperf3 numbers its datagrams with 32 bits unless --udp-counters-64bit (both ends, 3.1+); its
// receiver's sequence arithmetic goes wrong past 2^31.
constexpr double kWrap = 2147483648.0;

// Datagrams the receiver's own byte count holds: exact when the bytes are (iperf3's JSON) and
// every datagram has the test's size (iperf3's -l).
std::optional<double> received_by_bytes(const ThroughputTest& t) {
    if (!t.received_bytes || !t.payload_bytes || *t.payload_bytes <= 0) return std::nullopt;
    const double n = std::round(*t.received_bytes / *t.payload_bytes);
    // No receiver counts past 2^53 datagrams: a figure beyond it is no count (and no int64).
    return n >= 0 && n <= 9e15 ? std::optional<double>(n) : std::nullopt;
}

// What the counters say of themselves: the impossible figure, or the receiver's counts against
// its own bytes. Empty when they agree.
struct Contradiction {
    std::string which;  // "a negative lost count (-792,929)"
    std::string printed;
    std::optional<int64_t> lost, total;
};

std::optional<Contradiction> contradiction(const ThroughputTest& t) {
    if (const auto& c = t.impossible_counts) {
        Contradiction out{.which = "", .printed = c->text, .lost = c->lost, .total = c->total};
        if (c->lost && *c->lost < 0)
            out.which = fmt::format("a negative lost count ({})", format_count(double(*c->lost)));
        else if (c->total && *c->total < 0)
            out.which = fmt::format("a negative total ({})", format_count(double(*c->total)));
        else if ((c->total && *c->total == 2147483647) || (c->lost && *c->lost == 2147483647))
            out.which =
                "a count of 2,147,483,647, the largest signed 32-bit number: a counter "
                "stuck at its limit, not a count";
        else if (c->lost && c->total && *c->lost > *c->total)
            out.which =
                fmt::format("more lost ({}) than the total ({})", format_count(double(*c->lost)),
                            format_count(double(*c->total)));
        else
            out.which =
                fmt::format("a loss of {:g} %, outside 0 to 100", c->printed_pct.value_or(0));
        return out;
    }
    // Consistent on their own; against the bytes the same receiver counted (exact bytes only:
    // the text outputs round them to 3 digits).
    if (!t.datagrams_lost || !t.datagrams_total || t.bytes_resolution > 0) return std::nullopt;
    const auto by_bytes = received_by_bytes(t);
    if (!by_bytes) return std::nullopt;
    const double by_counts = double(*t.datagrams_total - *t.datagrams_lost);
    // One datagram either way: iperf3's last one may be a partial block.
    if (std::fabs(by_counts - *by_bytes) <= std::max(2.0, 1e-4 * by_counts)) return std::nullopt;
    Contradiction out{.which = "",
                      .printed = t.printed_loss_text,
                      .lost = t.datagrams_lost,
                      .total = t.datagrams_total};
    out.which = fmt::format(
        "{} received by its counts ({} − {}) but {} by the bytes it received ({} bytes of {}-byte "
        "datagrams)",
        format_count(by_counts), format_count(double(*t.datagrams_total)),
        format_count(double(*t.datagrams_lost)), format_count(*by_bytes),
        format_count(*t.received_bytes), *t.payload_bytes);
    return out;
}

// The datagrams the sender sent, by its count or, when that is missing or broken, its bytes.
std::optional<double> sent_datagrams_of(const ThroughputTest& t) {
    if (t.datagrams_sent && *t.datagrams_sent > 0 && *t.datagrams_sent <= 9e15)
        return double(*t.datagrams_sent);
    if (t.sent_bytes && t.payload_bytes && *t.payload_bytes > 0) {
        const double n = std::round(*t.sent_bytes / *t.payload_bytes);
        if (n > 0 && n <= 9e15) return n;
    }
    return std::nullopt;
}

// Why the counters contradict themselves as far as the output shows it, and what to do.
struct CounterCause {
    std::string text, fix;
};

// The cause the output supports: iperf3's -O step, a 32-bit counter past its range, or none
// shown; its evidence is added to `f`.
CounterCause counter_cause(const ThroughputTest& t, std::optional<double> sent, Finding& f) {
    if (t.omit_s) {
        f.evidence.emplace_back("omit_s", *t.omit_s);
        return {fmt::format(
                    "The test ran with -O {}: iperf3 takes the first {} s out of its totals by "
                    "subtracting what it had counted by then, and with UDP its lost/total and its "
                    "byte count do not come out of that step agreeing — wrong, even negative, loss "
                    "after -O is reported in iperf3's issue tracker. Without -O the two agree to "
                    "the datagram (the same test on this project's testbed, docs/formats.md).",
                    *t.omit_s, *t.omit_s),
                "Run UDP tests without -O (omit the start by discarding the first intervals "
                "instead), or trace the test: the ledger counts every datagram."};
    }
    if (!t.udp_counters_64bit && sent && *sent >= kWrap) {
        const double wraps = std::floor(*sent / (2 * kWrap));
        f.evidence.emplace_back("datagrams_sent", static_cast<int64_t>(*sent));
        return {fmt::format(
                    "The sender sent {} datagrams: iperf3 numbers datagrams with 32 bits unless "
                    "--udp-counters-64bit (which this output does not show), and past 2^31 (older "
                    "releases count them signed) or 2^32 the receiver's arithmetic on those "
                    "numbers goes wrong ({} full wrap{} of the 32-bit counter).",
                    format_count(*sent), format_count(wraps), wraps == 1 ? "" : "s"),
                "Run with --udp-counters-64bit on both ends (iperf3 3.1 or newer), or shorter "
                "tests."};
    }
    return {fmt::format(
                "No known cause shows in the output: it shows no -O, and {}. A receiver that was "
                "restarted or served two clients at once mixes their counts.",
                t.udp_counters_64bit ? "the test ran with --udp-counters-64bit"
                : sent ? fmt::format("{} datagrams sent are too few to wrap iperf3's 32-bit "
                                     "counter",
                                     format_count(*sent))
                       : "not how many datagrams were sent (a 32-bit counter past 2^31 cannot be "
                         "ruled out)"),
            "Run the test again, with -J and the probe, so the counts can be checked against the "
            "ledger."};
}

// The true figure: the ledger's, else the receiver's bytes against its total or what the
// sender sent, else that the output does not hold it; its evidence is added to `f`.
std::string true_loss(const TestEvidence& v, const Contradiction& c, std::optional<double> sent,
                      Finding& f) {
    if (v.ledger && v.ledger->complete()) {
        const auto lost = double(v.ledger->lost());
        f.evidence.emplace_back("ledger_lost", static_cast<int64_t>(lost));
        return fmt::format(
            " The ledger of both data NICs counts the flow itself: {} datagrams lost on the "
            "path{}.",
            format_count(lost), lost > 0 ? " (" + describe_loss(*v.ledger) + ")" : "");
    }
    if (const auto got = received_by_bytes(v.test)) {
        // The receiver's total when it holds, else what the sender sent.
        const bool total_ok = c.total && *c.total > 0 && *c.total >= *got;
        const std::optional<double> base =
            total_ok ? std::optional<double>(double(*c.total)) : sent;
        if (base && *base >= *got && *base > 0) {
            const double lost = *base - *got;
            const double pct = 100.0 * lost / *base;
            f.evidence.emplace_back("received_by_bytes", static_cast<int64_t>(*got));
            f.evidence.emplace_back("true_lost", static_cast<int64_t>(lost));
            f.evidence.emplace_back("true_loss_pct", rounded(pct));
            return fmt::format(
                " The receiver's own byte count gives the true figure: {} datagrams received of "
                "{} {}, so {} lost ({} %).",
                format_count(*got), format_count(*base),
                total_ok ? "by its total" : "the sender sent", format_count(lost),
                fmt::format("{:.2f}", pct));
        }
    }
    return " This output does not hold what the true loss is: the receiver's bytes and the "
           "datagram size are needed (iperf3 -J prints both).";
}

}  // namespace

void loss_counters(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    if (t.transport != Transport::udp) return;
    const auto c = contradiction(t);
    if (!c) return;
    Finding f = make_finding("LOSS_COUNTERS_WRONG", t.label);
    f.title =
        fmt::format("{}'s loss counters contradict themselves: {}", to_string(t.tool), c->which);
    f.evidence = {{"printed", c->printed}};
    if (c->lost) f.evidence.emplace_back("printed_lost", *c->lost);
    if (c->total) f.evidence.emplace_back("printed_total", *c->total);
    const auto sent = sent_datagrams_of(t);
    const CounterCause cause = counter_cause(t, sent, f);
    f.detail = cause.text + true_loss(v, *c, sent, f);
    f.next_step = cause.fix;
    out.push_back(std::move(f));
}

void client_server_loss(const ExplainInput& in, Explanation& e) {
    // One client-side and one server-side UDP test of one tool: more would be guessing which
    // belongs with which.
    const ThroughputTest *client = nullptr, *server = nullptr;
    int clients = 0, servers = 0;
    for (const auto& t : in.measurements.throughput) {
        if (t.transport != Transport::udp || t.bidir) continue;
        if (t.from_server) {
            server = &t;
            ++servers;
        } else {
            client = &t;
            ++clients;
        }
    }
    if (clients != 1 || servers != 1 || client->tool != server->tool) return;
    if (client->port && server->port && *client->port != *server->port) return;
    if (std::fabs(client->duration_s - server->duration_s) > 1.0) return;
    const auto c = recomputed_loss_pct(*client);
    const auto s = recomputed_loss_pct(*server);
    if (!c || !s) return;
    if (std::fabs(*c - *s) <= std::max(0.5, 0.1 * std::max(*c, *s))) return;
    Finding f = make_finding("LOSS_COUNTERS_WRONG", client->label);
    f.title = fmt::format(
        "The client's summary says {} % of the datagrams were lost, the server's own {} %",
        fmt::format("{:.2f}", *c), fmt::format("{:.2f}", *s));
    f.detail = fmt::format(
        "The server is the receiver: its count ({}/{} in {}) is what arrived and what did not. "
        "The client's ({}/{} in {}) is what the server reported back to it, or, where that "
        "report did not come back whole, the client's own view, which sees no loss; the two "
        "outputs may also be of different runs of the test.",
        *server->datagrams_lost, *server->datagrams_total, server->source, *client->datagrams_lost,
        *client->datagrams_total, client->source);
    f.evidence = {{"client_loss_pct", rounded(*c)},
                  {"server_loss_pct", rounded(*s)},
                  {"client_source", client->source},
                  {"server_source", server->source}};
    f.next_step =
        "Take the server's figure. With iperf3, -J --get-server-output puts the server's own "
        "summary in the client's output.";
    e.findings.push_back(std::move(f));
    for (auto& v : e.verdicts)
        if (v.test == client->label && v.source == client->source)
            v.codes.push_back("LOSS_COUNTERS_WRONG");
}

// What a count of reordering does not say: where it happened. Said wherever one is named.
constexpr const char* kWhereReordered =
    "Where they were reordered the count does not say: on the path (links or queues in "
    "parallel, a bond, ECMP), or in the receiving host when it handles the flow's packets on "
    "several CPUs (several receive queues of its NIC, RPS; on a veth, the backlog of each CPU "
    "that sent).";

// TCP's reordering as the sending node's kernel counted it over the test's phase (the probe's
// nstat deltas), where the tool reports none (iperf3 before 3.20): each time its TCP found
// segments delivered out of order, and the duplicates its receivers reported back (D-SACK).
// The node's counters cover every TCP connection it had in that phase, the test's flow first
// among them.
void kernel_reordering(const TestEvidence& v, std::vector<Finding>& out) {
    if (!v.traces.sender) return;
    const auto& nstat = v.traces.sender->phase.nstat;
    const auto count = [&](const char* name) -> int64_t {
        const auto it = nstat.find(name);
        return it != nstat.end() && it->second > 0 ? it->second : 0;
    };
    const int64_t sack = count("TcpExtTCPSACKReorder"), ts = count("TcpExtTCPTSReorder"),
                  reno = count("TcpExtTCPRenoReorder"), dsack = count("TcpExtTCPDSACKRecv");
    const int64_t events = sack + ts + reno;
    if (events == 0) return;
    const auto& t = v.test;
    const std::string& node = v.traces.sender->trace->node;
    Finding f = make_finding("REORDERED_NOT_LOST", t.label);
    f.title = fmt::format("{}'s TCP found segments delivered out of order {} times", node,
                          format_count(double(events)));
    f.detail = fmt::format(
        "{}'s kernel counted over the test (the probe's counters, of every TCP connection of the "
        "node in that phase): {} holes filled by an original segment that came after later ones "
        "(TCPSACKReorder), {} found by timestamps (TCPTSReorder), {} by duplicate ACKs "
        "(TCPRenoReorder): segments reached the receiver's TCP out of order. {}{}",
        node, format_count(double(sack)), format_count(double(ts)), format_count(double(reno)),
        kWhereReordered,
        dsack > 0 ? fmt::format(" The receiver reported {} segments it got twice (D-SACK): "
                                "resent though they had arrived.",
                                format_count(double(dsack)))
                  : "");
    f.evidence = {{"node", node}, {"reorder_events", events}, {"dsack_received", dsack}};
    if (t.retransmits) f.evidence.emplace_back("retransmits", *t.retransmits);
    out.push_back(std::move(f));
}

void reordering(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    if (t.transport == Transport::udp && t.out_of_order && *t.out_of_order > 0) {
        Finding f = make_finding("REORDERED_NOT_LOST", t.label);
        f.title = fmt::format("{} datagrams arrived out of order: reordered, not lost",
                              format_count(double(*t.out_of_order)));
        f.detail = std::string(
                       "The receiver counted a gap as lost when a later datagram came first, and "
                       "took one back when each late datagram came, so these are not in its loss "
                       "figure. ") +
                   kWhereReordered;
        f.evidence = {{"out_of_order", *t.out_of_order}};
        if (t.datagrams_lost) f.evidence.emplace_back("lost_datagrams", *t.datagrams_lost);
        out.push_back(std::move(f));
    }
    if (t.transport == Transport::tcp && !t.reorder_events) return kernel_reordering(v, out);
    if (t.transport == Transport::tcp && t.reorder_events && *t.reorder_events > 0) {
        Finding f = make_finding("REORDERED_NOT_LOST", t.label);
        f.title = fmt::format("The sender's TCP saw segments reordered {} times",
                              format_count(double(*t.reorder_events)));
        f.detail = std::string(
                       "iperf3 3.20+ reports the kernel's reordering count (tcpi_reord_seen): the "
                       "receiver acknowledged segments out of order. TCP raises its reordering "
                       "threshold when it sees this; retransmits sent before it did may be "
                       "spurious, not loss. ") +
                   kWhereReordered;
        f.evidence = {{"reorder_events", *t.reorder_events}};
        if (t.retransmits) f.evidence.emplace_back("retransmits", *t.retransmits);
        out.push_back(std::move(f));
    }
}

}  // namespace np::rules
