// A test of several streams (iperf3 -P) whose streams did not share the path evenly: each
// stream's rate from the tool and, from its own ledger, what it lost and resent — so the slowest
// stream is explained by its own measured loss, or said to be unexplained by its counts. Its
// resends are listed but name nothing: a resend of what was not lost (reordering, a spurious
// timeout) is undone, so resends alone do not show that TCP held the connection back.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

struct StreamShare {
    int port = 0;
    double bps = 0;
    uint64_t lost = 0;    // data lost in its ledger's stages, and unattributed
    uint64_t resent = 0;  // TCP segments it resent (0 for UDP)
    const Ledger* ledger = nullptr;
};

// Each stream's rate and its own ledger's loss; empty when a stream's rate or ledger is missing.
std::vector<StreamShare> shares(const TestEvidence& v) {
    const ThroughputTest& t = v.test;
    std::vector<StreamShare> out;
    if (!v.ledger || t.duration_s <= 0) return {};
    for (const auto& s : t.per_stream) {
        const auto bytes = s.received_bytes ? s.received_bytes : s.sent_bytes;
        const auto l = std::find_if(v.ledger->streams.begin(), v.ledger->streams.end(),
                                    [&](const Ledger& x) { return x.stream_port == s.port; });
        if (!bytes || l == v.ledger->streams.end()) return {};
        out.push_back({s.port, *bytes * 8 / t.duration_s, l->lost() + l->unattributed(),
                       l->retransmitted.value_or(0), &*l});
    }
    return out;
}

// The mean of one count over the streams other than `slow`.
double others_mean(const std::vector<StreamShare>& all, const StreamShare& slow,
                   uint64_t StreamShare::*count) {
    double others = 0;
    for (const auto& s : all)
        if (&s != &slow) others += double(s.*count);
    return others / double(all.size() - 1);
}

// One count of the slowest stream set against the others' mean of it: it sets the stream apart
// when it is more than kUnevenLossFactor times that mean, by more than counting could differ by.
// Loss and resends are weighed each against its own kind: a stream that resent what no stage
// lost (spurious resends, which TCP undoes) does not hide another's loss.
struct Apart {
    double own = 0, others = 0;
    bool apart = false;
};
Apart set_apart(const std::vector<StreamShare>& all, const StreamShare& slow,
                uint64_t StreamShare::*count) {
    Apart a{double(slow.*count), others_mean(all, slow, count), false};
    a.apart = a.own > kUnevenLossFactor * a.others &&
              a.own - a.others > double(ledger_slack(counted_frames(*slow.ledger)));
    return a;
}

// Each stream by its client port: its rate, what it lost and, for TCP, what it resent.
std::string each_stream_text(const std::vector<StreamShare>& all, bool tcp) {
    std::string each;
    for (const auto& s : all) {
        each += fmt::format("{}{} {:.2f} Mbit/s, lost {}", each.empty() ? "" : "; ", s.port,
                            s.bps / 1e6, format_count(double(s.lost)));
        if (tcp) each += fmt::format(", resent {}", format_count(double(s.resent)));
    }
    return each;
}

// The streams' ports, rates and costs side by side, and the slowest one's share of the fastest.
Evidence streams_evidence(const std::vector<StreamShare>& all, const StreamShare& slow,
                          const StreamShare& fast, bool tcp) {
    std::vector<nlohmann::json> ports, mbps, lost, resent;
    for (const auto& s : all) {
        ports.emplace_back(s.port);
        mbps.push_back(rounded(s.bps / 1e6));
        lost.emplace_back(s.lost);
        resent.emplace_back(s.resent);
    }
    Evidence e{{"stream_ports", ports},
               {"stream_mbps", mbps},
               {"stream_lost", lost},
               {"slowest_share_of_fastest", rounded(slow.bps / fast.bps, 3)}};
    if (tcp) e.emplace_back("stream_resent", resent);
    return e;
}

}  // namespace

void uneven_streams(const TestEvidence& v, std::vector<Finding>& out) {
    const std::vector<StreamShare> all = shares(v);
    if (all.size() < 2) return;
    const auto [slow, fast] = std::minmax_element(
        all.begin(), all.end(),
        [](const StreamShare& a, const StreamShare& b) { return a.bps < b.bps; });
    if (fast->bps <= 0 || slow->bps >= kEvenStreamShare * fast->bps) return;
    const bool tcp = v.test.transport == Transport::tcp;
    // Its loss, placed in a stage or missing between two counted points, is the one count that
    // shows a cause; what it resent is told beside it.
    const Apart lost = set_apart(all, *slow, &StreamShare::lost);
    const Apart resent = tcp ? set_apart(all, *slow, &StreamShare::resent) : Apart{};
    Finding f = make_finding("STREAMS_UNEVEN", v.test.label);
    f.title = fmt::format("Stream {} moved {:.2f} Mbit/s, {:.0f} % less than stream {} ({:.2f})",
                          slow->port, slow->bps / 1e6, 100 * (1 - slow->bps / fast->bps),
                          fast->port, fast->bps / 1e6);
    f.detail = fmt::format("The {} streams, by client port, each from its own ledger: {}. ",
                           all.size(), each_stream_text(all, tcp));
    if (lost.apart) {
        f.detail += fmt::format(
            "The slowest stream's own counts show why: it lost {} {} where the others lost {} on "
            "average ({}){}.",
            format_count(lost.own), slow->ledger->unit, format_count(std::round(lost.others)),
            describe_loss(*slow->ledger),
            tcp ? ": TCP cut that connection's window more often than the others'" : "");
        f.next_step =
            "Run longer (TCP's share between its connections evens out over tens of seconds), "
            "or remove the loss the ledger places.";
    } else {
        f.detail += fmt::format(
            "The slowest stream's own counts do not explain it: it lost {} {} against {} on "
            "average for the others{}. {}No stage lost more of it than of the others, so what "
            "held it back was not located.",
            format_count(lost.own), slow->ledger->unit, format_count(std::round(lost.others)),
            tcp ? fmt::format(", and resent {} against {}", format_count(resent.own),
                              format_count(std::round(resent.others)))
                : std::string(),
            resent.apart ? "Its resends set it apart but show no cause by themselves: a resend "
                           "of what was not lost (reordering, a spurious timeout) is undone. "
                         : "");
        f.next_step =
            "Run longer, and with --repeat, to see whether the same stream stays behind; then "
            "look at each connection with ss -ti while it runs (reordering, DSACKs, its window).";
    }
    f.evidence = streams_evidence(all, *slow, *fast, tcp);
    out.push_back(std::move(f));
}

}  // namespace np::rules
