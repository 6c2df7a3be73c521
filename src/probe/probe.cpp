#include "src/probe/probe.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <net/if.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/probe_protocol.hpp"
#include "common/trace.hpp"
#include "probe.skel.h"
#include "probe_tc.skel.h"
#include "src/probe/capabilities.hpp"
#include "src/probe/control.hpp"
#include "src/probe/cpu_account.hpp"
#include "src/probe/host_facts.hpp"
#include "src/probe/kernel_btf.hpp"
#include "src/probe/kernel_objects.hpp"
#include "src/probe/kernel_symbols.hpp"
#include "src/probe/map_totals.hpp"
#include "src/probe/qdisc.hpp"
#include "src/probe/tcp_sockets.hpp"
#include "src/probe/tiers.hpp"
#include "src/probe/tool_processes.hpp"

namespace np::probe {
namespace {

namespace proto = probe_protocol;

volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) {
    g_signal = sig;
}

// libbpf's warnings (a failed load, the verifier's verdict) are what a user needs to see; its
// debug chatter is not. While a tier is being attached they are held: a tier that loads is
// quiet, and one that falls to the next keeps only its first line (the program and errno).
std::optional<std::string> g_held_libbpf;

int libbpf_print(libbpf_print_level level, const char* format, va_list args) {
    if (level == LIBBPF_DEBUG) return 0;
    if (!g_held_libbpf) return std::vfprintf(stderr, format, args);
    char line[1024];
    const int n = std::vsnprintf(line, sizeof line, format, args);
    g_held_libbpf->append(line);
    return n;
}

// The stop signals stay blocked except inside ppoll(), so a signal either arrives while
// waiting or is pending until the next wait: none is lost between check and wait. SIGHUP is
// left alone when it was ignored at start: under nohup a hangup must not end the probe.
sigset_t install_signal_handlers() {
    std::vector<int> stops{SIGINT, SIGTERM};
    struct sigaction old {};
    if (sigaction(SIGHUP, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) stops.push_back(SIGHUP);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : stops) sigaction(sig, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill us before we detach
    sigset_t block, previous;
    sigemptyset(&block);
    for (int sig : stops) sigaddset(&block, sig);
    sigprocmask(SIG_BLOCK, &block, &previous);
    for (int sig : stops) sigdelset(&previous, sig);
    return previous;
}

void emit(const nlohmann::json& line) {
    const std::string s = line.dump() + "\n";
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
}

nlohmann::json message(std::string_view type, nlohmann::json body = nlohmann::json::object()) {
    body[std::string(proto::kTypeKey)] = type;
    return body;
}

std::string utc_now_iso8601() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// A program's runs and time when the probe held the run-time statistics on (`timed`); the
// kernel's counts otherwise hold only what other holders of the statistics switched on, so
// they are left out.
ProgramCost program_cost(const bpf_program* prog, bool timed) {
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    ProgramCost c{bpf_program__name(prog), 0, 0, 0, timed};
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
        if (timed) {
            c.run_cnt = info.run_cnt;
            c.run_time_ns = info.run_time_ns;
        }
        c.recursion_misses = info.recursion_misses;
    }
    return c;
}

// What one tier loads and attaches on the iface; released in reverse order on scope exit (also
// when a later step of the same tier fails, so the next tier down starts clean).
class Attached {
  public:
    Attached(ProbeTier tier, const ProbeOptions& o, uint32_t ifindex, uint64_t netns,
             const std::optional<KernelBtf>& btf, const KernelTick& tick) {
        if (tier == ProbeTier::kernel_counters) return;
        const bpf_program *ingress = nullptr, *egress = nullptr;
        if (tier == ProbeTier::tc_counters) {
            tc_ = std::make_unique<TcSkeleton>(o.iperf_port);
            ingress = tc_->get()->progs.np_tc_ingress;
            egress = tc_->get()->progs.np_tc_egress;
        } else {
            const bool sites = tier == ProbeTier::drops_without_reasons;
            skel_ = std::make_unique<ProbeSkeleton>(
                ProbeConfig{netns, ifindex, o.iperf_port, btf && btf->kfree_skb_has_rx_sk && !sites,
                            btf && btf->retransmit_has_err, sites, o.cpu_account, tick});
            ingress = skel_->get()->progs.np_tc_ingress;
            egress = skel_->get()->progs.np_tc_egress;
        }
        qdisc_.emplace(ifindex, o.iface);
        remove_stale_filters(ifindex);
        ingress_.emplace(ifindex, BPF_TC_INGRESS, ingress);
        egress_.emplace(ifindex, BPF_TC_EGRESS, egress);
        if (!skel_) return;
        probe_bpf* k = skel_->get();
        retransmit_.emplace(k->progs.np_tcp_retransmit, "tp_btf/tcp_retransmit_skb");
        kfree_.emplace(tier == ProbeTier::drops_without_reasons ? k->progs.np_kfree_skb_site
                                                                : k->progs.np_kfree_skb,
                       "tp_btf/kfree_skb");
        xmit_.emplace(k->progs.np_dev_xmit, "tp_btf/net_dev_start_xmit");
        // The flow's 1 ms bins: where they cannot be mapped there are none, and nothing else
        // is lost.
        try {
            bins_memory_.emplace(bpf_map__fd(k->maps.bins), sizeof(np_bin) * NP_BINS);
        } catch (const EnvironmentError&) {
            bins_memory_.reset();
        }
        // The CPU account is sampled at the kernel's tick where it is known, else (or where its
        // tracepoint will not attach) at a timer of the probe's own on every CPU: without either
        // there is none.
        if (!o.cpu_account) return;
        if (tick.known()) {
            try {
                account_tick_.emplace(k->progs.np_account_on_tick, "tp_btf/hrtimer_expire_entry");
            } catch (const EnvironmentError&) {
                account_tick_.reset();
            }
        }
        if (!account_tick_) {
            try {
                account_timer_.emplace(k->progs.np_account_tick, NP_ACCOUNT_NS,
                                       "the CPU account's timer");
            } catch (const EnvironmentError&) {
                return;
            }
        }
        irq_entry_.emplace(k->progs.np_irq_entry, "tp_btf/irq_handler_entry");
        irq_exit_.emplace(k->progs.np_irq_exit, "tp_btf/irq_handler_exit");
    }

