// The probe's user space on values, no kernel: how the CPU account's samples become a trace's,
// what /proc/stat's readings say of a phase, and when the sampler walks the kernel's socket
// tables.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "src/probe/cpu_account.hpp"
#include "src/probe/host_facts.hpp"
#include "src/probe/map_totals.hpp"
#include "src/probe/tcp_sockets.hpp"
#include "src/probe/walk_schedule.hpp"

namespace {

// Ticks in ms of one CPU's softirq slots: NP_SOFTIRQ_OTHER (0), NP_SOFTIRQ_DISPATCH (1),
// NP_SOFTIRQ_NET_TX (2), NP_SOFTIRQ_NET_RX (3), the rest other vectors'.
struct Ticks {
    unsigned long long ns[NP_SOFTIRQS] = {};
    Ticks& at(int slot, unsigned long long ms) {
        ns[slot] = ms * 1000000;
        return *this;
    }
};

// The kernel's tick is found by its hrtimer's function, by kernel: tick_sched_timer until 6.6
// (when tick_nohz_handler was the low-resolution handler), tick_nohz_highres_handler in 6.7 and
// 6.8, tick_nohz_handler since 6.9 (beside tick_nohz_lowres_handler); with the entry code, the
// kernel's HZ and an hrtimer running every CPU's tick. Without any of them, or with CPUs that run
// busy without a tick (nohz_full), the account keeps the probe's own timer.
TEST(ProbeAccount, TheKernelsTickIsFoundByItsFunctionsByKernelUnlessItCannotSample) {
    using np::probe::kernel_tick;
    const std::string path = testing::TempDir() + "np_kallsyms_tick";
    const auto symbols = [&](const std::string& text) {
        std::ofstream(path) << text;
        return np::probe::KernelSymbols::read(path);
    };
    const std::string entry =
        "ffffffff81000010 T __entry_text_start\n"
        "ffffffff81000df0 T asm_sysvec_apic_timer_interrupt\n"
        "ffffffff81000e10 T asm_sysvec_spurious_apic_interrupt\n"
        "ffffffff81001a87 T __entry_text_end\n";
    const std::string high_res = "cpu: 0\n  .hres_active    : 1\ncpu: 1\n  .hres_active    : 1\n";
    const np::probe::TickFacts facts{"(null)\n", high_res, 250};

    const auto v6_18 = symbols(
        "ffffffff814437d0 t tick_nohz_handler\n"
        "ffffffff81443920 t tick_nohz_lowres_handler\n"
        "ffffffff81443a00 t tick_nohz_next\n" +
        entry);
    const np::probe::KernelTick t = kernel_tick(v6_18, facts);
    ASSERT_TRUE(t.known());
    EXPECT_EQ(t.fn, 0xffffffff814437d0ULL);
    EXPECT_EQ(t.period_ns, 4'000'000ULL);
    EXPECT_EQ(t.entry_start, 0xffffffff81000010ULL);
    EXPECT_EQ(t.entry_end, 0xffffffff81001a87ULL);
    EXPECT_TRUE(kernel_tick(v6_18, {"", high_res, 1000}).known());
    EXPECT_EQ(kernel_tick(v6_18, {"", high_res, 1000}).period_ns, 1'000'000ULL);

    // Until 6.6 tick_nohz_handler is the low-resolution handler: the hrtimer's is the other.
    const auto v6_6 = symbols(
        "ffffffff81200000 t tick_sched_timer\n"
        "ffffffff81200100 t tick_nohz_handler\n"
        "ffffffff81200200 t tick_sched_do_timer\n" +
        entry);
    EXPECT_EQ(kernel_tick(v6_6, facts).fn, 0xffffffff81200000ULL);
    const auto v6_7 = symbols(
        "ffffffff81300000 t tick_nohz_highres_handler\n"
        "ffffffff81300100 t tick_nohz_lowres_handler\n"
        "ffffffff81300200 t x\n" +
        entry);
    EXPECT_EQ(kernel_tick(v6_7, facts).fn, 0xffffffff81300000ULL);
    const auto lowres_only = symbols(
        "ffffffff81200100 t tick_nohz_handler\n"
        "ffffffff81200200 t tick_sched_do_timer\n" +
        entry);
    EXPECT_FALSE(kernel_tick(lowres_only, facts).known());

    // Without the entry text's bounds, the timer interrupt's entry alone.
    const auto no_bounds = symbols(
        "ffffffff814437d0 t tick_nohz_handler\n"
        "ffffffff81443920 t tick_nohz_lowres_handler\n"
        "ffffffff81e01a00 T asm_sysvec_apic_timer_interrupt\n"
        "ffffffff81e01a20 T asm_sysvec_spurious_apic_interrupt\n");
    const np::probe::KernelTick n = kernel_tick(no_bounds, facts);
    EXPECT_EQ(n.entry_start, 0xffffffff81e01a00ULL);
    EXPECT_EQ(n.entry_end, 0xffffffff81e01a20ULL);
    EXPECT_FALSE(kernel_tick(symbols("ffffffff814437d0 t tick_nohz_handler\n"
                                     "ffffffff81443920 t tick_nohz_lowres_handler\n"
                                     "ffffffff81443a00 t x\n"),
                             facts)
                     .known());

    // What the tick needs besides.
    EXPECT_FALSE(kernel_tick(v6_18, {"1-3\n", high_res, 250}).known());
    EXPECT_FALSE(kernel_tick(v6_18, {"", high_res, 0}).known());
    EXPECT_FALSE(kernel_tick(v6_18, {"", "", 250}).known());
    EXPECT_FALSE(
        kernel_tick(v6_18, {"", "  .hres_active    : 1\n  .hres_active    : 0\n", 250}).known());
    std::remove(path.c_str());

    EXPECT_EQ(np::probe::config_hz("CONFIG_NO_HZ_IDLE=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"), 250);
    EXPECT_EQ(np::probe::config_hz("# CONFIG_HZ_PERIODIC is not set\nCONFIG_HZ=1000"), 1000);
    EXPECT_EQ(np::probe::config_hz("CONFIG_HZ_100=y\n"), 0);
    EXPECT_EQ(np::probe::config_hz("CONFIG_HZ=x\n"), 0);
    EXPECT_EQ(np::probe::config_hz(""), 0);
}

// Ticks that landed in the dispatcher itself are shared among the vectors by the ticks that
// landed in each one's handler on the same CPU (the VM case: RPS's IPIs before the timer's, two
// thirds of a receiving CPU's busy ticks in handle_softirqs); without any, they stay "other".
TEST(ProbeAccount, TicksInTheSoftirqDispatcherAreSharedByTheHandlersTicks) {
    Ticks vm;
    vm.at(NP_SOFTIRQ_NET_RX, 1000).at(NP_SOFTIRQ_DISPATCH, 1500);
    auto s = np::probe::share_dispatch(vm.ns);
    EXPECT_EQ(s.net_rx_ns, 2500000000ULL);
    EXPECT_EQ(s.net_tx_ns, 0ULL);
    EXPECT_EQ(s.other_ns, 0ULL);

    Ticks mixed;
    mixed.at(NP_SOFTIRQ_NET_RX, 600)
        .at(NP_SOFTIRQ_NET_TX, 200)
        .at(NP_SOFTIRQ_OTHER, 100)
        .at(9, 100);
    mixed.at(NP_SOFTIRQ_DISPATCH, 500);
    s = np::probe::share_dispatch(mixed.ns);
    EXPECT_EQ(s.net_rx_ns, 900000000ULL);
    EXPECT_EQ(s.net_tx_ns, 300000000ULL);
    EXPECT_EQ(s.other_ns, 300000000ULL);  // 100 + 100 of two other vectors, + their 100 shared
    EXPECT_EQ(s.net_rx_ns + s.net_tx_ns + s.other_ns, 1500000000ULL);

    Ticks only_dispatch;
    only_dispatch.at(NP_SOFTIRQ_DISPATCH, 7);
    s = np::probe::share_dispatch(only_dispatch.ns);
    EXPECT_EQ(s.other_ns, 7000000ULL);
    EXPECT_EQ(s.net_rx_ns + s.net_tx_ns, 0ULL);
}

using np::probe::StreamNews;
using np::probe::WalkSchedule;

// `n` samples `step_ms` apart from `t` (advanced), each with `news` and `unfound`: how many walked.
int walks(WalkSchedule& w, const StreamNews& news, const std::vector<uint16_t>& unfound, int n,
          int64_t step_ms, int64_t& t) {
    int walked = 0;
    for (int i = 0; i < n; ++i) walked += w.next(false, news, unfound, t += step_ms);
    return walked;
}

// A phase's CPU time from two readings of /proc/stat 2,160 ms apart: what they placed nowhere is
// the CPU's unticked time (an idle CPU's interrupt work with its tick stopped: RPS's NET_RX on
// the receiving iperf3's core measured so), beyond the readings' rounding (80 ms here); none
// where a column ran backwards; a CPU that came online between them has no time of the phase.
TEST(ProbeCounters, TimeProcStatPlacedNowhereBetweenTwoReadingsIsUnticked) {
    np::probe::KernelCounters a, b;
    a.cpus_read_ms = 10'000;
    b.cpus_read_ms = 12'160;
    a.cpus = {{0, 50'000, 1'000, 0, 90'000, 0, 0},
              {1, 40'000, 2'000, 0, 99'000, 0, 0},
              {2, 10'000, 0, 0, 20'000, 0, 0},
              {3, 10'000, 0, 0, 20'000, 0, 0}};
    b.cpus = {{0, 52'010, 1'030, 0, 90'080, 0, 0},
              {1, 41'120, 2'840, 0, 99'160, 0, 0},
              {2, 10'500, 0, 0, 19'000, 0, 0},
              {3, 10'100, 0, 0, 20'100, 0, 0},
              {4, 300, 0, 0, 1'000, 0, 0}};
    const auto d = np::probe::counter_delta(a, b);
    ASSERT_EQ(d.cpus.size(), 4U);
    EXPECT_EQ(d.cpus[0].busy_ms, 2'010);
    EXPECT_EQ(d.cpus[0].unticked_ms, 0);  // 70 ms unplaced: the rounding's
    EXPECT_EQ(d.cpus[1].busy_ms, 1'120);
    EXPECT_EQ(d.cpus[1].idle_ms, 160);
    EXPECT_EQ(d.cpus[1].unticked_ms, 880);
    EXPECT_EQ(d.cpus[1].working_ms(), 2'000);
    EXPECT_EQ(d.cpus[2].unticked_ms, 0);  // idle ran backwards
    EXPECT_EQ(d.cpus[3].unticked_ms, 1'960);
}

// The socket tables are walked for the connections there before the probe, then every sample
// while a stream the tc programs named has no socket found, for a while (on the server a
// connection is in the tables only once its handshake is done, a SYN-ACK resent at 1 s and 3 s
// included), at every cut, and otherwise seldom and only while a stream's packets find no slot:
// for a connection the slots cannot name.
TEST(WalkSchedule, TheTablesAreWalkedWhileAStreamHasNoSocketFound) {
    WalkSchedule w(4000);
    const StreamNews idle{true, {}, false}, unslotted{true, {}, true};
    int64_t t = 0;
    EXPECT_TRUE(w.next(false, idle, {}, t));  // the first sample
    // A minute of 100-ms samples with nothing new, every packet's stream slotted: no walk.
    EXPECT_EQ(walks(w, idle, {}, 600, 100, t), 0);
    // A stream whose packets find no slot: the fallback's walks alone.
    EXPECT_EQ(walks(w, unslotted, {}, 600, 100, t), 60000 / WalkSchedule::kFallbackMs);
    // Told once, between walks: walked for at the next due sample.
    EXPECT_TRUE(w.next(true, idle, {}, t += 100));  // a cut
    EXPECT_FALSE(w.next(false, unslotted, {}, t += 100));
    EXPECT_EQ(walks(w, idle, {}, 18, 100, t), 0);
    EXPECT_TRUE(w.next(false, idle, {}, t += 100));
    EXPECT_EQ(walks(w, idle, {}, 100, 100, t), 0);
    EXPECT_TRUE(w.next(true, idle, {}, t += 100));  // a cut
    // A stream without a socket found: every sample walks for 4 s, then none while it is
    // still not found (a flow this namespace only forwards) and the flow is still.
    const int64_t claimed_at = t += 100;
    EXPECT_TRUE(w.next(false, idle, {40000}, claimed_at));
    while (t + 100 <= claimed_at + 4000)
        EXPECT_TRUE(w.next(false, idle, {40000}, t += 100)) << t - claimed_at << " ms after";
    EXPECT_EQ(walks(w, idle, {40000}, 100, 100, t), 0);
    // Another stream: walks until it is found, then not.
    EXPECT_TRUE(w.next(false, idle, {40000, 40001}, t += 100));
    EXPECT_TRUE(w.next(false, idle, {40000, 40001}, t += 100));
    EXPECT_FALSE(w.next(false, idle, {40000}, t += 100));
    // With 10-ms samples the same time, not the same number of samples.
    WalkSchedule fast(4000);
    t = 0;
    fast.next(false, idle, {}, t);
    EXPECT_EQ(walks(fast, idle, {40000}, 300, 10, t), 300);  // 3 s, all inside the 4 s
}

// A TCP stream whose connection was found and has closed is not looked for again while the tc
// programs keep its slot (the phase after a TCP test: walking for it found nothing, at every
// sample for 4 s); once the slot is freed, a connection on the same port is looked for anew.
TEST(WalkSchedule, AClosedConnectionsStreamIsNotLookedForUntilItsSlotIsFreed) {
    using np::probe::ClaimedStream;
    np::probe::ClosedStreams closed;
    const ClaimedStream data{40000, NP_PROTO_TCP}, control{39999, NP_PROTO_TCP},
        udp{40001, NP_PROTO_UDP};
    const std::vector<ClaimedStream> claimed{data, control, udp};
    // Not found yet: the TCP streams only (UDP has no tcp_info), the control connection found.
    EXPECT_EQ(closed.unfound(claimed, {39999}), std::vector<uint16_t>{40000});
    EXPECT_EQ(closed.unfound(claimed, {39999, 40000}), std::vector<uint16_t>{});
    // The test ends and the cut forgets its closed connection: its slot is still claimed.
    closed.closed(40000);
    EXPECT_EQ(closed.unfound(claimed, {39999}), std::vector<uint16_t>{});
    // A cut that frees other slots changes nothing for it; one that frees its slot does.
    closed.freed({control, udp});
    EXPECT_EQ(closed.unfound(claimed, {39999}), std::vector<uint16_t>{});
    closed.freed({data});
    EXPECT_EQ(closed.unfound({data}, {}), std::vector<uint16_t>{40000});
    // A UDP stream on that port freed says nothing of the TCP one.
    closed.closed(40000);
    closed.freed({ClaimedStream{40000, NP_PROTO_UDP}});
    EXPECT_EQ(closed.unfound({data}, {}), std::vector<uint16_t>{});
}

// A schedule without a retry (the test's processes: a process holds its socket before the
// first packet) looks once for each stream not looked for.
TEST(WalkSchedule, WithoutARetryEachNewStreamIsLookedForOnce) {
    WalkSchedule w(0);
    const StreamNews idle{true, {}, false};
    int64_t t = 0;
    EXPECT_TRUE(w.next(false, idle, {}, t));
    EXPECT_TRUE(w.next(false, idle, {40000}, t += 100));
    EXPECT_FALSE(w.next(false, idle, {40000}, t += 100));
    EXPECT_TRUE(w.next(false, idle, {40000, 40001}, t += 100));
    EXPECT_FALSE(w.next(false, idle, {40000, 40001}, t += 100));
}

// Without the tc programs' streams (the kernel-counters tier) the tables are walked every
// kWalkEveryMs while the iface moves, and at each cut.
TEST(WalkSchedule, WithoutTheStreamsTheTablesAreWalkedEveryHalfSecondWhileTheIfaceMoves) {
    WalkSchedule w(4000);
    const StreamNews still{false, {}, false}, moving{false, {}, true};
    int64_t t = 0;
    const int first = w.next(false, moving, {}, t);
    EXPECT_EQ(first + walks(w, moving, {}, 100, 100, t), 1 + 10000 / WalkSchedule::kWalkEveryMs);
    EXPECT_EQ(walks(w, still, {}, 100, 100, t), 0);
    EXPECT_TRUE(w.next(true, still, {}, t += 100));
    // A packet seen between walks is walked for at the next due sample.
    EXPECT_FALSE(w.next(false, moving, {}, t += 100));
    EXPECT_EQ(walks(w, still, {}, 3, 100, t), 0);
    EXPECT_TRUE(w.next(false, still, {}, t += 100));
}

}  // namespace
