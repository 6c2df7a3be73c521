// The parsers of what procfs and cgroupfs say about the test's processes (common/
// process_stats.hpp), on text as the kernel prints it: both cgroup versions, a command name
// with spaces and parentheses, a mount whose root is not the hierarchy's.
#include <gtest/gtest.h>

#include "common/process_stats.hpp"

namespace np {
namespace {

TEST(ProcessStats, SocketsOnThePortAreFoundByEitherEnd) {
    // 5201 is 0x1451: a listener (local), a client's connection (remote), and one on 22.
    const std::string tcp =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
        "timeout inode\n"
        "   0: 00000000:1451 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
        "0 41001 1 0000000000000000 100 0 0 10 0\n"
        "   1: 020012C6:C350 010012C6:1451 01 00000000:00000000 00:00000000 00000000     0        "
        "0 41002 1 0000000000000000 20 4 30 10 -1\n"
        "   2: 010013C6:0016 FE0013C6:D431 01 00000000:00000000 02:0009BD2E 00000000     0        "
        "0 41003 2 0000000000000000 20 4 29 10 -1\n"
        "   3: 020012C6:C352 010012C6:1451 06 00000000:00000000 03:00000F3D 00000000     0        "
        "0 0 3 0000000000000000\n";
    EXPECT_EQ(socket_inodes_on_port(tcp, 5201), (std::vector<uint64_t>{41001, 41002}));
    const std::string tcp6 =
        "  sl  local_address                         remote_address                        st "
        "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 00000000000000000000000000000000:1451 00000000000000000000000000000000:0000 0A "
        "00000000:00000000 00:00000000 00000000     0        0 52000 1 0000000000000000 100 0 0 "
        "10 0\n";
    EXPECT_EQ(socket_inodes_on_port(tcp6, 5201), (std::vector<uint64_t>{52000}));
    EXPECT_TRUE(socket_inodes_on_port(tcp6, 5301).empty());
    EXPECT_TRUE(socket_inodes_on_port("", 5201).empty());
}

TEST(ProcessStats, ProcStatReadsPastACommandWithSpacesAndParentheses) {
    const std::string stat =
        "4242 (iperf3 (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 130 0 0 20 0 1 0 "
        "987654 12345678 900 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
    const auto p = parse_proc_stat(stat);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->comm, "iperf3 (x) y");
    EXPECT_EQ(p->cpu_ticks, 380);
    EXPECT_EQ(p->start_ticks, 987654u);
    EXPECT_FALSE(p->exited);
    // Exited and not yet reaped: its cgroup would read as the root's, so its readings end here.
    std::string zombie = stat;
    zombie.replace(zombie.find(") S ") + 2, 1, "Z");
    ASSERT_TRUE(parse_proc_stat(zombie));
    EXPECT_TRUE(parse_proc_stat(zombie)->exited);
    EXPECT_FALSE(parse_proc_stat("4242 (iperf3) S 1 2"));
    EXPECT_FALSE(parse_proc_stat("garbage"));
}

TEST(ProcessStats, SchedstatGivesAThreadsTimeOnACpuAndWaitingForOne) {
    const auto s = parse_schedstat("3401606000 77483123 3120\n");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->on_cpu_ns, 3401606000);
    EXPECT_EQ(s->wait_ns, 77483123);
    EXPECT_FALSE(parse_schedstat(""));
    EXPECT_FALSE(parse_schedstat("3401606000 77483123"));
    EXPECT_FALSE(parse_schedstat("3401606000 -5 3120"));
    EXPECT_FALSE(parse_schedstat("a b c"));
}

