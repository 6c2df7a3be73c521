#!/usr/bin/env bash
# The tool's own overhead in `np-explain run`: wall time minus the time the tests themselves
# take (ping's count-1 seconds, the TCP and UDP durations). Runs `run --local` N times on the
# 100M testbed, so the figure includes bringing the testbed up and down (~0.5 s), which a run
# against real nodes does not pay. Goal: under 3 s.
#   bash bench/run_overhead.sh [N]        (as root, after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
np=build/src/cli/np-explain
ping_count=3 tcp_s=3 udp_s=3
test_s=$((ping_count - 1 + tcp_s + udp_s))
run_dir=$(mktemp -d /tmp/np-bench-run.XXXXXX)
trap 'rm -rf "$run_dir"' EXIT
overheads=()
for i in $(seq "$n"); do
    start=$(date +%s.%N)
    "$np" run --local --ping-count $ping_count --tcp-duration $tcp_s --udp-duration $udp_s \
        --run-dir "$run_dir" --json >/dev/null 2>&1 || { echo "run $i failed" >&2; exit 1; }
    end=$(date +%s.%N)
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')
    overheads+=("$(awk -v w="$wall" -v t="$test_s" 'BEGIN {print w - t}')")
    printf 'run %d: wall %.2f s, tests %d s, overhead %.2f s\n' "$i" "$wall" "$test_s" "${overheads[-1]}"
done
median=$(printf '%s\n' "${overheads[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
printf 'np-explain run overhead (median of %d, incl. testbed up/down): %.2f s (goal < 3 s); load average: %s\n' \
    "$n" "$median" "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "rerun: sudo bash bench/run_overhead.sh $n"