    ProbeMaps maps() const {
        ProbeMaps m;
        if (tc_) {
            m.traffic = bpf_map__fd(tc_->get()->maps.traffic);
            m.streams = bpf_map__fd(tc_->get()->maps.streams);
            // Global data is mapped where the kernel allows mmap of arrays (5.5); else none.
            if (tc_->get()->bss) {
                m.streams_claimed = &tc_->get()->bss->streams_claimed;
                m.streams_unslotted = &tc_->get()->bss->streams_unslotted;
            }
            m.echoes = bpf_map__fd(tc_->get()->maps.echoes);
        }
        if (!skel_) return m;
        const probe_bpf* k = skel_->get();
        m.traffic = bpf_map__fd(k->maps.traffic);
        m.streams = bpf_map__fd(k->maps.streams);
        if (k->bss) {
            m.streams_claimed = &k->bss->streams_claimed;
            m.streams_unslotted = &k->bss->streams_unslotted;
        }
        m.stream_drops = bpf_map__fd(k->maps.stream_drops);
        m.echoes = bpf_map__fd(k->maps.echoes);
        m.retransmits = bpf_map__fd(k->maps.retransmits);
        m.drop_count = bpf_map__fd(k->maps.drop_count);
        // By site: every drop at the drops-without-reasons tier, the reasonless ones at full.
        m.drop_sites = bpf_map__fd(k->maps.drop_sites);
        if (bins_memory_) {
            m.bins = static_cast<np_bin*>(bins_memory_->data());
            m.bin_open = bpf_map__fd(k->maps.bin_open);
            m.bins_start_ns = &k->bss->bins_start_ns;
        }
        if (irq_entry_) {
            m.cpu_time = bpf_map__fd(k->maps.cpu_time);
            m.cpu_time_at_kernel_tick = account_tick_.has_value();
            m.softirq_fns = bpf_map__fd(k->maps.softirq_fns);
            m.tools = bpf_map__fd(k->maps.tools);
            m.nic_irqs = bpf_map__fd(k->maps.nic_irqs);
        }
        if (!kfree_sites()) m.drops = bpf_map__fd(k->maps.drops);
        return m;
    }

    // The programs loaded, in attach order.
    std::vector<const bpf_program*> programs() const {
        if (tc_) return {tc_->get()->progs.np_tc_ingress, tc_->get()->progs.np_tc_egress};
        if (!skel_) return {};
        const probe_bpf* k = skel_->get();
        std::vector<const bpf_program*> out = {
            k->progs.np_tc_ingress, k->progs.np_tc_egress, k->progs.np_dev_xmit,
            k->progs.np_tcp_retransmit,
            kfree_sites() ? k->progs.np_kfree_skb_site : k->progs.np_kfree_skb};
        if (account_tick_) out.push_back(k->progs.np_account_on_tick);
        if (account_timer_) out.push_back(k->progs.np_account_tick);
        if (irq_entry_) out.insert(out.end(), {k->progs.np_irq_entry, k->progs.np_irq_exit});
        return out;
    }

    bool clsact_created() const { return qdisc_ && qdisc_->owned(); }

  private:
    bool kfree_sites() const {
        return skel_ && bpf_program__autoload(skel_->get()->progs.np_kfree_skb_site);
    }

    std::unique_ptr<ProbeSkeleton> skel_;
    std::unique_ptr<TcSkeleton> tc_;
    std::optional<ClsactQdisc> qdisc_;
    std::optional<TcFilter> ingress_, egress_;
    std::optional<TracingLink> retransmit_, kfree_, xmit_;
    std::optional<MappedMap> bins_memory_;
    // The CPU account: at the kernel's tick or the probe's own timer, and the NIC's IRQs
    // (bpf/cpu_account.h).
    std::optional<TracingLink> account_tick_;
    std::optional<CpuTimers> account_timer_;
    std::optional<TracingLink> irq_entry_, irq_exit_;
};

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
    if (o.exit_with_pid < 0) throw InputError("--exit-with", "must be a process ID");
    for (const auto& [option, value] :
         {std::pair{"--max-tier", &o.max_tier}, std::pair{"--require-tier", &o.require_tier}}) {
        if (!value->empty() && !parse_tier(*value))
            throw InputError(option, "'" + *value + "' is not a tier: " + std::string(kTierNames));
    }
    if (o.background && o.out_path.empty())
        throw InputError("--background",
                         "needs --out: a probe in the background writes its trace only there");
}

