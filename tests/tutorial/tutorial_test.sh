#!/usr/bin/env bash
# tests/tutorial: the tutorial's files against the local testbed (see CMakeLists.txt).
#   tutorial_test.sh parity | teardown_after_kill | refusals | fanout
# Needs: NP_TESTBED_STATE (a testbed up there; fanout brings up a row of four of its own there),
# NP_EXPLAIN, NP_PROBE, NP_TUTORIAL_DIR.
set -euo pipefail
test=$1
state=${NP_TESTBED_STATE:?}
tut=${NP_TUTORIAL_DIR:?}
work=$(mktemp -d /tmp/np-tutorial-test.XXXXXX)
bg_pid=""
nodes=(node1-1 node1-2)
testbed=$(dirname "$0")/../../scripts/testbed.sh
if [[ $test == fanout ]]; then
    # Row 2 of four nodes on one bridged segment, beside (not instead of) the two-node testbed.
    nodes=(node2-1 node2-2 node2-3 node2-4)
    bash "$testbed" down --state "$state" >/dev/null 2>&1 || true
    bash "$testbed" up --nodes 4 --row 2 --state "$state"
fi
cleanup() {
    if [[ -n $bg_pid ]]; then kill -KILL "$bg_pid" 2>/dev/null || true; fi
    # Whatever the test did, the nodes are handed back clean for the next test.
    for n in "${nodes[@]}"; do
        ssh -F "$state/ssh_config" "root@$n" sh -s -- teardown "$n" enp0s25 \
            <"$tut/network-performance_node.sh" >/dev/null 2>&1 || true
    done
    rm -rf "$work"
    [[ $test != fanout ]] || bash "$testbed" down --state "$state"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# The tutorial's machinery, not a slow node image, is under test here (the SSH and run tests
# hold the product to that): every Ansible task opens SSH connections of its own.
bash "$testbed" shell-delay --state "$state" --slow-shell 0

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
    for n in "${nodes[@]}"; do
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
    # The SSH control dir the killed script cannot remove (a short path under /tmp: a socket's
    # path has a length limit) is removed by this test: the ones that were not there before.
    ssh_dirs_before=$(ls -d /tmp/network-performance-ssh.* 2>/dev/null || true)
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
    for d in /tmp/network-performance-ssh.*; do
        [[ -d $d ]] && ! grep -qxF "$d" <<<"$ssh_dirs_before" && rm -rf -- "$d"
    done
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
fanout)
    # The testbed's pairs — node2-1/node2-2 and node2-3/node2-4 disjoint, node2-2/node2-3
    # sharing a node with each — and one that cannot work: node2-9 does not answer (its
    # address on the control segment is nobody's). Three are measured, two of them at the same
    # time; the fourth is reported and spoils nothing.
    cp "$state/pairs.yml" "$work/pairs.yml"
    echo "  - {server: node2-4, client: node2-9, server_ip: 198.18.2.4, client_ip: 198.18.2.9}" >>"$work/pairs.yml"
    printf 'Host node2-9\n    HostName 198.19.1.9\n    User root\n    IdentityFile %s/id_ed25519\n    UserKnownHostsFile %s/known_hosts\n    StrictHostKeyChecking yes\n    BatchMode yes\n    ConnectTimeout 5\n' \
        "$state" "$state" >>"$state/ssh_config"
    export NETWORK_PERFORMANCE_PAIRS=$work/pairs.yml
    "$NP_EXPLAIN" pairs "$NETWORK_PERFORMANCE_PAIRS" --params "$NETWORK_PERFORMANCE_PARAMS"
    t0=$SECONDS
    set +e
    ansible-playbook "$tut/network-performance_fanout.yml" >"$work/fanout.out" 2>&1
    rc=$?
    set -e
    echo "fan-out playbook: exit $rc in $((SECONDS - t0)) s"
    sed -n '/TASK \[The pairs\]/,$p' "$work/fanout.out"
    [[ $rc -ne 0 ]] || fail "the playbook ended 0 with a pair that cannot be reached"
    gathered=$NETWORK_PERFORMANCE_RUN_DIR/pairs
    set +e
    "$NP_EXPLAIN" parity "$gathered" >"$work/parity.out"
    prc=$?
    set -e
    cat "$work/parity.out"
    [[ $prc -eq 1 ]] || { tail -n 120 "$work/fanout.out"; fail "np-explain parity over the gathered dir: exit $prc, not 1"; }
    # On a failed check, what Ansible did (its output is otherwise only summarised above).
    "${PY:-/usr/bin/python3}" - "$gathered" "$work/parity.out" <<'PY' || { tail -n 120 "$work/fanout.out"; fail "the fan-out's results"; }
