#include "src/probe/kernel_objects.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "common/errors.hpp"
#include "probe.skel.h"
#include "probe_tc.skel.h"

namespace np::probe {
namespace {

const char* marker_dir = "/run/np-probe";

std::string errstr(int err) {
    return std::strerror(err < 0 ? -err : err);
}

// A libbpf options struct, every byte zero but its size: libbpf refuses one whose bytes past the
// fields it knows are not zero, padding included ("has non-zero extra bytes"), and `T x{}`
// does not zero padding (clang leaves it), so this is libbpf's own LIBBPF_OPTS in C++.
template <class Opts>
void clear_opts(Opts& o) {
    std::memset(&o, 0, sizeof o);
    o.sz = sizeof o;
}

std::string program_name(uint32_t prog_id) {
    const int fd = bpf_prog_get_fd_by_id(prog_id);
    if (fd < 0) return {};
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    std::string name;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) name = info.name;
    close(fd);
    return name;
}

// Silences libbpf for calls whose failure is an expected answer (a clsact that already
// exists, an empty filter slot): the kernel's extack message would read like an error.
class QuietLibbpf {
  public:
    QuietLibbpf() : previous_(libbpf_set_print(nullptr)) {}
    ~QuietLibbpf() { libbpf_set_print(previous_); }
    QuietLibbpf(const QuietLibbpf&) = delete;
    QuietLibbpf& operator=(const QuietLibbpf&) = delete;

  private:
    libbpf_print_fn_t previous_;
};

// SO_NETNS_COOKIE (Linux >= 5.14): a 64-bit id of the caller's network namespace that is
// never reused; 0 when the kernel does not have it.
uint64_t netns_cookie() {
    const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    uint64_t cookie = 0;
    socklen_t len = sizeof(cookie);
    if (s >= 0 && getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) != 0) cookie = 0;
    if (s >= 0) close(s);
    return cookie;
}

const char* point_name(bpf_tc_attach_point p) {
    return p == BPF_TC_INGRESS ? "ingress" : "egress";
}

}  // namespace

ProbeSkeleton::ProbeSkeleton(const ProbeConfig& c) {
    skel_ = probe_bpf__open();
    if (!skel_)
        throw EnvironmentError(fmt::format("cannot open the BPF object: {}", errstr(errno)));
    skel_->rodata->netns_ino = static_cast<uint32_t>(c.netns_inode);
    skel_->rodata->data_ifindex = c.ifindex;
    skel_->rodata->iperf_port = c.iperf_port;
    skel_->rodata->kfree_skb_has_rx_sk = c.kfree_skb_has_rx_sk;
    skel_->rodata->retransmit_has_err = c.retransmit_has_err;
    skel_->rodata->cpu_account = c.cpu_account;
    skel_->rodata->tick_fn = c.tick.fn;
    skel_->rodata->tick_ns = c.tick.period_ns;
    skel_->rodata->tick_entry_start = c.tick.entry_start;
    skel_->rodata->tick_entry_end = c.tick.entry_end;
    bpf_program__set_autoload(skel_->progs.np_account_tick, c.cpu_account);
    bpf_program__set_autoload(skel_->progs.np_account_on_tick, c.cpu_account && c.tick.known());
    bpf_program__set_autoload(skel_->progs.np_kfree_skb, !c.drop_sites);
    bpf_program__set_autoload(skel_->progs.np_kfree_skb_site, c.drop_sites);
    if (const int err = probe_bpf__load(skel_)) {
        probe_bpf__destroy(skel_);
        skel_ = nullptr;
        throw EnvironmentError(fmt::format(
            "the kernel refused the BPF programs: {} (libbpf's log above names the program; "
            "a kernel without tc BPF, tp_btf or BTF-typed skb access is too old)",
            errstr(err)));
    }
}

ProbeSkeleton::~ProbeSkeleton() {
    probe_bpf__destroy(skel_);
}

TcSkeleton::TcSkeleton(uint16_t iperf_port) {
    bpf_object_open_opts opts;
    clear_opts(opts);
    opts.btf_custom_path = "/dev/null";  // no kernel BTF: see kernel_objects.hpp
    skel_ = probe_tc_bpf__open_opts(&opts);
    if (!skel_)
        throw EnvironmentError(fmt::format("cannot open the tc BPF object: {}", errstr(errno)));
    skel_->rodata->iperf_port = iperf_port;
    if (const int err = probe_tc_bpf__load(skel_)) {
        probe_tc_bpf__destroy(skel_);
        skel_ = nullptr;
        throw EnvironmentError(
            fmt::format("the kernel refused the tc BPF programs: {}", errstr(err)));
    }
}

TcSkeleton::~TcSkeleton() {
    probe_tc_bpf__destroy(skel_);
}

