// The probe's user space on values, no kernel: how the CPU account's samples become a trace's,
// and when the sampler walks the kernel's socket tables.
#include <gtest/gtest.h>

#include "src/probe/map_totals.hpp"
#include "src/probe/tcp_sockets.hpp"

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

// The socket tables are walked for the connections there before the probe, then only when the tc
// programs claim a stream slot (a new connection) and for the samples after it while it is being
// established, and at every cut; a long test with no new connection walks nothing between cuts.
TEST(TcpSocketsWalk, TheTablesAreWalkedWhenANewStreamIsSeenNotOnATimer) {
    using np::probe::WalkSchedule;
    WalkSchedule w;
    EXPECT_TRUE(w.next(false, 0));  // the first sample
    int walks = 0;
    for (int i = 0; i < 100; ++i) walks += w.next(false, 0);
    EXPECT_EQ(walks, 0);
    EXPECT_TRUE(w.next(true, 0));  // a cut
    walks = 0;
    for (int i = 0; i < 100; ++i) walks += w.next(false, i < 3 ? 2 : 3);  // two, then a third
    EXPECT_EQ(walks, WalkSchedule::kWalksAfterClaim + 3);
    EXPECT_FALSE(w.next(false, 3));
}

// Without the tc programs' count (the kernel-counters tier) the tables are walked every
// kWalkEvery samples, and at each cut.
TEST(TcpSocketsWalk, WithoutTheStreamCountTheTablesAreWalkedEveryFewSamples) {
    using np::probe::WalkSchedule;
    WalkSchedule w;
    int walks = 0;
    for (int i = 0; i < 10 * WalkSchedule::kWalkEvery; ++i) walks += w.next(false, std::nullopt);
    EXPECT_EQ(walks, 10);
    EXPECT_TRUE(w.next(true, std::nullopt));
}

}  // namespace
