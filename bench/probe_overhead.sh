#!/usr/bin/env bash
# Probe overhead: iperf3 TCP over an unshaped veth pair (CPU-bound: the worst case for a
# per-packet hook), alternating runs without a probe, with np-probe attached as `run` attaches
# it and with `tcpdump -i IF -w /dev/null`; prints the median throughput ratios. Then the
# probe's own cost per program from run_time_ns/run_cnt (BPF_STATS_RUN_TIME, which
# np-probe --time-programs holds on, in COST_ROUNDS more TCP runs of their own: the statistics
# slow every program on the host, so the ratio's runs go without): tc per invocation from the
# TCP runs, tp_btf/kfree_skb per hit from a UDP overload whose drops the probe counts, each
# also net of the floor: the same figure for an empty program at the same hook (np-probe-floor),
# which on a virtual machine is mostly the cost of reading its clock twice. Last, the tc
# program's cost without any clock reads, from BPF_PROG_TEST_RUN (np-probe-testrun). The
# sampled CPU account's program (at the kernel's tick, or the probe's own timer) and the NIC
# IRQs' are timed in the TCP runs, every program's share of a core listed.
#
#   sudo bash bench/probe_overhead.sh [build-dir]      (ROUNDS=7 SECS=5 COST_ROUNDS=3 to change;
#   PROBE_ARGS=--no-cpu-account leaves the CPU account out)
#
# Run it on a quiet machine (check `uptime`): other load moves the medians.
set -euo pipefail
build=$(realpath "${1:-build}")
probe=$build/src/probe/np-probe
floor=$build/bench/np-probe-floor
testrun=$build/bench/np-probe-testrun
rounds=${ROUNDS:-7}
secs=${SECS:-5}
cost_rounds=${COST_ROUNDS:-3}
[ "$cost_rounds" -ge 1 ] 2>/dev/null || { echo "bench: COST_ROUNDS must be 1 or more, not '$cost_rounds'" >&2; exit 2; }
for bin in "$probe" "$floor" "$testrun"; do [ -x "$bin" ] || { echo "bench: $bin not built" >&2; exit 3; }; done
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (namespaces, BPF)" >&2; exit 3; }
command -v tcpdump >/dev/null || { echo "bench: tcpdump missing (scripts/setup.sh installs it)" >&2; exit 3; }

# shellcheck source=bench/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
bench_pair bench 26

gbps() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second']/1e9)" "$1"; }
run_iperf() { ip netns exec $a iperf3 -c 198.18.26.2 -p 5201 -t "$secs" -J >"$1"; gbps "$1"; }

# np-probe on $1/$2 writing its trace to $3, with PROBE_ARGS and any further arguments.
# shellcheck disable=SC2086 # PROBE_ARGS are words on purpose
start_probe() { bench_probe_start "$1" "$2" --out "$3" ${PROBE_ARGS:-} "${@:4}"; }

# The empty programs on $1/$2 while "$3" runs; their costs go to $4.
with_floor() {
  local fifo=$work/fifo; mkfifo "$fifo"
  ip netns exec "$1" "$floor" "$2" <"$fifo" >"$4" 2>"$work/floor.err" &
  local pid=$!
  exec {ffd}>"$fifo"; rm "$fifo"
  for _ in $(seq 100); do grep -q attached "$work/floor.err" && break; sleep 0.05; done
  eval "$3" >/dev/null
  echo stop >&"$ffd"; exec {ffd}>&-; wait "$pid"
}

base=() with=() dump=()
for r in $(seq "$rounds"); do
  # Alternate the order so drift (thermal, other load) does not favour one mode.
  for mode in $( [ $((r % 2)) -eq 1 ] && echo "base probe dump" || echo "dump probe base"); do
    case $mode in
      base) base+=("$(run_iperf "$work/base.json")") ;;
      probe)
        start_probe $a $ifa "$work/trace-$r.json"
        with+=("$(run_iperf "$work/probe.json")")
        bench_probe_stop ;;
      dump)
        ip netns exec $a tcpdump -i $ifa -w /dev/null -q 2>/dev/null & dpid=$!; pids="$pids $dpid"
        sleep 1
        dump+=("$(run_iperf "$work/dump.json")")
        kill $dpid; wait $dpid 2>/dev/null || true ;;
    esac
  done
  echo "round $r: base ${base[-1]} Gbit/s, probe ${with[-1]}, tcpdump ${dump[-1]}"
done

# The programs timed, in TCP runs of their own.
for r in $(seq "$cost_rounds"); do
  start_probe $a $ifa "$work/trace-cost-$r.json" --time-programs
  run_iperf "$work/cost.json" >/dev/null
  bench_probe_stop
done

# UDP overload with the probe on the receiver: its socket drops, kfree_skb counts them.
ip netns exec $b iperf3 -s -p 5202 -1 >/dev/null 2>&1 & pids="$pids $!"
sleep 0.3
start_probe $b $ifb "$work/trace-udp.json" --time-programs
ip netns exec $a iperf3 -c 198.18.26.2 -p 5202 -u -b 0 -l 1448 -w 64K -t 3 -J >"$work/udp.json"
bench_probe_stop

# The floor: one TCP run with empty tc programs, one UDP overload with an empty kfree_skb.
with_floor $a $ifa "run_iperf $work/floor-tcp-iperf.json" "$work/floor-tcp.json"
ip netns exec $b iperf3 -s -p 5202 -1 >/dev/null 2>&1 & pids="$pids $!"
sleep 0.3
with_floor $b $ifb "ip netns exec $a iperf3 -c 198.18.26.2 -p 5202 -u -b 0 -l 1448 -w 64K -t 3" \
  "$work/floor-udp.json"

