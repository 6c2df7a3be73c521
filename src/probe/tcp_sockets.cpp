#include "src/probe/tcp_sockets.hpp"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "probe.h"

namespace np::probe {
namespace {

// Every state but LISTEN: a listening socket has no connection to account for.
constexpr uint32_t kConnectedStates = ~(1U << 10);  // TCP_LISTEN is 10

TcpAccount account_of(const inet_diag_msg& m, const tcp_info& i) {
    TcpAccount a;
    a.local_port = ntohs(m.id.idiag_sport);
    a.remote_port = ntohs(m.id.idiag_dport);
    a.bytes_acked = static_cast<int64_t>(i.tcpi_bytes_acked);
    a.bytes_received = static_cast<int64_t>(i.tcpi_bytes_received);
    a.busy_us = static_cast<int64_t>(i.tcpi_busy_time);
    a.rwnd_limited_us = static_cast<int64_t>(i.tcpi_rwnd_limited);
    a.sndbuf_limited_us = static_cast<int64_t>(i.tcpi_sndbuf_limited);
    a.snd_cwnd = i.tcpi_snd_cwnd;
    a.snd_mss = i.tcpi_snd_mss;
    a.rtt_us = i.tcpi_rtt;
    a.min_rtt_us = i.tcpi_min_rtt;
    a.delivery_rate_bps = static_cast<int64_t>(i.tcpi_delivery_rate) * 8;
    a.total_retrans = i.tcpi_total_retrans;
    a.snd_wnd = i.tcpi_snd_wnd;
    // ~0: no cap. The kernel keeps it in bytes per second (of payload: TCP paces each segment by
    // its data length).
    if (i.tcpi_max_pacing_rate != ~uint64_t{0})
        a.max_pacing_rate_bps = static_cast<int64_t>(i.tcpi_max_pacing_rate) * 8;
    return a;
}

}  // namespace

std::vector<TcpSocketReading> parse_tcp_diag(const uint8_t* data, size_t len, uint16_t port,
                                             bool& done) {
    std::vector<TcpSocketReading> out;
    size_t at = 0;
    while (at + sizeof(nlmsghdr) <= len) {
        nlmsghdr h;
        std::memcpy(&h, data + at, sizeof h);
        if (h.nlmsg_len < sizeof(nlmsghdr) || at + h.nlmsg_len > len) break;  // truncated
        const size_t next = at + NLMSG_ALIGN(h.nlmsg_len);
        if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR) {
            done = true;
            break;
        }
        const size_t body = at + NLMSG_HDRLEN;
        if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
            body + sizeof(inet_diag_msg) <= at + h.nlmsg_len) {
            inet_diag_msg m;
            std::memcpy(&m, data + body, sizeof m);
            if (ntohs(m.id.idiag_sport) == port || ntohs(m.id.idiag_dport) == port) {
                // Its attributes: INET_DIAG_INFO holds tcp_info, as long as this kernel's (an
                // older kernel's is shorter: the fields it lacks stay zero).
                size_t a = body + NLMSG_ALIGN(sizeof(inet_diag_msg));
                const size_t end = at + h.nlmsg_len;
                while (a + sizeof(rtattr) <= end) {
                    rtattr r;
                    std::memcpy(&r, data + a, sizeof r);
                    if (r.rta_len < sizeof(rtattr) || a + r.rta_len > end) break;
                    if (r.rta_type == INET_DIAG_INFO) {
                        tcp_info info{};
                        const size_t n = std::min<size_t>(r.rta_len - RTA_LENGTH(0), sizeof info);
                        std::memcpy(&info, data + a + RTA_LENGTH(0), n);
                        const uint64_t cookie =
                            (uint64_t(m.id.idiag_cookie[1]) << 32) | m.id.idiag_cookie[0];
                        out.push_back({cookie, account_of(m, info), m.idiag_family, m.id});
                        break;
                    }
                    a += RTA_ALIGN(r.rta_len);
                }
            }
        }
        at = next;
    }
    return out;
}

TcpSockets::TcpSockets(uint16_t port) : port_(port) {
    fd_ = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
}

TcpSockets::~TcpSockets() {
    if (fd_ >= 0) close(fd_);
}