InterfaceLock::InterfaceLock(uint32_t ifindex, const std::string& iface)
    : path_(fmt::format("{}/iface-{}-{}.lock", marker_dir, netns_cookie(), ifindex)) {
    if (mkdir(marker_dir, 0700) != 0 && errno != EEXIST)
        throw EnvironmentError(fmt::format("cannot create {}: {}", marker_dir, errstr(errno)));
    // A holder that exits removes the file it locked: a lock taken on a file no longer at the
    // path is no lock, so take it again on the one there now.
    for (int attempt = 0; attempt < 8; ++attempt) {
        fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd_ < 0)
            throw EnvironmentError(fmt::format("cannot open {}: {}", path_, errstr(errno)));
        if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            char buf[32] = {};
            const ssize_t n = pread(fd_, buf, sizeof(buf) - 1, 0);
            close(fd_);
            fd_ = -1;
            if (err != EWOULDBLOCK)
                throw EnvironmentError(fmt::format("cannot lock {}: {}", path_, errstr(err)));
            std::string holder(buf, n > 0 ? static_cast<size_t>(n) : 0);
            while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' '))
                holder.pop_back();
            throw EnvironmentError(fmt::format(
                "another np-probe{} is counting on {} (ifindex {}); it must stop first "
                "(np-explain teardown for a run's, else its --control 'stop' or kill), or count "
                "on another interface",
                holder.find_first_not_of("0123456789") == std::string::npos && !holder.empty()
                    ? " (pid " + holder + ")"
                    : std::string(),
                iface, ifindex));
        }
        struct stat held {
        }, there{};
        if (fstat(fd_, &held) == 0 && stat(path_.c_str(), &there) == 0 &&
            held.st_ino == there.st_ino && held.st_dev == there.st_dev) {
            const std::string pid = fmt::format("{}\n", getpid());
            if (ftruncate(fd_, 0) != 0 || pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
                // Locked all the same; a second probe's message just cannot name this one.
            }
            return;
        }
        close(fd_);
        fd_ = -1;
    }
    throw EnvironmentError(fmt::format("cannot lock {}: it kept being replaced", path_));
}

InterfaceLock::~InterfaceLock() {
    if (fd_ < 0) return;
    unlink(path_.c_str());  // still locked: a probe that opened it meanwhile tries again
    close(fd_);
    rmdir(marker_dir);  // only when no other probe's file is left in it
}

ClsactQdisc::ClsactQdisc(uint32_t ifindex, const std::string& iface)
    : ifindex_(ifindex),
      marker_(fmt::format("{}/clsact-{}-{}-{}", marker_dir, netns_cookie(), ifindex, iface)) {
    bpf_tc_hook hook;
    clear_opts(hook);
    hook.ifindex = static_cast<int>(ifindex);
    hook.attach_point = BPF_TC_INGRESS;
    const int err = [&] {
        QuietLibbpf quiet;
        return bpf_tc_hook_create(&hook);
    }();
    if (err == 0) {
        owned_ = true;
        mkdir(marker_dir, 0700);
        if (FILE* f = std::fopen(marker_.c_str(), "w")) std::fclose(f);
    } else if (err == -EEXIST) {
        // Someone's clsact is already there. It is ours to remove only if a probe that was
        // killed before it could clean up created it.
        struct stat st {};
        if (stat(marker_.c_str(), &st) == 0) {
            owned_ = true;
            std::fprintf(stderr,
                         "np-probe: taking over the clsact qdisc a previous probe created and "
                         "left (it will be removed on exit)\n");
        }
    } else {
        throw EnvironmentError(
            fmt::format("cannot create the clsact qdisc on ifindex {}: {}", ifindex, errstr(err)));
    }
}

ClsactQdisc::~ClsactQdisc() {
    if (!owned_) return;
    bpf_tc_hook hook;
    clear_opts(hook);
    hook.ifindex = static_cast<int>(ifindex_);
    hook.attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS);
    bpf_tc_hook_destroy(&hook);
    unlink(marker_.c_str());
    rmdir(marker_dir);  // only when no other probe's marker is left in it
}

TcFilter::TcFilter(uint32_t ifindex, bpf_tc_attach_point point, const bpf_program* prog) {
    clear_opts(hook_);
    hook_.ifindex = static_cast<int>(ifindex);
    hook_.attach_point = point;
    bpf_tc_opts opts;
    clear_opts(opts);
    opts.handle = kTcHandle;
    opts.priority = kTcPriority;
    opts.prog_fd = bpf_program__fd(prog);
    if (const int err = bpf_tc_attach(&hook_, &opts)) {
        throw EnvironmentError(
            fmt::format("cannot attach the tc {} filter: {}", point_name(point), errstr(err)));
    }
}

