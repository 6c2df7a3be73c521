#!/usr/bin/env bash
# The tool's own time in `np-explain run`, side by side with the tutorial's manual steps over
# plain OpenSSH (one `ssh` per step, as the tutorial types them), on the same two testbed
# nodes in the same benchmark run. Overhead = wall time minus the time the tests themselves
# take (ping's count-1 seconds, the TCP and UDP durations), so the two are comparable.
#
#   sudo bash bench/run_overhead.sh [--runs N] [--slow-shell S]
#
# --slow-shell S makes every new SSH command on the nodes wait S seconds before it runs
# (scripts/testbed.sh --slow-shell), as on a node whose root shell start files are slow.
# Goals (issue 9): run's overhead <= 3 s with a 1 s shell start, and <= 0.5x the manual steps'.
# Needs root and the build (scripts/setup.sh); brings its own testbed up and down (state
# /run/np-bench-testbed), so no other testbed may be up.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3
slow=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --slow-shell) slow=$2; shift 2 ;;
        *) echo "usage: bench/run_overhead.sh [--runs N] [--slow-shell S]" >&2; exit 2 ;;
    esac
done
np=build/src/cli/np-explain
state=/run/np-bench-testbed
ping_count=3 tcp_s=3 udp_s=3
test_s=$((ping_count - 1 + tcp_s + udp_s))
run_dir=$(mktemp -d /tmp/np-bench-run.XXXXXX)
cleanup() {
    bash scripts/testbed.sh down --state "$state" >/dev/null 2>&1 || true
    rm -rf "$run_dir"
}
trap cleanup EXIT
bash scripts/testbed.sh up --state "$state" --slow-shell "$slow" >/dev/null
cfg=$state/ssh_config

now() { date +%s.%N; }
minus() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {printf "%.2f", b - a - t}'; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# The tutorial's manual steps (its "Manual" section), one ssh per step. The server is started
# as a daemon with a pidfile: PID 1 on the testbed's machine need not be systemd.
manual() {
    local a="ssh -F $cfg node1-1" b="ssh -F $cfg node1-2" pf=/run/np-bench-iperf3.pid
    $a "ip link set enp0s25 up; ip addr replace 198.18.0.1/24 dev enp0s25"
    $b "ip link set enp0s25 up; ip addr replace 198.18.0.2/24 dev enp0s25"
    $a "iperf3 -s -p 5201 -D -I $pf"
    $b "ping -c $ping_count -I enp0s25 198.18.0.1" >/dev/null
    $b "iperf3 -c 198.18.0.1 -t $tcp_s" >/dev/null
    $b "iperf3 -c 198.18.0.1 -u -b 1G -t $udp_s" >/dev/null
    $a "kill \$(cat $pf)"
    $a "ip addr del 198.18.0.1/24 dev enp0s25"
    $b "ip addr del 198.18.0.2/24 dev enp0s25"
}

ours=() theirs=()
for i in $(seq "$runs"); do
    t0=$(now)
    "$np" run node1-1 node1-2 --ssh-config "$cfg" --params "$state/params.yml" \
        --ping-count $ping_count --tcp-duration $tcp_s --udp-duration $udp_s \
        --run-dir "$run_dir" --json >/dev/null 2>"$run_dir/err" ||
        { echo "np-explain run $i failed:" >&2; cat "$run_dir/err" >&2; exit 1; }
    t1=$(now)
    manual
    t2=$(now)
    ours+=("$(minus "$t0" "$t1" "$test_s")")
    theirs+=("$(minus "$t1" "$t2" "$test_s")")
    printf 'round %d: np-explain run overhead %s s, manual OpenSSH steps overhead %s s (tests %d s)\n' \
        "$i" "${ours[-1]}" "${theirs[-1]}" "$test_s"
done
m_ours=$(median "${ours[@]}")
m_theirs=$(median "${theirs[@]}")
ratio=$(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a / b}')
printf 'median of %d, shell start +%s s: np-explain run %.2f s, manual steps %.2f s, ratio %s (goals: <= 3 s and <= 0.5 with a 1 s shell start)\n' \
    "$runs" "$slow" "$m_ours" "$m_theirs" "$ratio"
printf 'machine: %s, %s CPUs, load average %s\n' "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "rerun: sudo bash bench/run_overhead.sh --runs $runs --slow-shell $slow"