bool TcpSockets::ask(uint8_t family, uint16_t flags, const inet_diag_sockid* id) {
    struct {
        nlmsghdr h;
        inet_diag_req_v2 r;
    } req{};
    req.h.nlmsg_len = sizeof req;
    req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.h.nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | flags);
    req.r.sdiag_family = family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = kConnectedStates;
    req.r.idiag_ext = 1U << (INET_DIAG_INFO - 1);
    if (id) req.r.id = *id;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    return sendto(fd_, &req, sizeof req, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) >=
           0;
}

void TcpSockets::dump(int family, std::map<uint64_t, TcpSocketReading>& into) {
    if (!ask(uint8_t(family), NLM_F_DUMP, nullptr)) return;
    static uint8_t buf[32768];
    bool done = false;
    while (!done) {
        const ssize_t n = recv(fd_, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        for (auto& s : parse_tcp_diag(buf, size_t(n), port_, done)) into[s.cookie] = s;
    }
}

void TcpSockets::lookup(const Seen& seen, std::map<uint64_t, TcpSocketReading>& into) {
    if (!ask(seen.family, 0, &seen.id))
        return;  // no dump: the one socket with this id (and cookie)
    // The kernel answers within the send: one message, or an error when the socket is gone.
    static uint8_t buf[8192];
    ssize_t n;
    do {
        n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return;
    bool done = false;
    for (auto& s : parse_tcp_diag(buf, size_t(n), port_, done)) into[s.cookie] = s;
}

void ClosedStreams::freed(const std::vector<ClaimedStream>& streams) {
    for (const ClaimedStream& c : streams)
        if (c.proto == NP_PROTO_TCP) ports_.erase(c.port);
}

std::vector<uint16_t> ClosedStreams::unfound(const std::vector<ClaimedStream>& claimed,
                                             const std::set<uint16_t>& known) const {
    std::vector<uint16_t> out;
    for (const ClaimedStream& c : claimed)
        if (c.proto == NP_PROTO_TCP && c.port != 0 && !known.contains(c.port) &&
            !ports_.contains(c.port))
            out.push_back(c.port);
    return out;
}

uint16_t TcpSockets::stream_port(const TcpAccount& a) const {
    return a.local_port == port_ ? a.remote_port : a.local_port;
}

void TcpSockets::read(int64_t now_ms, bool walk, const StreamNews& news) {
    if (fd_ < 0) return;
    // The TCP streams the tc programs named whose socket (by its port that is not the iperf
    // port) has not been found.
    std::set<uint16_t> known;
    for (const auto& [cookie, s] : seen_) known.insert(stream_port(s.last));
    const std::vector<uint16_t> unfound = closed_.unfound(news.streams, known);
    std::map<uint64_t, TcpSocketReading> now;
    if (schedule_.next(walk, news, unfound, now_ms)) {
        dump(AF_INET, now);
        dump(AF_INET6, now);
    } else {
        for (const auto& [cookie, s] : seen_)
            if (s.open) lookup(s, now);
    }
    for (auto& [cookie, s] : seen_) s.open = now.count(cookie) > 0;
    for (auto& [cookie, r] : now) {
        auto [it, fresh] = seen_.try_emplace(cookie);
        it->second.last = r.account;
        it->second.open = true;
        it->second.family = r.family;
        it->second.id = r.id;
        if (fresh) {  // opened in this phase: from zero
            it->second.first.local_port = r.account.local_port;
            it->second.first.remote_port = r.account.remote_port;
        }
    }
}

std::optional<TcpAccount> TcpSockets::cut(const std::vector<ClaimedStream>& freed) {
    const auto moved = [](const Seen& s) {
        return (s.last.bytes_acked - s.first.bytes_acked) +
               (s.last.bytes_received - s.first.bytes_received);
    };
    const Seen* most = nullptr;
    for (const auto& [cookie, s] : seen_)
        if (moved(s) > 0 && (!most || moved(s) > moved(*most))) most = &s;
    std::optional<TcpAccount> out;
    if (most) out = most->last;
    // The next phase counts from here; a closed connection is done. Its stream is not looked
    // for again unless this cut freed its slot too (a connection that sent its last packet in
    // an earlier phase and left the tables in this one).
    for (auto it = seen_.begin(); it != seen_.end();) {
        if (!it->second.open) {
            closed_.closed(stream_port(it->second.last));
            it = seen_.erase(it);
        } else {
            it->second.first = it->second.last;
            ++it;
        }
    }
    closed_.freed(freed);
    return out;
}

}  // namespace np::probe
