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

tb up --profile 100M
ssh_node() { ssh -F "$state/ssh_config" "$@" </dev/null; }

# Each node answers on its own sshd, as root, inside its own namespace.
[[ $(ssh_node node1-1 'ip -br -4 addr show ctl0') == *198.19.0.1/24* ]] || fail "node1-1 ctl0"
[[ $(ssh_node node1-2 'ip -br -4 addr show ctl0') == *198.19.0.2/24* ]] || fail "node1-2 ctl0"
[[ $(ssh_node node1-1 'id -u') == 0 ]] || fail "not root on node1-1"
ssh_node node1-1 "test -s $(grep -o '/.*omf-image-name' "$state/params.yml")" || fail "marker"
ssh_node node1-1 'tc qdisc show dev enp0s25' | grep -q 'tbf' || fail "100M profile not applied"

# enp0s25 is one segment; enp3s0 has carrier on both nodes but they do not share a segment.
ssh_node node1-1 'ip addr add 198.18.0.1/24 dev enp0s25 && ip addr add 198.18.1.1/24 dev enp3s0'
ssh_node node1-2 'ip addr add 198.18.0.2/24 dev enp0s25 && ip addr add 198.18.1.2/24 dev enp3s0'
ssh_node node1-2 'ping -c 1 -W 2 -I enp0s25 198.18.0.1' >/dev/null || fail "data segment"
[[ $(ssh_node node1-2 'cat /sys/class/net/enp3s0/carrier') == 1 ]] || fail "enp3s0 carrier"
if ssh_node node1-2 'ping -c 1 -W 1 -I enp3s0 198.18.1.1' >/dev/null; then
    fail "enp3s0 reached the other node"
fi

# A host key that is not in known_hosts is refused (StrictHostKeyChecking yes).
: >"$state/empty_known_hosts"
if ssh -F "$state/ssh_config" -o UserKnownHostsFile="$state/empty_known_hosts" node1-1 true \
    </dev/null 2>/dev/null; then
    fail "unknown host key accepted"
fi

# `up` on top of a running testbed refuses instead of half-building a second one.
if tb up 2>/dev/null; then fail "second up succeeded"; fi

trap - EXIT
tb down
tb down  # safe twice
ip netns list | grep -Eq '^node1-[12]\b' && fail "namespace left"
ip -br link | grep -q '^nptb-' && fail "link left"
[[ -e $state ]] && fail "state dir left"
pgrep -f "sshd -f $state/" >/dev/null && fail "sshd left"
echo "PASS testbed cycle"