// A process that may exit at any time, watched with a pidfd (Linux >= 5.3): poll says when.
class WatchedProcess {
  public:
    explicit WatchedProcess(long pid) {
        if (pid <= 0) return;
        fd_ = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
        if (fd_ < 0) {
            throw InputError("--exit-with",
                             fmt::format("no process {} to watch: {}", pid, std::strerror(errno)));
        }
    }
    ~WatchedProcess() {
        if (fd_ >= 0) close(fd_);
    }
    WatchedProcess(const WatchedProcess&) = delete;
    WatchedProcess& operator=(const WatchedProcess&) = delete;
    int fd() const { return fd_; }

  private:
    int fd_ = -1;
};

// The counting process's PID in a file, removed on exit if it is still ours.
class PidFile {
  public:
    explicit PidFile(std::string path) : path_(std::move(path)) {
        if (!path_.empty()) write_file_atomically(path_, fmt::format("{}\n", getpid()), 0644);
    }
    ~PidFile() {
        if (path_.empty()) return;
        char buf[32] = {};
        FILE* f = std::fopen(path_.c_str(), "r");
        if (!f) return;
        const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
        std::fclose(f);
        if (std::string(buf, n) == fmt::format("{}\n", getpid())) std::remove(path_.c_str());
    }
    PidFile(const PidFile&) = delete;
    PidFile& operator=(const PidFile&) = delete;

  private:
    std::string path_;
};

// What stdin is to the probe (see probe.hpp).
enum class StdinUse {
    ignored,      // /dev/null, a file, --background
    commands,     // a pipe or socket alongside another way to stop: EOF just ends the reading
    controlling,  // a pipe or socket and nothing else to stop the probe: EOF stops it
    terminal,     // commands typed while in the foreground; Ctrl-D stops
};

StdinUse stdin_use(const ProbeOptions& o) {
    if (o.background) return StdinUse::ignored;
    struct stat st {};
    if (fstat(STDIN_FILENO, &st) != 0) return StdinUse::ignored;
    if (isatty(STDIN_FILENO)) return StdinUse::terminal;
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
        const bool other_stop = o.duration_s > 0 || !o.control_path.empty() || o.exit_with_pid > 0;
        return other_stop ? StdinUse::commands : StdinUse::controlling;
    }
    return StdinUse::ignored;
}

// A background job reading its terminal would be stopped by SIGTTIN: read only in front.
bool may_read_stdin(StdinUse use) {
    if (use == StdinUse::ignored) return false;
    if (use != StdinUse::terminal) return true;
    return tcgetpgrp(STDIN_FILENO) == getpgrp();
}

// The running state: the phase being counted and everything the trace accumulates.
class Recorder {
  public:
    Recorder(ProbeMaps maps, Naming naming, const std::string& iface, ToolProcesses tools,
             uint16_t port)
        : maps_(maps),
          naming_(std::move(naming)),
          iface_(iface),
          tools_(std::move(tools)),
          tcp_(port) {
        mark_nic_irqs(maps_.nic_irqs, nic_irq_numbers(iface_));
        if (maps_.softirq_fns >= 0 &&
            !(naming_.symbols && mark_softirq_functions(maps_.softirq_fns, *naming_.symbols)))
            std::fprintf(stderr,
                         "np-probe: /proc/kallsyms shows no softirq functions: the CPU account "
                         "finds no softirq time\n");
        phase_maps_ = read_map_totals(maps_, true);
        last_sample_maps_ = read_map_totals(maps_, false);
        start_bins(maps_);
        phase_counters_ = read_kernel_counters(iface_);
        last_sample_dev_ = phase_counters_.dev_stats;
    }

