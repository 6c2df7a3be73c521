// np-probe-testrun: the per-run cost of np-probe's tc program without the clock reads of
// BPF run-time statistics. BPF_PROG_TEST_RUN runs the program N times back to back on a
// crafted frame and reports the average; the empty floor program, run the same way, is the
// cost of the test loop itself. Frames: a full 1514-byte TCP segment, a 66-byte ACK, and a
// GSO skb (gso_segs 44). Then what the flow's 1 ms bins add to each of its packets where they
// are counted (bpf/bins.h: a clock read and a per-CPU add): the ingress program on the segment
// with the bins stopped, as between phases, and counting, as in one. No attachment, nothing to
// clean up.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "floor.skel.h"
#include "probe.skel.h"

namespace {

// Ethernet + IPv4 + TCP with timestamps (32 bytes), port 5201 on the destination side.
std::vector<uint8_t> tcp_frame(size_t payload) {
    std::vector<uint8_t> f(14 + 20 + 32 + payload, 0);
    f[12] = 0x08;  // ETH_P_IP
    f[14] = 0x45;  // IPv4, ihl 5
    const size_t ip_len = 20 + 32 + payload;
    f[16] = uint8_t(ip_len >> 8);
    f[17] = uint8_t(ip_len);
    f[22] = 64;  // TTL
    f[23] = 6;   // TCP
    f[34 + 2] = 5201 >> 8;
    f[34 + 3] = 5201 & 0xff;
    f[34 + 12] = 8 << 4;  // doff 8: 32-byte header
    return f;
}

double ns_per_run(int prog_fd, const std::vector<uint8_t>& frame, uint32_t gso_segs,
                  uint32_t gso_size, int repeat) {
    __sk_buff ctx{};
    ctx.gso_segs = gso_segs;
    ctx.gso_size = gso_size;
    bpf_test_run_opts opts{};
    opts.sz = sizeof(opts);
    opts.data_in = frame.data();
    opts.data_size_in = static_cast<uint32_t>(frame.size());
    opts.ctx_in = &ctx;
    opts.ctx_size_in = sizeof(ctx);
    opts.repeat = repeat;
    if (bpf_prog_test_run_opts(prog_fd, &opts) != 0) return -1;
    return opts.duration;  // average ns per repetition, as the kernel measured it
}

}  // namespace

int main() {
    probe_bpf* probe = probe_bpf__open_and_load();
    floor_bpf* floor = floor_bpf__open_and_load();
    if (!probe || !floor) {
        std::fprintf(stderr, "np-probe-testrun: cannot load the programs (root?)\n");
        return 3;
    }
    const int repeat = 2'000'000;
    struct Case {
        const char* name;
        std::vector<uint8_t> frame;
        uint32_t segs, size;
    };
    const std::array<Case, 3> cases = {{{"full 1514-byte TCP segment", tcp_frame(1448), 1, 0},
                                        {"66-byte TCP ACK", tcp_frame(0), 1, 0},
                                        {"GSO skb, 44 segments", tcp_frame(1448), 44, 1448}}};
    std::printf("tc program cost by BPF_PROG_TEST_RUN (%d runs each, ns per run):\n", repeat);
    std::printf("  %-28s %8s %8s %8s\n", "frame", "probe", "floor", "net");
    for (const auto& c : cases) {
        const double p =
            ns_per_run(bpf_program__fd(probe->progs.np_tc_egress), c.frame, c.segs, c.size, repeat);
        const double f = ns_per_run(bpf_program__fd(floor->progs.floor_tc_egress), c.frame, c.segs,
                                    c.size, repeat);
        std::printf("  %-28s %8.0f %8.0f %8.0f\n", c.name, p, f, p - f);
    }
    // Alternated, so drift between the two favours neither.
    const auto ingress = [&] {
        return ns_per_run(bpf_program__fd(probe->progs.np_tc_ingress), cases[0].frame, 1, 0,
                          repeat);
    };
    double stopped = 0, counting = 0;
    const int turns = 6;
    for (int i = 0; i < turns; ++i) {
        probe->bss->bins_start_ns = 0;
        stopped += ingress() / turns;
        timespec now{};
        clock_gettime(CLOCK_MONOTONIC, &now);
        probe->bss->bins_start_ns =
            static_cast<uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<uint64_t>(now.tv_nsec);
        counting += ingress() / turns;
    }
    std::printf(
        "the flow's bins, ingress, the 1514-byte segment (%d x %d runs each, ns per run):\n"
        "  bins stopped %.1f, counting %.1f: %.1f ns a packet of the flow\n",
        turns, repeat, stopped, counting, counting - stopped);
    probe_bpf__destroy(probe);
    floor_bpf__destroy(floor);
    return 0;
}
