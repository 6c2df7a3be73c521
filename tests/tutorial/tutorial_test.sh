#!/usr/bin/env bash
# tests/tutorial: the tutorial's files against the local testbed (see CMakeLists.txt).
#   tutorial_test.sh parity | teardown_after_kill
# Needs: NP_TESTBED_STATE (a testbed up there), NP_EXPLAIN, NP_PROBE, NP_TUTORIAL_DIR.
set -euo pipefail
test=$1
state=${NP_TESTBED_STATE:?}
tut=${NP_TUTORIAL_DIR:?}
work=$(mktemp -d /tmp/np-tutorial-test.XXXXXX)
bg_pid=""
cleanup() {
    [[ -n $bg_pid ]] && kill -KILL "$bg_pid" 2>/dev/null
    # Whatever the test did, the nodes are handed back clean for the next test.
    for n in node1-1 node1-2; do
        ssh -F "$state/ssh_config" "root@$n" sh -s -- teardown "$n" enp0s25 \
            <"$tut/network-performance_node.sh" >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# The tutorial's machinery, not a slow node image, is under test here (the SSH and run tests
# hold the product to that): every Ansible task opens SSH connections of its own.
bash "$(dirname "$0")/../../scripts/testbed.sh" shell-delay --state "$state" --slow-shell 0

export NETWORK_PERFORMANCE_SSH_CONFIG=$state/ssh_config
export NETWORK_PERFORMANCE_RUN_DIR=$work/run
export OMF_NODES=node1-1,node1-2
# The testbed's params with short tests: this is about the tutorial's machinery, not the wire.
sed -e 's/^np_ping_count:.*/np_ping_count: 10/' -e 's/^np_tcp_duration_s:.*/np_tcp_duration_s: 5/' \
    -e 's/^np_udp_duration_s:.*/np_udp_duration_s: 5/' -e 's/^np_udp_bandwidth:.*/np_udp_bandwidth: 200M/' \
    "$state/params.yml" >"$work/params.yml"
export NETWORK_PERFORMANCE_PARAMS=$work/params.yml
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_NOCOLOR=1

# (A command's output is read whole before grep -q looks at it: under pipefail, grep -q ending
# early would fail the pipeline with SIGPIPE.)
# Nothing of the tutorial left on either node: no np-probe or iperf3 process in its namespace,
# no tc filter and no clsact on the data iface (the testbed's own root tbf stays), no address,
# no state dir (uploads, sockets, pidfiles).
assert_clean() {
    local n pid comm
    for n in node1-1 node1-2; do
        for pid in $(ip netns pids "$n"); do
            comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
            [[ $comm == np-probe || $comm == iperf3 ]] && fail "$1: $comm (pid $pid) left in $n"
        done
        [[ -z $(ip netns exec "$n" tc filter show dev enp0s25 ingress) ]] || fail "$1: tc ingress filter left on $n"
        [[ -z $(ip netns exec "$n" tc filter show dev enp0s25 egress) ]] || fail "$1: tc egress filter left on $n"
        grep -q clsact <<<"$(ip netns exec "$n" tc qdisc show dev enp0s25)" && fail "$1: clsact left on $n"
        grep -q 'inet ' <<<"$(ip netns exec "$n" ip -o addr show dev enp0s25)" && fail "$1: address left on $n"
        grep -q '[<,]UP[,>]' <<<"$(ip netns exec "$n" ip -o link show dev enp0s25)" || fail "$1: enp0s25 of $n left down (it was up)"
    done
    [[ ! -e /run/network-performance ]] || fail "$1: /run/network-performance left: $(ls -R /run/network-performance)"
    echo "clean after $1: no process, tc filter, clsact, upload or address on either node"
}

case $test in
parity)
    t0=$SECONDS
    set +e
    bash "$tut/network-performance_parity.sh" node1-1 node1-2 | tee "$work/parity.out"
    rc=${PIPESTATUS[0]}
    set -e
    echo "parity harness: exit $rc in $((SECONDS - t0)) s"
    [[ $rc -eq 0 ]] || fail "parity harness exit $rc"
    grep -q '^PARITY: PASS' "$work/parity.out" || fail "no PARITY: PASS"
    for m in manual ansible jupyter; do
        grep -q "^$m " "$work/parity.out" || fail "no $m row in the parity table"
    done
    # Each contract carries both nodes' traces (np-trace/1, with the three phases) and the
    # explanation; the figures are what np-explain read from that mode's own outputs.
    "${PY:-/usr/bin/python3}" - "$NETWORK_PERFORMANCE_RUN_DIR" <<'PY'