    int64_t now_ms() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start_)
            .count();
    }

    void sample() {
        const MapTotals now = read_map_totals(maps_, false);
        TraceSample s;
        s.t_ms = now_ms();
        s.interval_ms = s.t_ms - last_sample_ms_;
        s.phase = phase_name_;
        const MapTotals delta = now - last_sample_maps_;
        fill_sample(s, delta);
        last_sample_maps_ = now;
        bool iface_moved = false;
        if (!measures(naming_.tier).flows) {
            // No tc hooks: the iface's own counters give the rate (frames plus the 24 bytes of
            // preamble, FCS and gap each; short frames' padding is not counted).
            auto dev = read_dev_stats(iface_);
            const auto delta = [&](const char* k) {
                const int64_t d = dev[k] - last_sample_dev_[k];
                return d > 0 ? static_cast<uint64_t>(d) : uint64_t{0};
            };
            s.tx_wire_packets = delta("tx_packets");
            s.rx_wire_packets = delta("rx_packets");
            s.tx_wire_bytes = delta("tx_bytes") + 24 * s.tx_wire_packets;
            s.rx_wire_bytes = delta("rx_bytes") + 24 * s.rx_wire_packets;
            iface_moved = s.tx_wire_packets + s.rx_wire_packets > 0;
            last_sample_dev_ = std::move(dev);
        }
        last_sample_ms_ = s.t_ms;
        sample_backlog();
        const StreamNews news = stream_news(iface_moved);
        tools_.watch(s.t_ms, news);
        mark_tools(maps_.tools, tools_.pids());
        tcp_.read(s.t_ms, false, news);
        emit(message(proto::kMessageSample, to_json(s)));
        samples_.push_back(std::move(s));
    }

    // What the tc programs said since the last sample (at the kernel-counters tier, whether the
    // iface moved): the streams map is read again only when the count of slots claimed grew, or
    // a cut freed some.
    StreamNews stream_news(bool iface_moved) {
        if (!maps_.streams_claimed || !maps_.streams_unslotted || maps_.streams < 0)
            return {false, {}, iface_moved};
        const uint64_t claimed = *maps_.streams_claimed;
        if (claimed != streams_claimed_) {
            streams_claimed_ = claimed;
            news_.streams = claimed_streams(maps_.streams);
        }
        news_.unnamed = *maps_.streams_unslotted != 0;
        if (news_.unnamed) *maps_.streams_unslotted = 0;
        return news_;
    }

    // Closes the current phase and starts `next` (none when stopping); returns the closed
    // phase as its message.
    nlohmann::json cut_phase(const std::optional<std::string>& next) {
        // What the queue holds just before the counters are read: once a test is over it only
        // drains, so this bounds what the egress hook counted that has not left the NIC yet.
        const int64_t queued = read_qdisc_state(naming_.ifindex).queued_packets;
        MapTotals maps = read_map_totals(maps_, true);
        const KernelCounters counters = read_kernel_counters(iface_);
        PhaseTrace p;
        p.name = phase_name_;
        p.start_ms = phase_start_ms_;
        p.end_ms = now_ms();
        const MapTotals delta = maps - phase_maps_;
        fill_phase(p, delta, naming_);
        const std::vector<ClaimedStream> freed = prune_idle_streams(maps_, delta, maps);
        if (!freed.empty()) streams_claimed_.reset();  // the next sample reads the map again
        p.echoes = take_echoes(maps_.echoes);
        p.bins = take_bins(maps_, p.duration_ms());
        const KernelCounters d = counter_delta(phase_counters_, counters);
        p.nstat = d.nstat;
        p.ethtool_stats = d.ethtool_stats;
        p.softnet_dropped = d.softnet_dropped;
        p.qdisc_stats = d.qdisc;
        p.cpus = d.cpus;
        add_cpu_accounts(p.cpus, delta.cpu_time, maps_.cpu_time_at_kernel_tick);
        p.dev_stats = d.dev_stats;
        p.processes = tools_.cut(p.end_ms);
        mark_tools(maps_.tools, tools_.pids());
        tcp_.read(now_ms(), true, StreamNews{});
        p.tcp = tcp_.cut(freed);
        // Still in the queue when the phase was cut: counted at the egress hook, not yet sent.
        p.qdisc_stats["queued_at_end"] = std::max(queued, counters.qdisc_queued);
        if (backlog_.samples > 0) {
            p.qdisc_stats["backlog_samples"] = backlog_.samples;
            p.qdisc_stats["backlog_nonempty_samples"] = backlog_.nonempty;
            p.qdisc_stats["backlog_max_packets"] = backlog_.max_packets;
            p.qdisc_stats["backlog_max_bytes"] = backlog_.max_bytes;
            p.qdisc_stats["backlog_bytes_sum"] = backlog_.bytes_sum;
        }
        backlog_ = {};
        nlohmann::json m = message(proto::kMessagePhase, to_json(p));
        emit(m);
        phases_.push_back(std::move(p));
        if (next) {
            phase_name_ = *next;
            phase_start_ms_ = now_ms();
            phase_maps_ = maps;
            phase_counters_ = counters;
            start_bins(maps_);
        }
        return m;
    }

    nlohmann::json status() const {
        nlohmann::json last = nullptr;
        if (!samples_.empty()) last = to_json(samples_.back());
        return message(proto::kMessageStatus,
                       {{"phase", phase_name_}, {"t_ms", now_ms()}, {"last_sample", last}});
    }

    std::vector<PhaseTrace> take_phases() { return std::move(phases_); }
    std::vector<TraceSample> take_samples() { return std::move(samples_); }

  private:
    // The root qdisc's queue at this sample, into the phase's account.
    void sample_backlog() {
        const QdiscState q = read_qdisc_state(naming_.ifindex);
        if (q.root_kind.empty()) return;  // the kernel did not answer: nothing to say
        ++backlog_.samples;
        if (q.queued_packets > 0) ++backlog_.nonempty;
        backlog_.max_packets = std::max(backlog_.max_packets, q.queued_packets);
        backlog_.max_bytes = std::max(backlog_.max_bytes, q.queued_bytes);
        backlog_.bytes_sum += q.queued_bytes;
    }

    ProbeMaps maps_;
    Naming naming_;
    std::string iface_;
    ToolProcesses tools_;
    std::optional<uint64_t> streams_claimed_;  // at the last read of the streams map
    StreamNews news_{true, {}, false};
    TcpSockets tcp_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::string phase_name_{proto::kFirstPhase};
    int64_t phase_start_ms_ = 0;
    int64_t last_sample_ms_ = 0;
    MapTotals phase_maps_, last_sample_maps_;
    KernelCounters phase_counters_;
    std::map<std::string, int64_t> last_sample_dev_;
    std::vector<PhaseTrace> phases_;
    std::vector<TraceSample> samples_;
    // The sender's queue over the phase, not only at its end: at every sample, whether it held
    // packets and how many (a gauge: what fills and drains between two samples is not seen).
    struct {
        int64_t samples = 0, nonempty = 0, max_packets = 0, max_bytes = 0, bytes_sum = 0;
    } backlog_;
};

