#include "src/probe/probe.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "analysis/error.hpp"
#include "analysis/trace.hpp"
#include "probe.skel.h"
#include "src/common/errors.hpp"
#include "src/probe/host_facts.hpp"
#include "src/probe/kernel_btf.hpp"
#include "src/probe/kernel_objects.hpp"
#include "src/probe/map_totals.hpp"

namespace np::probe {
namespace {

volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) {
    g_signal = sig;
}

// libbpf's warnings (a failed load, the verifier's verdict) are what a user needs to see;
// its debug chatter is not.
int libbpf_print(libbpf_print_level level, const char* format, va_list args) {
    if (level == LIBBPF_DEBUG) return 0;
    return std::vfprintf(stderr, format, args);
}

// SIGINT/SIGTERM/SIGHUP stay blocked except inside ppoll(), so a signal either arrives
// while waiting or is pending until the next wait: none is lost between check and wait.
sigset_t install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill us before we detach
    sigset_t block, previous;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
    sigprocmask(SIG_BLOCK, &block, &previous);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigdelset(&previous, sig);
    return previous;
}

void emit(const nlohmann::json& line) {
    const std::string s = line.dump() + "\n";
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
}

std::string utc_now_iso8601() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// Written to a temporary name and renamed, so a reader never sees half a trace.
void write_file(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) throw EnvironmentError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0)
        throw EnvironmentError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

ProgramCost program_cost(const bpf_program* prog) {
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    ProgramCost c{bpf_program__name(prog), 0, 0};
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
        c.run_cnt = info.run_cnt;
        c.run_time_ns = info.run_time_ns;
    }
    return c;
}

std::array<const bpf_program*, 4> all_programs(const probe_bpf* s) {
    return {s->progs.np_tc_ingress, s->progs.np_tc_egress, s->progs.np_tcp_retransmit,
            s->progs.np_kfree_skb};
}

uint32_t program_id(const bpf_program* prog) {
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    return bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0 ? info.id : 0;
}

void validate(const ProbeOptions& o) {
    if (o.iface.empty()) throw InputError("--iface", "is required");
    if (o.sample_interval_ms < 10 || o.sample_interval_ms > 60000)
        throw InputError("--interval-ms", "must be 10 .. 60000");
    if (o.duration_s < 0) throw InputError("--duration", "must not be negative");
    if (o.iperf_port == 0) throw InputError("--port", "must be 1 .. 65535");
}

// The running state: the phase being counted and everything the trace accumulates.
class Recorder {
  public:
    Recorder(const probe_bpf* skel, Naming naming, const std::string& iface)
        : skel_(skel), naming_(std::move(naming)), iface_(iface) {
        phase_maps_ = read_map_totals(skel_, true);
        last_sample_maps_ = read_map_totals(skel_, false);
        phase_counters_ = read_kernel_counters(iface_);
    }

    int64_t now_ms() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start_)
            .count();
    }

    void sample() {
        const MapTotals now = read_map_totals(skel_, false);
        TraceSample s;
        s.t_ms = now_ms();
        s.interval_ms = s.t_ms - last_sample_ms_;
        s.phase = phase_name_;
        fill_sample(s, now - last_sample_maps_);
        last_sample_maps_ = now;
        last_sample_ms_ = s.t_ms;
        nlohmann::json j = to_json(s);
        j["type"] = "sample";
        emit(j);
        samples_.push_back(std::move(s));
    }

    // Closes the current phase and starts `next` (none when stopping).
    void cut_phase(const std::optional<std::string>& next) {
        const MapTotals maps = read_map_totals(skel_, true);
        const KernelCounters counters = read_kernel_counters(iface_);
        PhaseTrace p;
        p.name = phase_name_;
        p.start_ms = phase_start_ms_;
        p.end_ms = now_ms();
        fill_phase(p, maps - phase_maps_, naming_);
        const KernelCounters d = counter_delta(phase_counters_, counters);
        p.nstat = d.nstat;
        p.ethtool_stats = d.ethtool_stats;
        p.softnet_dropped = d.softnet_dropped;
        nlohmann::json j = to_json(p);
        j["type"] = "phase";
        emit(j);
        phases_.push_back(std::move(p));
        if (next) {
            phase_name_ = *next;
            phase_start_ms_ = now_ms();
            phase_maps_ = maps;
            phase_counters_ = counters;
        }
    }

    std::vector<PhaseTrace> take_phases() { return std::move(phases_); }
    std::vector<TraceSample> take_samples() { return std::move(samples_); }

  private:
    const probe_bpf* skel_;
    Naming naming_;
    std::string iface_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::string phase_name_ = "default";
    int64_t phase_start_ms_ = 0;
    int64_t last_sample_ms_ = 0;
    MapTotals phase_maps_, last_sample_maps_;
    KernelCounters phase_counters_;
    std::vector<PhaseTrace> phases_;
    std::vector<TraceSample> samples_;
};

enum class Stop { none, command, stdin_eof, signal, duration };

// Handles the complete lines in `buffer`; returns Stop::command on `stop`.
Stop handle_commands(std::string& buffer, Recorder& rec) {
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.empty()) continue;
        if (line == "stop") return Stop::command;
        if (line.starts_with("phase ") && line.find(' ', 6) == std::string::npos &&
            line.size() > 6) {
            rec.cut_phase(line.substr(6));
            continue;
        }
        std::fprintf(stderr,
                     "np-probe: ignoring '%s': commands are 'phase NAME' (one word) and 'stop'\n",
                     line.c_str());
    }
    return Stop::none;
}

}  // namespace

