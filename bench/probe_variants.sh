#!/usr/bin/env bash
# The probe's throughput cost by tier and option, side by side: iperf3 TCP over an unshaped veth
# pair (CPU-bound: the worst case), each round one run without a probe and one with np-probe
# for each VARIANT (LABEL:NP-PROBE OPTIONS), in an order that alternates between rounds so drift
# favours none; prints each variant's median ratio to the runs without a probe. With RATE
# (iperf3 -b, e.g. RATE=10G: below what the CPUs can carry) the throughput is held and the cost
# shows as CPU instead: the host's busy time (/proc/stat, every CPU) per gigabyte received, each
# variant's median ratio to it without a probe — steadier than a CPU-bound flow's throughput,
# which moves with whatever else the machine's host runs.
#
# IPERF_ARGS adds to the iperf3 client's options, e.g. IPERF_ARGS='-u -b 0 -l 1400' for a UDP
# flow of one datagram a packet (the probe's cost per packet at its largest).
#
#   sudo bash bench/probe_variants.sh [build-dir] [LABEL[@NP-PROBE]:OPTIONS ...]   (ROUNDS=11 SECS=3 RATE= IPERF_ARGS=)
#
# A variant's LABEL@PATH runs the np-probe at PATH instead of the build dir's: another commit's
# build beside this one's, alternated round by round in the same run.
#
# Default variants: every tier the probe can be held to (each required, so a host that allows
# less stops the bench instead of mislabelling it), and the full tier without the CPU account.
# Run it on a quiet machine (check `uptime`): other load moves the medians.
set -euo pipefail
build=$(realpath "${1:-build}")
shift || true
probe=$build/src/probe/np-probe
rounds=${ROUNDS:-11}
secs=${SECS:-3}
rate=${RATE:-}
iperf_args=${IPERF_ARGS:-}
variants=("$@")
[[ ${#variants[@]} -gt 0 ]] || variants=("kernel-counters:--max-tier kernel-counters"
    "tc-counters:--max-tier tc-counters --require-tier tc-counters"
    "drops-without-reasons:--max-tier drops-without-reasons --require-tier drops-without-reasons"
    "full, no CPU account:--no-cpu-account --require-tier full" "full:--require-tier full")
[ -x "$probe" ] || { echo "bench: $probe not built" >&2; exit 3; }
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (namespaces, BPF)" >&2; exit 3; }
for v in "${variants[@]}"; do
  [[ $v == *:* ]] || { echo "bench: variant '$v' is not LABEL:OPTIONS" >&2; exit 2; }
  label=${v%%:*}
  [[ $label != *@* || -x ${label#*@} ]] || { echo "bench: ${label#*@} (variant '$label') is not an executable" >&2; exit 2; }
done

# shellcheck source=bench/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
bench_pair var 31

# The wall clock and every CPU's time not spent busy so far, in seconds: idle and iowait (which
# the kernel times exactly where a CPU idles without its tick) and steal. Busy time is the rest:
# the kernel's user and system times come from its tick, which a test that sleeps between bursts
# of work (iperf3 -b) mostly misses (here: 4 ticks busy in a 3-s test at 10 Gbit/s).
not_busy() {
  echo "$(date +%s.%N) $(awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.2f", ($5 + $6 + $9) / hz }' /proc/stat)"
}

# One test: "GBIT_PER_S BUSY_SECONDS_PER_GB".
gbps() {
  local t0 t1
  t0=$(not_busy)
  # shellcheck disable=SC2086 # IPERF_ARGS word-split on purpose
  ip netns exec $a iperf3 -c 198.18.31.2 -p 5201 -t "$secs" ${rate:+-b "$rate"} $iperf_args -J >"$work/iperf.json"
  t1=$(not_busy)
  python3 -c "
import json, os, sys
e = json.load(open(sys.argv[1]))['end']['sum_received']
(w0, n0), (w1, n1) = (map(float, t.split()) for t in sys.argv[2:4])
busy = (w1 - w0) * os.cpu_count() - (n1 - n0)
print(e['bits_per_second'] / 1e9, busy / (e['bytes'] / 1e9))" "$work/iperf.json" "$t0" "$t1"
}

# One run with np-probe counting for the variant LABEL[@NP-PROBE]:OPTIONS in $1 (the options
# word-split on purpose).
with_probe() {
  local label=${1%%:*} probe=$probe
  [[ $label == *@* ]] && probe=${label#*@}
  # shellcheck disable=SC2086
  bench_probe_start "$a" "$ifa" ${1#*:}
  gbps
  bench_probe_stop
}

# results: one line per run, "INDEX GBPS" (index 0: no probe, i: variants[i-1]).
: >"$work/results"
for r in $(seq "$rounds"); do
  order=$(seq 0 "${#variants[@]}")
  [ $((r % 2)) -eq 0 ] && order=$(seq "${#variants[@]}" -1 0)
  got=()
  for i in $order; do
    if [ "$i" -eq 0 ]; then g=$(gbps); else g=$(with_probe "${variants[i - 1]}"); fi
    echo "$r $i $g" >>"$work/results"
    got[i]=$(printf '%.1f' "${g% *}")
  done
  echo "round $r: no probe ${got[0]}, then each variant in turn ${got[*]:1} Gbit/s"
done

python3 - "$work/results" "$(dirname "$0")" "$rate" "${variants[@]}" <<'PY'
import statistics, sys
sys.path.insert(0, sys.argv.pop(2))
from median_ci import describe
runs, cpu = {}, {}
for line in open(sys.argv[1]):
    r, i, g, c = line.split()
    runs.setdefault(int(i), {})[int(r)] = float(g)
    cpu.setdefault(int(i), {})[int(r)] = float(c)
rate = sys.argv[2]
base, base_cpu = runs[0], cpu[0]
print(f"\nno probe: median {statistics.median(base.values()):.2f} Gbit/s, "
      f"{statistics.median(base_cpu.values()):.3f} busy CPU-seconds per GB, over {len(base)} rounds"
      + (f" (iperf3 -b {rate})" if rate else ""))
what = "CPU per GB" if rate else "throughput"
for i, v in enumerate(sys.argv[3:], 1):
    ratios = [(cpu[i][r] / base_cpu[r]) if rate else (runs[i][r] / base[r]) for r in base]
    label, opts = v.split(":", 1)
    print(f"  {label:24s} {what} ratio {describe(ratios)}  np-probe {opts or '(defaults)'}")
PY
echo
extra=""
[ $# -gt 0 ] && extra=$(printf " '%s'" "$@")
echo "rerun: sudo ROUNDS=$rounds SECS=$secs${rate:+ RATE=$rate}${iperf_args:+ IPERF_ARGS='$iperf_args'} bash bench/probe_variants.sh ${build#"$PWD"/}$extra"