enum class Stop { none, command, stdin_eof, signal, duration, watched_exit, iface_gone };

const char* describe(Stop s) {
    switch (s) {
        case Stop::command:
            return "stop command";
        case Stop::stdin_eof:
            return "stdin closed";
        case Stop::duration:
            return "duration reached";
        case Stop::watched_exit:
            return "the --exit-with process ended";
        case Stop::iface_gone:
            return "the interface is gone";
        case Stop::signal:
            return strsignal(g_signal);
        case Stop::none:
            break;
    }
    return "";
}

// One command line (stdin or control socket): cuts a phase, reports status or asks to stop.
// Returns the answer for the control socket.
nlohmann::json handle_command(std::string line, Recorder& rec, Stop& stop) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line == proto::kCommandStop) {
        stop = Stop::command;
        return nullptr;  // answered with the trace once it is written
    }
    if (line == proto::kCommandStatus) return rec.status();
    const std::string phase_prefix = std::string(proto::kCommandPhase) + " ";
    if (line.starts_with(phase_prefix) && line.size() > phase_prefix.size() &&
        line.find(' ', phase_prefix.size()) == std::string::npos) {
        return rec.cut_phase(line.substr(phase_prefix.size()));
    }
    const std::string why = fmt::format(
        "ignoring '{}': commands are 'phase NAME' (one word), 'status' and 'stop'", line);
    std::fprintf(stderr, "np-probe: %s\n", why.c_str());
    return message(proto::kMessageError, {{"message", why}});
}

// --background: the parent returns once the child counts (printing its "ready" line) or has
// failed (with its exit status; the child printed why on stderr before detaching). The child
// goes on in its own session. Returns in the child only; the parent exits.
class Detacher {
  public:
    explicit Detacher(bool background) {
        if (!background) return;
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0)
            throw EnvironmentError(fmt::format("--background: pipe: {}", std::strerror(errno)));
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid < 0)
            throw EnvironmentError(fmt::format("--background: fork: {}", std::strerror(errno)));
        if (pid > 0) {
            close(fds[1]);
            std::string ready;
            char buf[4096];
            ssize_t n;
            while ((n = read(fds[0], buf, sizeof(buf))) != 0) {
                if (n < 0 && errno == EINTR) continue;
                if (n < 0) break;
                ready.append(buf, static_cast<size_t>(n));
            }
            if (!ready.empty()) {
                std::fwrite(ready.data(), 1, ready.size(), stdout);
                std::fflush(stdout);
                _exit(0);
            }
            int status = 0;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 3);
        }
        close(fds[0]);
        ready_fd_ = fds[1];
        setsid();  // out of the caller's session: its Ctrl-C and hangup are not ours
    }
    ~Detacher() {
        if (ready_fd_ >= 0) close(ready_fd_);
    }
    Detacher(const Detacher&) = delete;
    Detacher& operator=(const Detacher&) = delete;

    // Counting has started: hand the ready line to the parent and let go of its terminal.
    void ready(const nlohmann::json& line) {
        if (ready_fd_ < 0) {
            emit(line);
            return;
        }
        const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) dup2(null, fd);
            close(null);
        }
        const std::string s = line.dump() + "\n";
        if (write(ready_fd_, s.data(), s.size()) < 0) {
            // The parent is gone; nothing to tell.
        }
        close(ready_fd_);
        ready_fd_ = -1;
    }

  private:
    int ready_fd_ = -1;
};

// --cleanup: the tc filters (and the clsact qdisc) a probe killed with -9 left on the iface.
int remove_what_a_killed_probe_left(const ProbeOptions& o) {
    const uint32_t ifindex = iface_index(o.iface);
    // Refused while a live probe counts there: what it holds is not left over.
    const InterfaceLock lock(ifindex, o.iface);
    // Takes over (and so removes on return) a clsact that a killed probe created.
    const ClsactQdisc qdisc(ifindex, o.iface);
    const int removed = remove_stale_filters(ifindex);
    std::fprintf(stderr, "np-probe: %s: %d stale tc filter(s) removed%s\n", o.iface.c_str(),
                 removed, qdisc.owned() ? ", the clsact qdisc a probe created removed" : "");
    return 0;
}

// What the probe does once attached that may need a capability (capabilities.hpp): read its
// maps, and create or remove files beside --out, --pidfile and --control.
NeedsAfterAttach after_attach(const ProbeOptions& o, const ProbeMaps& maps) {
    NeedsAfterAttach needs;
    const int fd = maps.traffic;
    needs.read_a_map = [fd] {
        if (fd < 0) return true;  // kernel-counters: no map to read
        uint32_t key = 0;
        return bpf_map_get_next_key(fd, nullptr, &key) == 0;
    };
    for (const std::string& path : {o.out_path, o.pidfile, o.control_path}) {
        if (path.empty()) continue;
        const std::filesystem::path p(path);
        needs.dirs.push_back(p.has_parent_path() ? p.parent_path().string() : ".");
    }
    return needs;
}

