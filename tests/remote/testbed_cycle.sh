#!/usr/bin/env bash
# scripts/testbed.sh end to end with OpenSSH's own client: up, log in to both nodes with the
# generated ssh_config, check the data segment and the wrong port, down, nothing left, down
# again. Needs root. Usage: tests/remote/testbed_cycle.sh [STATE_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
state=${1:-/run/np-testbed-cycle}
tb() { bash scripts/testbed.sh "$@" --state "$state"; }
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
trap 'tb down' EXIT

# A state dir below a dir others can write (/tmp): refused at once, naming it, as no login
# would work there (sshd's StrictModes), and nothing made.
if out=$(bash scripts/testbed.sh up --profile 100M --row auto --state /tmp/np-testbed-cycle-strict 2>&1); then
    fail "a state dir under /tmp was accepted"
fi
[[ $out == *"/tmp is owned by uid 0 with mode 1777"*StrictModes* ]] || fail "state under /tmp: $out"
[[ ! -e /tmp/np-testbed-cycle-strict ]] || fail "a refused up made its state dir"

# On a free row (row 1 is left to `run --local`), as the suite's own testbeds are.
tb up --profile 100M --row auto
[[ $(<"$state/testbed.conf") =~ ^row=([2-9])\ nodes=2$ ]] || fail "testbed.conf: $(<"$state/testbed.conf")"
r=${BASH_REMATCH[1]}
a=node$r-1 b=node$r-2 ctl=198.19.$((r - 1)) data=198.18.$((2 * r - 2)) wrong=198.18.$((2 * r - 1))
pfx=nptb$r
ssh_node() { ssh -F "$state/ssh_config" "$@" </dev/null; }

# Each node answers on its own sshd, as root, inside its own namespace, with a TMPDIR of its own.
[[ $(ssh_node "$a" 'ip -br -4 addr show ctl0') == *$ctl.1/24* ]] || fail "$a ctl0"
[[ $(ssh_node "$b" 'ip -br -4 addr show ctl0') == *$ctl.2/24* ]] || fail "$b ctl0"
[[ $(ssh_node "$a" 'id -u') == 0 ]] || fail "not root on $a"
[[ $(ssh_node "$a" 'echo $TMPDIR') == "/tmp/np-testbed-row$r/$a" ]] || fail "TMPDIR of $a"
[[ -d /tmp/np-testbed-row$r/$b ]] || fail "no TMPDIR for $b"
ssh_node "$a" "test -s $(grep -o '/.*omf-image-name' "$state/params.yml")" || fail "marker"
ssh_node "$a" 'tc qdisc show dev enp0s25' | grep -q 'tbf' || fail "100M profile not applied"

# enp0s25 is one segment; enp3s0 has carrier on both nodes but they do not share a segment.
ssh_node "$a" "ip addr add $data.1/24 dev enp0s25 && ip addr add $wrong.1/24 dev enp3s0"
ssh_node "$b" "ip addr add $data.2/24 dev enp0s25 && ip addr add $wrong.2/24 dev enp3s0"
ssh_node "$b" "ping -c 1 -W 2 -I enp0s25 $data.1" >/dev/null || fail "data segment"
[[ $(ssh_node "$b" 'cat /sys/class/net/enp3s0/carrier') == 1 ]] || fail "enp3s0 carrier"
if ssh_node "$b" "ping -c 1 -W 1 -I enp3s0 $wrong.1" >/dev/null; then
    fail "enp3s0 reached the other node"
fi

# A node sees the machine's cgroups, as a real node does; node-cpu puts the node's tools — and
# only them — into a cgroup of its own with that CPU limit, and off (or down) stops that, moves
# them back and removes the cgroup.
cpu_base=""
if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cpu_base=/sys/fs/cgroup
elif [[ -f /sys/fs/cgroup/cpu/cgroup.procs ]]; then
    cpu_base=/sys/fs/cgroup/cpu