import json, os, sys
d = sys.argv[1]
for mode in ("manual", "ansible", "jupyter"):
    c = json.load(open(os.path.join(d, f"np_contract_{mode}.json")))
    assert c["mode"] == mode and c["node1"] == "node1-1" and c["node2"] == "node1-2", c
    for k in ("ping_rtt_ms", "tcp_mbps", "udp_mbps", "udp_loss_pct"):
        assert isinstance(c[k], (int, float)), (mode, k, c[k])
    assert c["tcp_mbps"] > 50 and c["udp_mbps"] > 50, (mode, c["tcp_mbps"], c["udp_mbps"])
    assert len(c["traces"]) == 2, (mode, c["traces"])
    nodes = set()
    for t in c["traces"]:
        tr = json.load(open(os.path.join(d, t)))
        assert tr["schema"] == "np-trace/1" and tr["iface"] == "enp0s25", t
        names = [p["name"] for p in tr["phases"]]
        assert {"ping", "tcp", "udp"} <= set(names), (t, names)
        tcp = next(p for p in tr["phases"] if p["name"] == "tcp")
        assert tcp["tx"]["wire_bytes"] + tcp["rx"]["wire_bytes"] > 10_000_000, (t, "tcp phase saw too little")
        nodes.add(tr["node"])
    assert nodes == {"node1-1", "node1-2"}, nodes
    codes = [f["code"] for f in c["explain"]["findings"]]
    assert codes and "WRONG_INTERFACE" not in codes, (mode, codes)
    assert c["link_mbps"] == 100 and c["model"]["tcp"]["goodput_ceiling_mbps"] > 94, (mode, c["link_mbps"])
    print(f"{mode}: tcp {c['tcp_mbps']:.2f} udp {c['udp_mbps']:.2f} Mbit/s, 2 traces, findings {codes}")
nb = json.load(open(os.path.join(d, "network-performance_tutorial.executed.ipynb")))
last = [c for c in nb["cells"] if c["cell_type"] == "code"][-1]
kinds = {k for o in last.get("outputs", []) for k in o.get("data", {})}
assert "image/png" in kinds and "text/markdown" in kinds, kinds
assert os.path.getsize(os.path.join(d, "jupyter_plot.png")) > 10_000
print("notebook: last cell drew the plot and the findings table")
PY
    assert_clean "the parity harness"
    ;;
