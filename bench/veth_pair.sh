# shellcheck shell=bash
# Sourced by the probe benches: `bench_pair TAG OCTET` makes namespaces npp-TAG-a and npp-TAG-b
# joined by a veth pair (npp-TAG-a0 198.18.OCTET.1/24, npp-TAG-b0 .2), starts an iperf3 server on
# port 5201 in b, and sets a, b, ifa, ifb, work (a temporary dir) and pids (what cleanup stops:
# append the PIDs the bench starts). On exit, Ctrl-C or TERM everything is removed.
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
  sleep 0.5
}

bench_cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$work"
}