TcFilter::~TcFilter() {
    bpf_tc_opts opts;
    clear_opts(opts);
    opts.handle = kTcHandle;
    opts.priority = kTcPriority;
    bpf_tc_detach(&hook_, &opts);
}

int remove_stale_filters(uint32_t ifindex) {
    int removed = 0;
    for (auto point : {BPF_TC_INGRESS, BPF_TC_EGRESS}) {
        bpf_tc_hook hook;
        clear_opts(hook);
        hook.ifindex = static_cast<int>(ifindex);
        hook.attach_point = point;
        bpf_tc_opts opts;
        clear_opts(opts);
        opts.handle = kTcHandle;
        opts.priority = kTcPriority;
        if (QuietLibbpf quiet; bpf_tc_query(&hook, &opts) != 0) continue;  // slot is empty
        const std::string name = program_name(opts.prog_id);
        if (name != kTcIngressProgram && name != kTcEgressProgram) {
            throw EnvironmentError(fmt::format(
                "a foreign tc {} filter (program '{}', id {}) holds np-probe's handle {:#x} "
                "priority {}; remove it or use another iface",
                point_name(point), name, opts.prog_id, kTcHandle, kTcPriority));
        }
        bpf_tc_opts del;
        clear_opts(del);
        del.handle = kTcHandle;
        del.priority = kTcPriority;
        if (const int err = bpf_tc_detach(&hook, &del)) {
            throw EnvironmentError(fmt::format("cannot remove a stale tc {} filter: {}",
                                               point_name(point), errstr(err)));
        }
        std::fprintf(stderr,
                     "np-probe: removed a tc %s filter (program %s, id %u) left by a probe that "
                     "did not exit cleanly\n",
                     point_name(point), name.c_str(), opts.prog_id);
        ++removed;
    }
    return removed;
}

TracingLink::TracingLink(bpf_program* prog, const char* hook_name) {
    link_ = bpf_program__attach(prog);
    if (!link_) {
        throw EnvironmentError(
            fmt::format("kernel too old for {}: cannot attach it: {}", hook_name, errstr(errno)));
    }
}

TracingLink::~TracingLink() {
    bpf_link__destroy(link_);
}

CpuTimers::CpuTimers(bpf_program* prog, uint64_t period_ns, const char* what) {
    const int cpus = libbpf_num_possible_cpus();
    for (int cpu = 0; cpu < cpus; ++cpu) {
        perf_event_attr attr{};
        attr.size = sizeof(attr);
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = PERF_COUNT_SW_CPU_CLOCK;
        attr.sample_period = period_ns;
        const int fd = static_cast<int>(
            syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
        if (fd < 0) {
            if (errno == ENODEV) continue;  // a possible CPU that is not online
            const int e = errno;
            release();
            throw EnvironmentError(
                fmt::format("cannot open {} on CPU {}: {}", what, cpu, errstr(e)));
        }
        bpf_link* link = bpf_program__attach_perf_event(prog, fd);
        if (!link) {
            const int e = errno;
            close(fd);
            release();
            throw EnvironmentError(
                fmt::format("cannot attach {} on CPU {}: {}", what, cpu, errstr(e)));
        }
        links_.push_back(link);  // the link owns the event's fd
    }
    if (links_.empty()) throw EnvironmentError(fmt::format("no online CPU for {}", what));
}

CpuTimers::~CpuTimers() {
    release();
}

void CpuTimers::release() {
    for (auto* l : links_) bpf_link__destroy(l);
    links_.clear();
}

MappedMap::MappedMap(int map_fd, size_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    bytes_ = (bytes + page - 1) / page * page;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
    if (p == MAP_FAILED)
        throw EnvironmentError(fmt::format("cannot map the bins into memory: {}", errstr(errno)));
    data_ = p;
}

MappedMap::~MappedMap() {
    munmap(data_, bytes_);
}

RunTimeStats::RunTimeStats() : fd_(bpf_enable_stats(BPF_STATS_RUN_TIME)) {}

RunTimeStats::~RunTimeStats() {
    if (fd_ >= 0) close(fd_);
}

void check_privileges() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capget, &header, data) != 0)
        throw EnvironmentError(fmt::format("cannot read capabilities: {}", errstr(errno)));
    auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1U; };
    std::vector<std::string> missing;
    const bool sys_admin = has(CAP_SYS_ADMIN);
    if (!has(CAP_BPF) && !sys_admin) missing.push_back("CAP_BPF");
    if (!has(CAP_PERFMON) && !sys_admin) missing.push_back("CAP_PERFMON");
    if (!has(CAP_NET_ADMIN)) missing.push_back("CAP_NET_ADMIN");
    if (!missing.empty()) {
        throw EnvironmentError(fmt::format(
            "np-probe must run as root (or with CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN); "
            "missing: {}",
            fmt::join(missing, ", ")));
    }
}

}  // namespace np::probe