// Who and where: the trace's fields that do not change while it counts.
Trace trace_header(const ProbeOptions& o, uint32_t ifindex, uint64_t netns,
                   const TierChoice& tier) {
    Trace trace;
    trace.tier = tier.tier;
    trace.tier_why = tier.why;
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
    return trace;
}

// The fds one wait watches (stdin, the control socket, the watched process), each only when
// there is one.
class PollSet {
  public:
    // Watches `fd` unless it is negative; gives where it sits, or -1.
    int watch(int fd) {
        if (fd < 0) return -1;
        fds_[n_] = {fd, POLLIN, 0};
        return static_cast<int>(n_++);
    }

    // Waits until one is ready, `wait_ms` have passed or a stop signal arrives (`wait_mask`
    // unblocks them for the wait only).
    void wait(int64_t wait_ms, const sigset_t& wait_mask) {
        const timespec timeout{wait_ms / 1000, (wait_ms % 1000) * 1000000};
        ready_ = ppoll(fds_.data(), n_, &timeout, &wait_mask);
    }

    // Whether the fd watched at `at` has something to read (or has ended) after the wait.
    bool fired(int at) const {
        return ready_ > 0 && at >= 0 && (fds_[at].revents & (POLLIN | POLLHUP | POLLERR));
    }

  private:
    std::array<pollfd, 3> fds_{};
    nfds_t n_ = 0;
    int ready_ = 0;
};

// Commands on stdin, a line at a time, and what its end means to the probe.
class StdinCommands {
  public:
    explicit StdinCommands(StdinUse use) : use_(use), reading_(use != StdinUse::ignored) {}

    // STDIN_FILENO while stdin is to be read now, else -1.
    int fd() const { return reading_ && may_read_stdin(use_) ? STDIN_FILENO : -1; }

    // Reads what stdin holds and handles each whole line until one stops the probe; at its
    // end, stops the probe where stdin is what controls it.
    void read_ready(Recorder& rec, Stop& stop) {
        char buf[4096];
        const ssize_t got = read(STDIN_FILENO, buf, sizeof(buf));
        if (got > 0) {
            input_.append(buf, static_cast<size_t>(got));
            for (size_t nl; stop == Stop::none && (nl = input_.find('\n')) != std::string::npos;) {
                const std::string line = input_.substr(0, nl);
                input_.erase(0, nl + 1);
                if (!line.empty()) handle_command(line, rec, stop);
            }
        } else if (got == 0 || errno != EINTR) {
            reading_ = false;
            if (use_ == StdinUse::controlling || use_ == StdinUse::terminal)
                stop = Stop::stdin_eof;  // the SSH channel, the pipe or the user's Ctrl-D
        }
    }

  private:
    StdinUse use_;
    bool reading_;
    std::string input_;
};

// When the next sample is due and when --duration ends (-1: never), in the recorder's ms.
struct Schedule {
    int64_t next_sample_ms;
    int64_t end_ms;

    // How long the next wait may last: until the next sample or the end, whichever is first.
    int64_t wait_ms(const Recorder& rec) const {
        int64_t wait_ms = next_sample_ms - rec.now_ms();
        if (end_ms >= 0) wait_ms = std::min(wait_ms, end_ms - rec.now_ms());
        return std::max<int64_t>(wait_ms, 0);
    }
};

// Takes the sample that is due, if one is, and schedules the next; false when the iface is
// gone and there is nothing more to count.
bool sample_if_due(const ProbeOptions& o, uint32_t ifindex, Recorder& rec, Schedule& at) {
    if (rec.now_ms() < at.next_sample_ms) return true;
    // Deleted or renamed (or replaced by another of its name): nothing more to count.
    if (find_iface_index(o.iface) != ifindex) return false;
    rec.sample();
    at.next_sample_ms += o.sample_interval_ms;
    if (at.next_sample_ms <= rec.now_ms()) at.next_sample_ms = rec.now_ms() + o.sample_interval_ms;
    return true;
}

// Samples every interval and serves commands (stdin, the control socket) until something
// stops the probe: a signal, `stop`, the end of a controlling stdin, the watched process's
// exit or --duration.
Stop count_until_stopped(const ProbeOptions& o, uint32_t ifindex, Recorder& rec,
                         ControlSocket* control, const WatchedProcess& watched, StdinUse input_use,
                         const sigset_t& wait_mask) {
    Schedule at{o.sample_interval_ms,
                o.duration_s > 0 ? static_cast<int64_t>(o.duration_s * 1000) : -1};
    StdinCommands input(input_use);
    Stop stop = Stop::none;
    while (stop == Stop::none) {
        const int64_t wait_ms = at.wait_ms(rec);
        PollSet fds;
        const int in_at = fds.watch(input.fd());
        const int control_at = fds.watch(control ? control->fd() : -1);
        const int watched_at = fds.watch(watched.fd());
        fds.wait(wait_ms, wait_mask);
        if (g_signal) return Stop::signal;
        if (fds.fired(in_at)) input.read_ready(rec, stop);
        if (stop == Stop::none && fds.fired(control_at)) {
            control->serve_one([&](const std::string& line) -> std::optional<std::string> {
                const nlohmann::json answer = handle_command(line, rec, stop);
                if (stop == Stop::command) return std::nullopt;  // the trace answers it below
                return answer.dump();
            });
        }
        if (stop == Stop::none && fds.fired(watched_at)) stop = Stop::watched_exit;
        if (!sample_if_due(o, ifindex, rec, at)) return Stop::iface_gone;
        if (stop == Stop::none && at.end_ms >= 0 && rec.now_ms() >= at.end_ms)
            stop = Stop::duration;
    }
    return stop;
}