fi
if [[ -n $cpu_base ]]; then
    ssh_node "$a" "test -f $cpu_base/cgroup.procs" || fail "$a does not see $cpu_base"
    tb node-cpu --node "$a" --cpu-limit 0.05
    cg=$cpu_base/np-testbed-$a
    limit=$(cat "$cg/cpu.max" 2>/dev/null || echo "$(<"$cg/cpu.cfs_quota_us") $(<"$cg/cpu.cfs_period_us")")
    [[ $limit == "5000 100000" ]] || fail "node-cpu limit: $limit"
    ssh_node "$a" "iperf3 -s -D -p 5299 --pidfile /tmp/np-testbed-row$r/$a/iperf3.pid"
    tool=""
    for _ in $(seq 50); do
        tool=$(cat "/tmp/np-testbed-row$r/$a/iperf3.pid" 2>/dev/null || true)
        [[ -n $tool ]] && grep -qs "/np-testbed-$a\$" "/proc/$tool/cgroup" && break
        sleep 0.1
    done
    grep -qs "/np-testbed-$a\$" "/proc/$tool/cgroup" || fail "$a's iperf3 is not in its cgroup"
    [[ $(ssh_node "$a" 'cat /proc/self/cgroup') != *"/np-testbed-$a"* ]] || fail "a shell was limited too"
    if tb node-cpu --node "$a" --cpu-limit 0.001 2>/dev/null; then fail "a limit below 0.01 taken"; fi
    # A tool is in the cgroup as it starts (a client whose test is short is limited too), and
    # the shell that started it is not: read once the wrapper has become iperf3 (its exec of
    # the real binary, however long a slow machine takes to get there), by the first word of its
    # command line: the forked shell's, before any exec, holds this very text (seen once in the
    # suite, under load: the shell's own cgroup read).
    [[ $(ssh_node "$a" 'iperf3 -s -1 -p 5298 & p=$!
        for i in $(seq 1200); do
            head -zn1 /proc/$p/cmdline 2>/dev/null | grep -qz "real/iperf3\$" && break; sleep 0.05
        done
        cat /proc/$p/cgroup; kill $p') == *"/np-testbed-$a"* ]] ||
        fail "a tool was not in its cgroup as it started"
    [[ $(ssh_node "$a" 'iperf3 --version >/dev/null; cat /proc/self/cgroup') != *"/np-testbed-$a"* ]] ||
        fail "the shell that ran a tool was limited too"
    tb node-cpu --node "$a" --cpu-limit off
    [[ -e $cg ]] && fail "node-cpu off left $cg"
    grep -qs "/np-testbed-$a\$" "/proc/$tool/cgroup" && fail "iperf3 still limited"
    [[ $(ssh_node "$a" 'grep -c " /usr/bin/iperf3 " /proc/self/mountinfo') == 0 ]] ||
        fail "node-cpu off left the wrapper over iperf3"
    kill "$tool"
    tb node-cpu --node "$b" --cpu-limit 0.5  # left for down to remove
fi

# A host key that is not in known_hosts is refused (StrictHostKeyChecking yes).
: >"$state/empty_known_hosts"
if ssh -F "$state/ssh_config" -o UserKnownHostsFile="$state/empty_known_hosts" "$a" true \
    </dev/null 2>/dev/null; then
    fail "unknown host key accepted"
fi

# `up` on top of a running testbed refuses instead of half-building a second one.
if tb up --row auto 2>/dev/null; then fail "second up succeeded"; fi

# What a killed run and a killed tutorial mode left on the nodes (their undo steps, a pidfile)
# goes with the namespaces: a row made anew must not start with another run's leftovers.
mkdir -p "/run/np-explain/$a/20261207T184428Z-7897" "/run/network-performance/$b"
echo "np_stop_pid /run/np-explain/$a/20261207T184428Z-7897/iperf3.pid iperf3" >"/run/np-explain/$a/20261207T184428Z-7897/20-server.undo"
echo 4242 >"/run/network-performance/$b/client.pid"

trap - EXIT
tb down
tb down  # safe twice
[[ -e /run/np-explain/$a || -e /run/network-performance/$b ]] && fail "down left the nodes' run state"
ip netns list | grep -Eq "^node$r-[12]\b" && fail "namespace left"
ip -br link | grep -q "^$pfx-" && fail "link left"
[[ -e $state ]] && fail "state dir left"
[[ -n $cpu_base && -e $cpu_base/np-testbed-$b ]] && fail "down left $b's cgroup"
[[ -e /tmp/np-testbed-row$r ]] && fail "the nodes' TMPDIRs left"
pgrep -f "sshd -f $state/" >/dev/null && fail "sshd left"
echo "PASS testbed cycle (row $r)"
