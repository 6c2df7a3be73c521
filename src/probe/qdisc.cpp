#include "src/probe/qdisc.hpp"
#include "common/fd.hpp"

#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

namespace np::probe {
namespace {

// The attributes of one netlink message or nested attribute, by type.
using Attrs = std::map<uint16_t, std::string_view>;

Attrs parse_attrs(const char* data, size_t len) {
    Attrs out;
    while (len >= sizeof(rtattr)) {
        const auto* a = reinterpret_cast<const rtattr*>(data);
        if (a->rta_len < sizeof(rtattr) || a->rta_len > len) break;
        out[a->rta_type & NLA_TYPE_MASK] =
            std::string_view(data + RTA_LENGTH(0), a->rta_len - RTA_LENGTH(0));
        const size_t step = RTA_ALIGN(a->rta_len);
        if (step >= len) break;
        data += step;
        len -= step;
    }
    return out;
}

template <typename T>
std::optional<T> attr(const Attrs& a, uint16_t type) {
    const auto it = a.find(type);
    if (it == a.end() || it->second.size() < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, it->second.data(), sizeof(T));
    return v;
}

// The rtnetlink socket every dump uses, opened at the first in the network namespace the probe
// counts in (it never leaves it) and kept for the process's life: a socket opened and closed for
// each sample is freed through an RCU grace period, and one every 100 ms cost a TCP flow over a
// veth pair 2-3 % of its rate on a 2-vCPU VM (docs/performance.md, "What a sample frees").
int route_socket() {
    static const Fd s(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    return s.get();
}

// Dumps the qdiscs (RTM_GETQDISC) or classes (RTM_GETTCLASS) of `ifindex`, calling `each` with
// the tcmsg and its attributes. False when the kernel did not answer.
bool dump(uint32_t ifindex, uint16_t type,
          const std::function<void(const tcmsg&, const Attrs&)>& each) {
    const int s = route_socket();
    if (s < 0) return false;
    // Each dump its own sequence number: what is left of one cut short is skipped.
    static uint32_t seq = 0;
    struct {
        nlmsghdr nh;
        tcmsg tc;
    } req{};
    req.nh.nlmsg_len = sizeof(req);
    req.nh.nlmsg_type = type;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = ++seq;
    req.tc.tcm_family = AF_UNSPEC;
    req.tc.tcm_ifindex = static_cast<int>(ifindex);
    if (send(s, &req, sizeof(req), 0) < 0) return false;
    std::vector<char> buf(65536);
    for (;;) {
        const ssize_t n = recv(s, buf.data(), buf.size(), 0);
        if (n <= 0) return false;
        size_t len = static_cast<size_t>(n);
        for (auto* nh = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(nh, len);
             nh = NLMSG_NEXT(nh, len)) {
            if (nh->nlmsg_seq != req.nh.nlmsg_seq) continue;
            if (nh->nlmsg_type == NLMSG_DONE) return true;
            if (nh->nlmsg_type == NLMSG_ERROR) return false;
            if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(tcmsg))) continue;
            const auto* tc = static_cast<const tcmsg*>(NLMSG_DATA(nh));
            if (static_cast<uint32_t>(tc->tcm_ifindex) != ifindex) continue;
            const char* attrs = reinterpret_cast<const char*>(tc) + NLMSG_ALIGN(sizeof(tcmsg));
            each(*tc, parse_attrs(attrs, nh->nlmsg_len - NLMSG_LENGTH(sizeof(tcmsg))));
        }
    }
}

std::string kind_of(const Attrs& a) {
    const auto it = a.find(TCA_KIND);
    if (it == a.end()) return {};
    std::string k(it->second);
    k.resize(std::strlen(k.c_str()));  // NUL-terminated in the attribute
    return k;
}

Attrs nested(const Attrs& a, uint16_t type) {
    const auto it = a.find(type);
    return it == a.end() ? Attrs{} : parse_attrs(it->second.data(), it->second.size());
}

// A rate in bytes/s: the 64-bit attribute when the kernel sent one (rates above 4 GB/s), else
// the ratespec's 32-bit field.
std::optional<uint64_t> rate_bps(const Attrs& options, uint16_t parms, uint16_t rate64,
                                 size_t ratespec_offset) {
    if (const auto r = attr<uint64_t>(options, rate64)) return *r * 8;
    const auto it = options.find(parms);
    if (it == options.end() || it->second.size() < ratespec_offset + sizeof(tc_ratespec))
        return std::nullopt;
    tc_ratespec spec{};
    std::memcpy(&spec, it->second.data() + ratespec_offset, sizeof(spec));
    return spec.rate ? std::optional<uint64_t>(uint64_t(spec.rate) * 8) : std::nullopt;
}

}  // namespace

QdiscState read_qdisc_state(uint32_t ifindex) {
    QdiscState q;
    dump(ifindex, RTM_GETQDISC, [&](const tcmsg& tc, const Attrs& a) {
        if (tc.tcm_parent != TC_H_ROOT) return;
        q.root_kind = kind_of(a);
        const Attrs stats = nested(a, TCA_STATS2);
        if (const auto queue = attr<gnet_stats_queue>(stats, TCA_STATS_QUEUE)) {
            q.counters["drops"] = queue->drops;
            q.counters["overlimits"] = queue->overlimits;
            q.counters["requeues"] = queue->requeues;
            q.queued_packets = queue->qlen;
            q.queued_bytes = queue->backlog;
        }
        if (q.root_kind == "tbf") {
            q.rate_bps = rate_bps(nested(a, TCA_OPTIONS), TCA_TBF_PARMS, TCA_TBF_RATE64,
                                  offsetof(tc_tbf_qopt, rate));
        }
    });
    if (q.root_kind == "htb") {
        // htb shapes in its classes: the top class's ceiling bounds everything below it.
        dump(ifindex, RTM_GETTCLASS, [&](const tcmsg& tc, const Attrs& a) {
            if (tc.tcm_parent != TC_H_ROOT || kind_of(a) != "htb") return;
            const Attrs options = nested(a, TCA_OPTIONS);
            const auto ceil = attr<uint64_t>(options, TCA_HTB_CEIL64);
            const auto r =
                ceil ? std::optional<uint64_t>(*ceil * 8)
                     : rate_bps(options, TCA_HTB_PARMS, TCA_HTB_CEIL64, offsetof(tc_htb_opt, ceil));
            if (r && (!q.rate_bps || *r > *q.rate_bps)) q.rate_bps = r;
        });
    }
    return q;
}

}  // namespace np::probe
