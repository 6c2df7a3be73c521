#include "analysis/explanation/latency.hpp"

#include <map>
#include <tuple>

namespace np {

const char* to_string(RttStage s) {
    switch (s) {
        case RttStage::pinger_queue:
            return "pinger_queue";
        case RttStage::path:
            return "path";
        case RttStage::responder_host:
            return "responder_host";
        case RttStage::responder_queue:
            return "responder_queue";
    }
    return "?";
}

int echoes_sent(const PhaseTrace& p) {
    int n = 0;
    for (const auto& e : p.echoes) n += e.at(EchoStamp::request_tx) ? 1 : 0;
    return n;
}

namespace {

using Key = std::tuple<int, uint16_t, uint16_t>;  // family, id, seq

// Whether any echo of the phase was stamped at `s`: a probe that stamps the driver handoff
// stamps every echo there, so one without it is not used beside the others.
bool stamps(const PhaseTrace& p, EchoStamp s) {
    for (const auto& e : p.echoes)
        if (e.at(s)) return true;
    return false;
}

}  // namespace

std::optional<RttSplit> split_round_trip(const PhaseTrace& pinger, const PhaseTrace& responder) {
    using S = EchoStamp;
    const bool pinger_xmit = stamps(pinger, S::request_xmit);
    const bool responder_xmit = stamps(responder, S::reply_xmit);
    std::map<Key, const EchoTrace*> answered;
    for (const auto& e : responder.echoes)
        if (e.at(S::request_rx) && e.at(S::reply_tx) && (!responder_xmit || e.at(S::reply_xmit)))
            answered[{e.family, e.id, e.seq}] = &e;
    RttSplit out;
    double sum[kRttStageCount] = {};
    for (const auto& e : pinger.echoes) {
        const auto round_trip = e.between(S::request_tx, S::reply_rx);
        if (!round_trip || (pinger_xmit && !e.at(S::request_xmit))) continue;
        const auto r = answered.find({e.family, e.id, e.seq});
        if (r == answered.end()) continue;
        const EchoTrace& a = *r->second;
        const S left = pinger_xmit ? S::request_xmit : S::request_tx;
        const S answer_left = responder_xmit ? S::reply_xmit : S::reply_tx;
        const int64_t away = *e.between(left, S::reply_rx);
        const int64_t answering = *a.between(S::request_rx, answer_left);
        sum[static_cast<size_t>(RttStage::path)] += double(away - answering);
        sum[static_cast<size_t>(RttStage::responder_host)] +=
            double(*a.between(S::request_rx, S::reply_tx));
        if (pinger_xmit)
            sum[static_cast<size_t>(RttStage::pinger_queue)] +=
                double(*e.between(S::request_tx, S::request_xmit));
        if (responder_xmit)
            sum[static_cast<size_t>(RttStage::responder_queue)] +=
                double(*a.between(S::reply_tx, S::reply_xmit));
        out.round_trip_us += double(*round_trip);
        ++out.echoes;
    }
    if (out.echoes == 0) return std::nullopt;
    const double n = out.echoes * 1000.0;  // ns summed to a mean in µs
    out.round_trip_us /= n;
    for (const auto s : kRttStages) {
        if ((s == RttStage::pinger_queue && !pinger_xmit) ||
            (s == RttStage::responder_queue && !responder_xmit))
            continue;
        out.stage_us[static_cast<size_t>(s)] = sum[static_cast<size_t>(s)] / n;
    }
    return out;
}

std::optional<PingedSplit> split_either_way(const PhaseTrace& first, const PhaseTrace& second) {
    const bool first_pinged = echoes_sent(first) >= echoes_sent(second);
    auto split = first_pinged ? split_round_trip(first, second) : split_round_trip(second, first);
    if (!split) return std::nullopt;
    return PingedSplit{first_pinged, *split};
}

}  // namespace np