import datetime, json, os, sys
d, table = sys.argv[1], open(sys.argv[2]).read()
plan = json.load(open(os.path.join(d, "np_pairs.json")))
assert plan["schema"] == "np-pairs/1" and plan["waves"] == 2, plan
waves = {p["name"]: p["wave"] for p in plan["pairs"]}
assert waves == {"node2-1_node2-2": 0, "node2-3_node2-4": 0, "node2-2_node2-3": 1, "node2-4_node2-9": 1}, waves
tcp = {}
for name in ("node2-1_node2-2", "node2-3_node2-4", "node2-2_node2-3"):
    c = json.load(open(os.path.join(d, name, "np_contract_ansible.json")))
    server, client = name.split("_")
    assert (c["node1"], c["node2"]) == (server, client), (name, c["node1"], c["node2"])
    assert c["tcp_mbps"] > 50 and c["udp_mbps"] > 50, (name, c["tcp_mbps"], c["udp_mbps"])
    assert c["link_mbps"] == 100 and len(c["traces"]) == 2, (name, c["traces"])
    for t in c["traces"]:
        tr = json.load(open(os.path.join(d, name, t)))
        assert tr["node"] in (server, client) and tr["iface"] == "enp0s25", (name, t)
        start = datetime.datetime.fromisoformat(tr["started_at"].replace("Z", "+00:00")).timestamp()
        p = next(p for p in tr["phases"] if p["name"] == "tcp")
        assert p["tx"]["wire_bytes"] + p["rx"]["wire_bytes"] > 10_000_000, (name, t, "tcp saw too little")
        if tr["node"] == client:
            tcp[name] = (start + p["start_ms"] / 1000, start + p["end_ms"] / 1000)
    row = next(l for l in table.splitlines() if l.strip().startswith(f"{server} -> {client}"))
    assert "line-rate bound" in row or "TCP" in row, row
    print(f"{name}: tcp {c['tcp_mbps']:.2f} udp {c['udp_mbps']:.2f} Mbit/s, tcp phase {tcp[name][0]:.0f}…{tcp[name][1]:.0f}")
# started_at has whole seconds: one second of slack either way.
a, b, s = tcp["node2-1_node2-2"], tcp["node2-3_node2-4"], tcp["node2-2_node2-3"]
overlap = min(a[1], b[1]) - max(a[0], b[0])
assert overlap >= 2, f"the disjoint pairs' TCP tests did not run together: {a} {b}"
assert s[0] >= max(a[1], b[1]) - 1, f"the pair sharing a node ran during the first wave: {s} {a} {b}"
print(f"wave 1 ran together ({overlap:.0f} s of TCP overlap); the shared pair's TCP started after it")
failed = json.load(open(os.path.join(d, "node2-4_node2-9", "np_failed.json")))
assert "node2-9" in failed["step"] + failed["message"], failed
assert "node2-4 -> node2-9  " in table or "node2-4 -> node2-9" in table, table
assert "PAIRS: FAIL (3 of 4 pairs measured" in table, table
assert "node2-4 -> node2-9: not measured: " in table, table
report = open(os.path.join(d, "report.html")).read()
for name in ("node2-1_node2-2", "node2-3_node2-4", "node2-2_node2-3"):
    assert name in report, name
assert 'id="pairs"' in report
print("gathered: 3 contracts with both traces, 1 failure recorded; table and report show every pair")
PY
    assert_clean "the fan-out"
    # The teardown playbook over the pairs' nodes (-e np_fanout=true) finds nothing left.
    NETWORK_PERFORMANCE_PAIRS=$state/pairs.yml ansible-playbook "$tut/network-performance_teardown.yml" \
        -e np_fanout=true >"$work/teardown.out" 2>&1 || { cat "$work/teardown.out"; fail "teardown over the pairs"; }
    [[ $(grep -c 'nothing to tear down' "$work/teardown.out") -eq 4 ]] || { cat "$work/teardown.out"; fail "teardown did not visit the four nodes"; }
    echo "teardown over the pairs' four nodes: nothing to tear down"
    ;;
*) fail "unknown test $test" ;;
esac
