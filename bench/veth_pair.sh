# shellcheck shell=bash
# Sourced by the probe benches: `bench_pair TAG OCTET` makes namespaces npp-TAG-a and npp-TAG-b
# joined by a veth pair (npp-TAG-a0 198.18.OCTET.1/24, npp-TAG-b0 .2), starts an iperf3 server on
# port 5201 in b, and sets a, b, ifa, ifb, work (a temporary dir) and pids (what cleanup stops:
# append the PIDs the bench starts). On exit, Ctrl-C or TERM everything is removed.
# `bench_probe_start NS IFACE [OPTIONS...]` and `bench_probe_stop` run $probe (np-probe) on it.
bench_pair() {
  a=npp-$1-a b=npp-$1-b ifa=npp-$1-a0 ifb=npp-$1-b0
  work=$(mktemp -d "/tmp/npp-$1.XXXXXX")
  pids=""
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  ip netns add "$a"; ip netns add "$b"
  ip link add "$ifa" netns "$a" type veth peer name "$ifb" netns "$b"
  ip -n "$a" addr add "198.18.$2.1/24" dev "$ifa"; ip -n "$b" addr add "198.18.$2.2/24" dev "$ifb"
  ip -n "$a" link set "$ifa" up; ip -n "$b" link set "$ifb" up
  ip netns exec "$b" iperf3 -s -p 5201 >/dev/null 2>&1 &
  pids="$pids $!"
  # The flow's congestion control sets what the probe's cost is measured against: BBR paces
  # with a timer per burst where no fq qdisc does it (docs/performance.md, "Where the rest goes").
  echo "bench: TCP congestion control $(ip netns exec "$a" sysctl -n net.ipv4.tcp_congestion_control)" \
    "(the namespaces' default, unless iperf3 is given -C)"
  sleep 0.5
}

bench_cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$work"
}

# np-probe ($probe) in namespace $1 on iface $2, any further arguments its own, its stdin a pipe
# that `bench_probe_stop` (or the bench's exit) closes; returns once it counts, with probe_pid
# and probe_fd set. Exits 3 when it does not start.
bench_probe_start() {
  local ns=$1 iface=$2 fifo=$work/probe-fifo
  shift 2
  mkfifo "$fifo"
  # shellcheck disable=SC2154 # $probe is the sourcing bench's
  ip netns exec "$ns" "$probe" --iface "$iface" "$@" <"$fifo" >/dev/null 2>"$work/probe.err" &
  probe_pid=$!
  exec {probe_fd}>"$fifo"; rm "$fifo"
  for _ in $(seq 200); do grep -q counting "$work/probe.err" && return; sleep 0.05; done
  echo "bench: probe did not start: $(cat "$work/probe.err")" >&2; exit 3
}

bench_probe_stop() { echo stop >&"$probe_fd"; exec {probe_fd}>&-; wait "$probe_pid"; }
