#!/usr/bin/env bash
# np-probe's own process: its threads' on-CPU time (/proc/PID/task/*/schedstat, exact, not the
# tick-sampled utime) counting an idle veth pair, then during an iperf3 TCP test over it, for
# each VARIANT (LABEL:NP-PROBE OPTIONS; default: every tier). What it measures is the sampler's
# reads in user space and in the kernel on its behalf (the socket-table walks above all:
# src/probe/walk_schedule.hpp), not its BPF programs, which probe_overhead.sh times.
#
#   sudo bash bench/probe_process_cpu.sh [build-dir] [LABEL:OPTIONS ...]   (SECS=6)
set -euo pipefail
build=$(realpath "${1:-build}")
shift || true
probe=$build/src/probe/np-probe
secs=${SECS:-6}
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "bench: SECS must be a whole number of seconds, not '$secs'" >&2; exit 2; }
[ -x "$probe" ] || { echo "bench: $probe not built" >&2; exit 3; }
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (namespaces, BPF)" >&2; exit 3; }
variants=("$@")
[[ ${#variants[@]} -gt 0 ]] || variants=("full:--require-tier full"
    "drops-without-reasons:--max-tier drops-without-reasons --require-tier drops-without-reasons"
    "tc-counters:--max-tier tc-counters --require-tier tc-counters"
    "kernel-counters:--max-tier kernel-counters")
for v in "${variants[@]}"; do
  [[ $v == *:* ]] || { echo "bench: variant '$v' is not LABEL:OPTIONS" >&2; exit 2; }
done

# shellcheck source=bench/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
bench_pair cpu 28

# The probe's threads' time on a CPU so far, in ns.
on_cpu() { cat /proc/"$1"/task/*/schedstat | awk '{ns += $1} END {print ns}'; }
ms_per_s() { echo $(( ($2 - $1) / 1000000 / $3 )); }

echo "np-probe's own on-CPU time, ms per second (${secs} s idle after a 1.5 s start, then ${secs} s of an iperf3 TCP test from its second second):"
for v in "${variants[@]}"; do
  label=${v%%:*} opts=${v#*:}
  # shellcheck disable=SC2086 # the options are words on purpose
  bench_probe_start "$a" "$ifa" --out "$work/trace.json" $opts
  sleep 1.5
  x=$(on_cpu "$probe_pid"); sleep "$secs"; y=$(on_cpu "$probe_pid")
  ip netns exec "$a" iperf3 -c 198.18.28.2 -p 5201 -t $((secs + 2)) >/dev/null & ipid=$!
  sleep 1
  u=$(on_cpu "$probe_pid"); sleep "$secs"; w=$(on_cpu "$probe_pid")
  wait "$ipid"
  bench_probe_stop
  printf '  %-24s idle %4d   during the test %4d   np-probe %s\n' "$label" \
    "$(ms_per_s "$x" "$y" "$secs")" "$(ms_per_s "$u" "$w" "$secs")" "${opts:-(defaults)}"
done
echo
echo "rerun: sudo SECS=${secs} bash bench/probe_process_cpu.sh ${build}$([ $# -eq 0 ] || printf " '%s'" "$@")"
