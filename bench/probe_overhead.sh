#!/usr/bin/env bash
# Probe overhead: iperf3 TCP over an unshaped veth pair (CPU-bound: the worst case for a
# per-packet hook), alternating runs without a probe, with np-probe attached and with
# `tcpdump -i IF -w /dev/null`; prints the median throughput ratios. Then the probe's own
# cost per program from run_time_ns/run_cnt (BPF_STATS_RUN_TIME): tc per invocation from the
# TCP runs, tp_btf/kfree_skb per hit from a UDP overload whose drops the probe counts.
#
#   sudo bash bench/probe_overhead.sh [build-dir]      (ROUNDS=7 SECS=5 to change)
#
# Run it on a quiet machine (check `uptime`): other load moves the medians.
set -euo pipefail
build=$(realpath "${1:-build}")
probe=$build/src/probe/np-probe
rounds=${ROUNDS:-7}
secs=${SECS:-5}
[ -x "$probe" ] || { echo "bench: $probe not built" >&2; exit 3; }
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (namespaces, BPF)" >&2; exit 3; }
command -v tcpdump >/dev/null || { echo "bench: tcpdump missing (scripts/setup.sh installs it)" >&2; exit 3; }

a=npp-bench-a b=npp-bench-b ifa=npp-bench-a0 ifb=npp-bench-b0
work=$(mktemp -d /tmp/npp-bench.XXXXXX)
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del $a 2>/dev/null || true
  ip netns del $b 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
ip netns add $a; ip netns add $b
ip link add $ifa netns $a type veth peer name $ifb netns $b
ip -n $a addr add 198.18.26.1/24 dev $ifa; ip -n $b addr add 198.18.26.2/24 dev $ifb
ip -n $a link set $ifa up; ip -n $b link set $ifb up
ip netns exec $b iperf3 -s -p 5201 >/dev/null 2>&1 & server=$!; pids="$pids $server"
sleep 0.5

gbps() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second']/1e9)" "$1"; }
run_iperf() { ip netns exec $a iperf3 -c 198.18.26.2 -p 5201 -t "$secs" -J >"$1"; gbps "$1"; }

# np-probe on $1/$2 with stdin on a pipe; sets probe_pid and probe_fd.
start_probe() {
  local fifo=$work/fifo; mkfifo "$fifo"
  ip netns exec "$1" "$probe" --iface "$2" --out "$3" <"$fifo" >/dev/null 2>"$work/probe.err" &
  probe_pid=$!
  exec {probe_fd}>"$fifo"; rm "$fifo"
  for _ in $(seq 100); do grep -q counting "$work/probe.err" && return; sleep 0.05; done
  echo "bench: probe did not start: $(cat "$work/probe.err")" >&2; exit 3
}
stop_probe() { echo stop >&"$probe_fd"; exec {probe_fd}>&-; wait "$probe_pid"; }

base=() with=() dump=()
for r in $(seq "$rounds"); do
  # Alternate the order so drift (thermal, other load) does not favour one mode.
  for mode in $( [ $((r % 2)) -eq 1 ] && echo "base probe dump" || echo "dump probe base"); do
    case $mode in
      base) base+=("$(run_iperf "$work/base.json")") ;;
      probe)
        start_probe $a $ifa "$work/trace-$r.json"
        with+=("$(run_iperf "$work/probe.json")")
        stop_probe ;;
      dump)
        ip netns exec $a tcpdump -i $ifa -w /dev/null -q 2>/dev/null & dpid=$!; pids="$pids $dpid"
        sleep 1
        dump+=("$(run_iperf "$work/dump.json")")
        kill $dpid; wait $dpid 2>/dev/null || true ;;
    esac
  done
  echo "round $r: base ${base[-1]} Gbit/s, probe ${with[-1]}, tcpdump ${dump[-1]}"
done

# UDP overload with the probe on the receiver: its socket drops, kfree_skb counts them.
ip netns exec $b iperf3 -s -p 5202 -1 >/dev/null 2>&1 & pids="$pids $!"
sleep 0.3
start_probe $b $ifb "$work/trace-udp.json"
ip netns exec $a iperf3 -c 198.18.26.2 -p 5202 -u -b 0 -l 1448 -w 64K -t 3 -J >"$work/udp.json"
stop_probe

python3 - "$work" "${base[*]}" "${with[*]}" "${dump[*]}" <<'PY'
import json, statistics, sys, glob
work = sys.argv[1]
base, probe, dump = ([float(x) for x in s.split()] for s in sys.argv[2:5])
ratio = lambda xs: statistics.median(x / b for x, b in zip(xs, base))
print(f"\nthroughput (median of {len(base)} alternating runs, iperf3 TCP, unshaped veth):")
print(f"  no probe       {statistics.median(base):7.2f} Gbit/s")
print(f"  np-probe       {statistics.median(probe):7.2f} Gbit/s   ratio {ratio(probe):.3f}  (goal >= 0.97)")
print(f"  tcpdump -w     {statistics.median(dump):7.2f} Gbit/s   ratio {ratio(dump):.3f}")
cost = {}
for path in glob.glob(f"{work}/trace-[0-9]*.json"):
    for c in json.load(open(path))["probe_cost"]:
        t = cost.setdefault(c["program"], [0, 0]); t[0] += c["run_time_ns"]; t[1] += c["run_cnt"]
udp = {c["program"]: c for c in json.load(open(f"{work}/trace-udp.json"))["probe_cost"]}
per = lambda ns, n: ns / n if n else float("nan")
tc_ns = sum(cost[p][0] for p in ("np_tc_ingress", "np_tc_egress"))
tc_n = sum(cost[p][1] for p in ("np_tc_ingress", "np_tc_egress"))
print("\nprobe cost (run_time_ns / run_cnt):")
for p in ("np_tc_ingress", "np_tc_egress"):
    print(f"  {p:18s} {per(*cost[p]):6.1f} ns/run  ({cost[p][1]} runs, TCP runs)")
print(f"  tc, both hooks     {per(tc_ns, tc_n):6.1f} ns/run  (goal <= 60)")
k = udp["np_kfree_skb"]
print(f"  np_kfree_skb       {per(k['run_time_ns'], k['run_cnt']):6.1f} ns/hit ({k['run_cnt']} hits, UDP overload, drops counted)  (goal <= 40)")
r = cost["np_tcp_retransmit"]
print(f"  np_tcp_retransmit  {per(*r):6.1f} ns/hit ({r[1]} hits, TCP runs)")
udp_drops = json.load(open(f"{work}/trace-udp.json"))["phases"][-1]["drops"]["total_packets"]
print(f"  (UDP overload: {udp_drops} drops counted)")
PY
echo
echo "rerun: sudo ROUNDS=${rounds} SECS=${secs} bash bench/probe_overhead.sh ${1:-build}"