// A process's wait for a CPU is its threads' together: one that ends keeps what it waited, a new
// one adds its own, and an ID reused by a new thread loses neither.
TEST(ProcessStats, AProcessWaitKeepsItsEndedThreads) {
    ThreadWaits w;
    EXPECT_FALSE(w.wait_ns());
    w.add(100, {5'000, 300});
    w.add(101, {2'000, 50});
    EXPECT_EQ(w.wait_ns(), 350);
    w.add(100, {9'000, 700});  // later readings replace earlier ones
    EXPECT_EQ(w.wait_ns(), 750);
    w.add(102, {1'000, 10});  // 101 ended (read no more): its 50 stays
    EXPECT_EQ(w.wait_ns(), 760);
    w.add(101, {400, 5});  // 101 again, but a new thread: the ended one's 50 stays too
    EXPECT_EQ(w.wait_ns(), 765);
    // A kernel that keeps no scheduling statistics: zeros for threads that ran.
    ThreadWaits none;
    none.add(7, {0, 0});
    none.add(8, {0, 0});
    EXPECT_FALSE(none.wait_ns());
}

TEST(ProcessStats, CgroupPathsOfBothVersions) {
    const auto hybrid = parse_proc_cgroup(
        "9:name=systemd:/user.slice\n4:cpu,cpuacct:/np-testbed-node2-1\n3:cpuacct:/x\n0::/\n");
    ASSERT_TRUE(hybrid.cpu_v1);
    EXPECT_EQ(*hybrid.cpu_v1, "/np-testbed-node2-1");
    ASSERT_TRUE(hybrid.unified);
    EXPECT_EQ(*hybrid.unified, "/");
    const auto v2 = parse_proc_cgroup("0::/system.slice/ssh.service\n");
    EXPECT_FALSE(v2.cpu_v1);
    EXPECT_EQ(v2.unified.value_or(""), "/system.slice/ssh.service");
}

TEST(ProcessStats, CgroupMountsAndTheDirectoryOfAPath) {
    const auto m = parse_cgroup_mounts(
        "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup "
        "rw,cpu,cpuacct\n"
        "32 30 0:29 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
        "40 30 0:37 /inner /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
    EXPECT_EQ(m.cpu_v1, "/sys/fs/cgroup/cpu,cpuacct");
    EXPECT_EQ(m.unified, "/sys/fs/cgroup/unified");
    EXPECT_EQ(m.unified_root, "/inner");
    EXPECT_EQ(cgroup_dir(m.cpu_v1, m.cpu_v1_root, "/"), "/sys/fs/cgroup/cpu,cpuacct");
    EXPECT_EQ(cgroup_dir(m.cpu_v1, m.cpu_v1_root, "/a/b"), "/sys/fs/cgroup/cpu,cpuacct/a/b");
    EXPECT_EQ(cgroup_dir(m.unified, m.unified_root, "/inner/c"), "/sys/fs/cgroup/unified/c");
    EXPECT_EQ(cgroup_dir(m.unified, m.unified_root, "/inner"), "/sys/fs/cgroup/unified");
    EXPECT_EQ(cgroup_dir(m.unified, m.unified_root, "/innermost"), "");
    EXPECT_EQ(cgroup_dir("", "/", "/a"), "");
    EXPECT_TRUE(parse_cgroup_mounts("").cpu_v1.empty());
}

TEST(ProcessStats, CpuStatAndLimitsOfBothVersions) {
    const auto v2 = parse_cpu_stat(
        "usage_usec 120000\nuser_usec 80000\nsystem_usec 40000\nnr_periods 30\nnr_throttled "
        "28\nthrottled_usec 2610000\n");
    EXPECT_TRUE(v2.has_bandwidth);
    EXPECT_EQ(v2.periods, 30);
    EXPECT_EQ(v2.throttled_periods, 28);
    EXPECT_EQ(v2.throttled_us, 2610000);
    const auto v1 = parse_cpu_stat("nr_periods 31\nnr_throttled 29\nthrottled_time 2700000000\n");
    EXPECT_EQ(v1.throttled_us, 2700000);
    EXPECT_FALSE(parse_cpu_stat("usage_usec 5\n").has_bandwidth);  // no cpu controller for it
    EXPECT_DOUBLE_EQ(parse_cpu_max("5000 100000\n").value_or(0), 0.05);
    EXPECT_FALSE(parse_cpu_max("max 100000\n"));
    EXPECT_FALSE(parse_cpu_max(""));
    EXPECT_DOUBLE_EQ(parse_cfs_quota("200000\n", "100000\n").value_or(0), 2.0);
    EXPECT_FALSE(parse_cfs_quota("-1\n", "100000\n"));
}

}  // namespace
}  // namespace np