// The last sample and phase, the probe's own cost; the trace to --out, stdout and the
// control socket; a warning when it covers almost nothing.
void finish_trace(const ProbeOptions& o, Trace& trace, Recorder& rec, const Attached& attached,
                  bool timed, ControlSocket* control, Stop stop) {
    rec.sample();
    rec.cut_phase(std::nullopt);
    trace.duration_ms = rec.now_ms();
    trace.phases = rec.take_phases();
    trace.samples = rec.take_samples();
    for (const bpf_program* p : attached.programs())
        trace.probe_cost.push_back(program_cost(p, timed));

    const nlohmann::json doc = to_json(trace);
    // Mode 0644, as fopen made it under the usual umask: `sudo np-probe --out` writes a trace
    // its user reads. A --out that cannot be written (a link planted there, a full disk)
    // still leaves the trace on stdout and the control socket, then ends the probe with its
    // exit status (docs/security.md, "Files np-explain writes").
    std::exception_ptr out_failed;
    if (!o.out_path.empty()) {
        try {
            write_file_atomically(o.out_path, doc.dump(2) + "\n", 0644);
        } catch (const std::exception&) {
            out_failed = std::current_exception();
        }
    }
    const nlohmann::json last = message(proto::kMessageTrace, doc);
    emit(last);
    if (control) control->answer_later(last.dump());
    std::fprintf(stderr, "np-probe: stopped (%s) after %.3f s; detaching from %s\n", describe(stop),
                 trace.duration_ms / 1000.0, o.iface.c_str());
    if (trace.duration_ms < 1000) {
        std::fprintf(stderr,
                     "np-probe: warning: the trace covers only %lld ms (%s) and says almost "
                     "nothing%s\n",
                     static_cast<long long>(trace.duration_ms), describe(stop),
                     stop == Stop::stdin_eof
                         ? "; to run without holding stdin open give --duration S, --control "
                           "PATH or --background"
                         : "");
    }
    if (out_failed) std::rethrow_exception(out_failed);
}

// The best tier the node allows (and --max-tier permits), loaded and attached; a tier the kernel
// refuses falls to the next one down, the refusal kept as the tier's why. Throws
// EnvironmentError when --require-tier asks for more than that.
std::unique_ptr<Attached> attach_best(const ProbeOptions& o, uint32_t ifindex, uint64_t netns,
                                      const std::optional<KernelBtf>& btf, const KernelTick& tick,
                                      TierChoice& choice) {
    const std::optional<ProbeTier> required =
        o.require_tier.empty() ? std::nullopt : parse_tier(o.require_tier);
    struct Hold {
        Hold() { g_held_libbpf.emplace(); }
        ~Hold() { g_held_libbpf.reset(); }
        std::string first_line() const {
            std::string l = g_held_libbpf->substr(0, g_held_libbpf->find('\n'));
            if (l.starts_with("libbpf: ")) l.erase(0, 8);
            return l;
        }
    };
    for (;;) {
        if (required && !at_least(choice.tier, *required)) {
            throw EnvironmentError(fmt::format("--require-tier {}: this node allows only {} ({})",
                                               o.require_tier, to_string(choice.tier), choice.why));
        }
        std::string why;
        {
            const Hold hold;
            try {
                return std::make_unique<Attached>(choice.tier, o, ifindex, netns, btf, tick);
            } catch (const EnvironmentError& e) {
                if (choice.tier == ProbeTier::kernel_counters) throw;
                const std::string detail = hold.first_line();
                why = detail.empty() ? e.what() : fmt::format("{} ({})", e.what(), detail);
            }
        }
        const ProbeTier below = tier_below(choice.tier);
        std::fprintf(stderr, "np-probe: the %s tier did not load: %s; trying %s\n",
                     to_string(choice.tier), why.c_str(), to_string(below));
        choice = {below, fmt::format("the {} tier did not load: {}", to_string(choice.tier), why)};
    }
}

// BPF run-time statistics, on while the probe counts when --time-programs asks, for the trace's
// probe_cost; none at the kernel-counters tier, which loads no program. They are the host's,
// not the probe's: while on, every BPF program on the host pays two clock reads a run, more
// than the probe's own programs cost (docs/performance.md, "Timing the programs").
std::unique_ptr<RunTimeStats> run_time_stats(ProbeTier tier, bool asked) {
    if (!asked || tier == ProbeTier::kernel_counters) return nullptr;
    auto stats = std::make_unique<RunTimeStats>();
    if (!stats->enabled())
        std::fprintf(stderr,
                     "np-probe: BPF run-time statistics unavailable; probe_cost stays untimed\n");
    return stats;
}