teardown_after_kill)
    # A manual run killed with SIGKILL while the TCP test runs leaves the probes, the server,
    # the uploads and the addresses on the nodes; the teardown playbook removes all of it, and
    # a second teardown finds nothing to do.
    params_long=$work/params-long.yml
    sed -e 's/^np_tcp_duration_s:.*/np_tcp_duration_s: 30/' "$NETWORK_PERFORMANCE_PARAMS" >"$params_long"
    NETWORK_PERFORMANCE_PARAMS=$params_long setsid bash "$tut/network-performance_manual.sh" node1-1 node1-2 \
        >"$work/manual.log" 2>&1 &
    bg_pid=$!
    for _ in $(seq 600); do
        [[ -f /run/network-performance/node1-1/probe.pid && -f /run/network-performance/node1-1/server ]] &&
            pgrep -f -x -n "iperf3 -c 198.18.0.1 -p 5201 -t 30 -J" >/dev/null && break
        kill -0 "$bg_pid" 2>/dev/null || { cat "$work/manual.log"; fail "the manual script ended early"; }
        sleep 0.1
    done
    pgrep -f -x -n "iperf3 -c 198.18.0.1 -p 5201 -t 30 -J" >/dev/null || { cat "$work/manual.log"; fail "the TCP test never started"; }
    # The whole script's process group, ssh children included: nothing gets to run its trap.
    kill -KILL -- "-$bg_pid"
    wait "$bg_pid" 2>/dev/null || true
    bg_pid=""
    for n in node1-1 node1-2; do
        [[ -n $(ip netns exec "$n" tc filter show dev enp0s25 ingress) ]] || fail "nothing was left on $n: the kill came too late to test teardown"
    done
    grep -q 198.18.0.1 <<<"$(ip netns exec node1-1 ip -o addr show dev enp0s25)" || fail "node1-1 not configured at the kill"
    echo "killed the manual run mid-TCP: probes, server, uploads and addresses left on the nodes"
    ansible-playbook "$tut/network-performance_teardown.yml" | tee "$work/teardown1.out"
    assert_clean "the teardown playbook after SIGKILL"
    ansible-playbook "$tut/network-performance_teardown.yml" | tee "$work/teardown2.out"
    [[ $(grep -c 'nothing to tear down' "$work/teardown2.out") -ge 2 ]] || fail "second teardown was not a no-op"
    grep -q 'changed=0' "$work/teardown2.out" || fail "second teardown changed something"
    assert_clean "a second teardown"
    ;;
refusals)
    # Preflight finds no image marker on the nodes: the playbook stops before changing anything.
    sed -e 's|^np_image_marker:.*|np_image_marker: /nonexistent/.omf-image-name|' \
        "$NETWORK_PERFORMANCE_PARAMS" >"$work/params-marker.yml"
    set +e
    NETWORK_PERFORMANCE_PARAMS=$work/params-marker.yml ansible-playbook "$tut/network-performance.yml" >"$work/marker.out" 2>&1
    rc=$?
    set -e
    [[ $rc -ne 0 ]] || fail "the playbook went on without the image marker"
    grep -q 'preflight failed on node1-1; no /nonexistent/.omf-image-name' "$work/marker.out" || { cat "$work/marker.out"; fail "no preflight message"; }
    grep -q 'TASK \[Configure' "$work/marker.out" && fail "the playbook configured a node after a failed preflight"
    assert_clean "a failed preflight"
    # The wrong port (enp3s0: carrier, but each node on its own segment): the manual script
    # stops at the data-path check, says why, and leaves both nodes as they were.
    sed -e 's|^np_data_iface:.*|np_data_iface: enp3s0|' -e 's/^np_server_ip:.*/np_server_ip: 198.18.1.1/' \
        -e 's/^np_client_ip:.*/np_client_ip: 198.18.1.2/' "$NETWORK_PERFORMANCE_PARAMS" >"$work/params-port.yml"
    set +e
    NETWORK_PERFORMANCE_PARAMS=$work/params-port.yml bash "$tut/network-performance_manual.sh" node1-1 node1-2 >"$work/port.out" 2>&1
    rc=$?
    set -e
    cat "$work/port.out"
    [[ $rc -eq 1 ]] || fail "manual script on the wrong port: exit $rc, not 1"
    grep -q 'ARP unanswered, the two data ports are on different segments' "$work/port.out" || fail "no segment message"
    for n in node1-1 node1-2; do
        grep -q 'inet ' <<<"$(ip netns exec "$n" ip -o addr show dev enp3s0)" && fail "address left on $n enp3s0"
    done
    assert_clean "the wrong port"
    ;;
*) fail "unknown test $test" ;;
esac