int run_probe(const ProbeOptions& o) {
    validate(o);
    check_privileges();
    const uint32_t ifindex = iface_index(o.iface);
    const KernelBtf btf = read_kernel_btf();
    const uint64_t netns = own_netns_inode();
    libbpf_set_print(libbpf_print);
    const sigset_t wait_mask = install_signal_handlers();

    const RunTimeStats stats;
    if (!stats.enabled())
        std::fprintf(stderr,
                     "np-probe: BPF run-time statistics unavailable; probe_cost will be 0\n");
    ProbeSkeleton skel(
        {netns, ifindex, o.iperf_port, btf.kfree_skb_has_rx_sk, btf.retransmit_has_err});
    const ClsactQdisc qdisc(ifindex, o.iface);
    remove_stale_filters(ifindex);
    const TcFilter ingress(ifindex, BPF_TC_INGRESS, skel.get()->progs.np_tc_ingress);
    const TcFilter egress(ifindex, BPF_TC_EGRESS, skel.get()->progs.np_tc_egress);
    const TracingLink retransmit(skel.get()->progs.np_tcp_retransmit, "tp_btf/tcp_retransmit_skb");
    const TracingLink kfree(skel.get()->progs.np_kfree_skb, "tp_btf/kfree_skb");

    Trace trace;
    trace.node = o.node.empty() ? node_name() : o.node;
    trace.role = o.role;
    trace.iface = o.iface;
    trace.ifindex = ifindex;
    trace.netns_inode = netns;
    trace.kernel = kernel_release();
    trace.link = read_link_facts(o.iface);
    trace.iperf_port = o.iperf_port;
    trace.sample_interval_ms = o.sample_interval_ms;
    trace.started_at = utc_now_iso8601();

    Recorder rec(skel.get(), {o.iface, ifindex, &btf}, o.iface);
    nlohmann::json programs = nlohmann::json::array();
    for (const bpf_program* p : all_programs(skel.get()))
        programs.push_back({{"name", bpf_program__name(p)}, {"id", program_id(p)}});
    emit({{"type", "ready"},
          {"programs", programs},
          {"iface", o.iface},
          {"ifindex", ifindex},
          {"netns_inode", netns},
          {"clsact_created", qdisc.owned()}});
    std::fprintf(stderr,
                 "np-probe: counting on %s (ifindex %u); stdin commands: 'phase NAME', 'stop'\n",
                 o.iface.c_str(), ifindex);

    const int64_t end_ms = o.duration_s > 0 ? static_cast<int64_t>(o.duration_s * 1000) : -1;
    int64_t next_sample_ms = o.sample_interval_ms;
    std::string input;
    bool stdin_open = fcntl(STDIN_FILENO, F_GETFD) != -1;
    Stop stop = Stop::none;
    while (stop == Stop::none) {
        int64_t wait_ms = next_sample_ms - rec.now_ms();
        if (end_ms >= 0) wait_ms = std::min(wait_ms, end_ms - rec.now_ms());
        wait_ms = std::max<int64_t>(wait_ms, 0);
        const timespec timeout{wait_ms / 1000, (wait_ms % 1000) * 1000000};
        pollfd pfd{stdin_open ? STDIN_FILENO : -1, POLLIN, 0};
        const int ready = ppoll(&pfd, 1, &timeout, &wait_mask);
        if (g_signal) {
            stop = Stop::signal;
            break;
        }
        if (ready > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR))) {
            char buf[4096];
            const ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
            if (n > 0) {
                input.append(buf, static_cast<size_t>(n));
                stop = handle_commands(input, rec);
            } else if (n == 0 || errno != EINTR) {
                stop = Stop::stdin_eof;  // the SSH channel or the parent went away
            }
        }
        if (rec.now_ms() >= next_sample_ms) {
            rec.sample();
            next_sample_ms += o.sample_interval_ms;
            if (next_sample_ms <= rec.now_ms())
                next_sample_ms = rec.now_ms() + o.sample_interval_ms;
        }
        if (stop == Stop::none && end_ms >= 0 && rec.now_ms() >= end_ms) stop = Stop::duration;
    }

    rec.sample();
    rec.cut_phase(std::nullopt);
    trace.duration_ms = rec.now_ms();
    trace.phases = rec.take_phases();
    trace.samples = rec.take_samples();
    for (const bpf_program* p : all_programs(skel.get()))
        trace.probe_cost.push_back(program_cost(p));

    const nlohmann::json doc = to_json(trace);
    if (!o.out_path.empty()) write_file(o.out_path, doc.dump(2) + "\n");
    nlohmann::json line = doc;
    line["type"] = "trace";
    emit(line);
    const char* why = stop == Stop::command     ? "stop command"
                      : stop == Stop::stdin_eof ? "stdin closed"
                      : stop == Stop::duration  ? "duration reached"
                                                : strsignal(g_signal);
    std::fprintf(stderr, "np-probe: stopped (%s); detaching from %s\n", why, o.iface.c_str());
    return 0;
}

}  // namespace np::probe