// The kernel's symbols, where the tier counts drops (each named by the function that freed it)
// and keeps the CPU account (the softirq functions and the tick); empty elsewhere.
KernelSymbols kernel_symbols(ProbeTier tier) {
    if (!measures(tier).drops) return {};
    KernelSymbols symbols = KernelSymbols::read();
    if (symbols.empty())
        std::fprintf(stderr,
                     "np-probe: /proc/kallsyms shows no addresses: drops without a reason "
                     "are named by code address, not function\n");
    return symbols;
}

// The "ready" line: what the probe loaded and attached where, and what it kept of its
// privileges.
nlohmann::json ready_message(const ProbeOptions& o, uint32_t ifindex, uint64_t netns,
                             const TierChoice& choice, const Attached& attached,
                             const std::vector<std::string>& kept) {
    nlohmann::json programs = nlohmann::json::array();
    for (const bpf_program* p : attached.programs())
        programs.push_back({{"name", bpf_program__name(p)}, {"id", program_id(p)}});
    return message(proto::kMessageReady, {{"programs", programs},
                                          {"iface", o.iface},
                                          {"ifindex", ifindex},
                                          {"netns_inode", netns},
                                          {"tier", to_string(choice.tier)},
                                          {"tier_why", choice.why},
                                          {"clsact_created", attached.clsact_created()},
                                          {"capabilities_kept", kept},
                                          {"pid", getpid()}});
}

// Tells the user on stderr where the probe counts, at which tier, and where it takes commands.
void announce_counting(const ProbeOptions& o, uint32_t ifindex, const TierChoice& choice,
                       bool control, StdinUse input_use) {
    std::fprintf(stderr,
                 "np-probe: counting on %s (ifindex %u) at tier %s%s%s; commands: 'phase NAME', "
                 "'status', 'stop' on %s\n",
                 o.iface.c_str(), ifindex, to_string(choice.tier), choice.why.empty() ? "" : ": ",
                 choice.why.c_str(),
                 control                          ? o.control_path.c_str()
                 : input_use == StdinUse::ignored ? "none (stdin is not read)"
                                                  : "stdin");
}

}  // namespace

int run_probe(const ProbeOptions& o) {
    validate(o);
    if (o.cleanup) {
        check_privileges();
        return remove_what_a_killed_probe_left(o);
    }
    Detacher detacher(o.background);
    const PidFile pidfile(o.pidfile);
    const WatchedProcess watched(o.exit_with_pid);
    const uint32_t ifindex = iface_index(o.iface);
    // Taken in the counting process (after --background's fork) and before anything is
    // attached: a second probe refuses here, and the stale filters attach_best removes can
    // only be a dead probe's.
    const InterfaceLock lock(ifindex, o.iface);
    const NodeFeatures features = probe_features();
    TierChoice choice =
        best_tier(features, o.max_tier.empty() ? std::nullopt : parse_tier(o.max_tier));
    const uint64_t netns = own_netns_inode();
    libbpf_set_print(libbpf_print);
    const sigset_t wait_mask = install_signal_handlers();

    const std::unique_ptr<RunTimeStats> stats = run_time_stats(choice.tier, o.time_programs);
    // Read while the probe still may read the addresses (kptr_restrict hides them after), and
    // before it attaches: the CPU account finds the kernel's tick by them.
    const KernelSymbols symbols = kernel_symbols(choice.tier);
    const std::unique_ptr<Attached> attached =
        attach_best(o, ifindex, netns, features.btf, kernel_tick(symbols), choice);
    std::optional<ControlSocket> control;
    if (!o.control_path.empty()) control.emplace(o.control_path);

    Trace trace = trace_header(o, ifindex, netns, choice);
    // Everything is loaded and attached: from here on the probe holds only what it needs until
    // it has detached and exited (docs/security.md, "The probe").
    const ProbeMaps maps = attached->maps();
    SocketOwners owners;  // forked while the probe still holds CAP_SYS_PTRACE
    const std::vector<std::string> kept = drop_capabilities(after_attach(o, maps));

    Recorder rec(maps,
                 {o.iface, ifindex, features.btf ? &*features.btf : nullptr, &symbols, choice.tier},
                 o.iface, ToolProcesses(o.iperf_port, owners), o.iperf_port);
    const nlohmann::json ready = ready_message(o, ifindex, netns, choice, *attached, kept);
    const StdinUse input_use = stdin_use(o);
    announce_counting(o, ifindex, choice, control.has_value(), input_use);
    detacher.ready(ready);

    const Stop stop = count_until_stopped(o, ifindex, rec, control ? &*control : nullptr, watched,
                                          input_use, wait_mask);

    finish_trace(o, trace, rec, *attached, stats && stats->enabled(), control ? &*control : nullptr,
                 stop);
    if (stop == Stop::iface_gone)
        throw EnvironmentError(fmt::format(
            "interface '{}' (ifindex {}) disappeared after {:.3f} s: the trace ends there", o.iface,
            ifindex, trace.duration_ms / 1000.0));
    return 0;
}

int send_to_probe(const std::string& control_path, const std::string& command) {
    // `stop` answers once the final phase is cut and the trace written: give it time.
    const std::string answer = send_control_command(control_path, command, 60000);
    std::fwrite(answer.data(), 1, answer.size(), stdout);
    std::fputc('\n', stdout);
    return proto::message_type(proto::parse_message(answer)) == proto::kMessageError ? 2 : 0;
}

}  // namespace np::probe