python3 - "$work" "${base[*]}" "${with[*]}" "${dump[*]}" "$secs" "$cost_rounds" "$(dirname "$0")" <<'PY'
import json, statistics, sys, glob
sys.path.insert(0, sys.argv[7])
from median_ci import describe
work = sys.argv[1]
base, probe, dump = ([float(x) for x in s.split()] for s in sys.argv[2:5])
ratios = lambda xs: [x / b for x, b in zip(xs, base)]
print(f"\nthroughput (median of {len(base)} alternating runs, iperf3 TCP, unshaped veth):")
print(f"  no probe       {statistics.median(base):7.2f} Gbit/s")
print(f"  np-probe       {statistics.median(probe):7.2f} Gbit/s   ratio {describe(ratios(probe))}; goal >= 0.97")
print(f"  tcpdump -w     {statistics.median(dump):7.2f} Gbit/s   ratio {describe(ratios(dump))}")
cost = {}
timed = glob.glob(f"{work}/trace-cost-*.json") + [f"{work}/trace-udp.json"]
untimed = sorted({c["program"] for path in timed
                  for c in json.load(open(path))["probe_cost"] if c["run_cnt"] is None})
if untimed:
    sys.exit(f"bench: the probe could not time {', '.join(untimed)} "
             "(np-probe --time-programs: BPF run-time statistics unavailable)")
for path in glob.glob(f"{work}/trace-cost-*.json"):
    for c in json.load(open(path))["probe_cost"]:
        t = cost.setdefault(c["program"], [0, 0]); t[0] += c["run_time_ns"]; t[1] += c["run_cnt"]
udp = {c["program"]: c for c in json.load(open(f"{work}/trace-udp.json"))["probe_cost"]}
per = lambda ns, n: ns / n if n else float("nan")
tc_ns = sum(cost[p][0] for p in ("np_tc_ingress", "np_tc_egress"))
tc_n = sum(cost[p][1] for p in ("np_tc_ingress", "np_tc_egress"))
floor_tc = json.load(open(f"{work}/floor-tcp.json"))
floor_udp = json.load(open(f"{work}/floor-udp.json"))
f_in, f_out = floor_tc["floor_tc_ingress"], floor_tc["floor_tc_egress"]
f_tc = (f_in["run_time_ns"] + f_out["run_time_ns"]) / max(1, f_in["run_cnt"] + f_out["run_cnt"])
f_kfree = floor_udp["floor_kfree_skb"]["ns_per_run"]
print("\nprobe cost (run_time_ns / run_cnt; floor = an empty program at the same hook):")
print(f"  {'program':18s} {'measured':>9s} {'floor':>7s} {'net':>7s}")
for p, f in (("np_tc_ingress", f_in["ns_per_run"]), ("np_tc_egress", f_out["ns_per_run"])):
    v = per(*cost[p])
    print(f"  {p:18s} {v:7.1f}ns {f:5.1f}ns {v - f:5.1f}ns  ({cost[p][1]} runs, TCP)")
v = per(tc_ns, tc_n)
print(f"  {'tc, both hooks':18s} {v:7.1f}ns {f_tc:5.1f}ns {v - f_tc:5.1f}ns  (goal <= 60)")
k = udp["np_kfree_skb"]
v = per(k["run_time_ns"], k["run_cnt"])
print(f"  {'np_kfree_skb':18s} {v:7.1f}ns {f_kfree:5.1f}ns {v - f_kfree:5.1f}ns  (goal <= 40; {k['run_cnt']} hits, UDP overload, drops counted)")
busy_ns = sum(t[0] for t in cost.values())
seconds = int(sys.argv[6]) * float(sys.argv[5])
print(f"  all programs: {busy_ns / 1e6 / seconds:.2f} ms of CPU per second of the timed TCP runs "
      f"= {busy_ns / 1e7 / seconds:.2f} % of one core, an upper bound for the probe's effect "
      f"on a CPU-bound flow that the throughput medians above cannot resolve on a noisy host")
# Every program by its share of a core; the CPU account's own are its sampler (a stack walk at
# each tick: np_account_on_tick at the kernel's, which also runs for every other hrtimer that
# expires, or np_account_tick at the probe's own timer) and the NIC IRQs' handlers (none on a
# veth): no cost per packet.
print("  by program, in the timed TCP runs:")
for p in sorted(cost, key=lambda p: -cost[p][0]):
    print(f"    {p:18s} {per(*cost[p]):7.1f}ns x {cost[p][1] / seconds:8.0f}/s = "
          f"{cost[p][0] / 1e7 / seconds:.2f} % of one core")
account = ("np_account_on_tick", "np_account_tick", "np_irq_entry", "np_irq_exit")
print(f"  the CPU account (its sampler and the NIC IRQs): "
      f"{sum(cost[p][0] for p in account if p in cost) / 1e7 / seconds:.2f} % of one core (goal <= 1)")
r = cost["np_tcp_retransmit"]
print(f"  {'np_tcp_retransmit':18s} {per(*r):7.1f}ns  ({r[1]} hits, TCP runs)")
PY
echo
# Without the clock reads: the tc program run back to back by BPF_PROG_TEST_RUN.
"$testrun"
echo
echo "rerun: sudo ROUNDS=${rounds} SECS=${secs} COST_ROUNDS=${cost_rounds}${PROBE_ARGS:+ PROBE_ARGS=$PROBE_ARGS} bash bench/probe_overhead.sh ${1:-build}"
