#!/usr/bin/env bash
# tests/tutorial: the tutorial's files against the local testbed (see CMakeLists.txt).
#   tutorial_test.sh parity | ipv6 | teardown_after_kill | refusals | fanout
# Needs: a testbed (the ctest slot or NP_TESTBED_STATE: tests/testbed/testbed_slot.sh; fanout
# brings up a row of four of its own in NP_TESTBED_STATE instead), NP_EXPLAIN, NP_PROBE,
# NP_TUTORIAL_DIR.
set -euo pipefail
test=$1
tut=${NP_TUTORIAL_DIR:?}
here=$(dirname "$0")
testbed=$here/../../scripts/testbed.sh
# shellcheck source=../testbed/testbed_slot.sh
source "$here/../testbed/testbed_slot.sh"
if [[ $test == fanout ]]; then
    # A row of four nodes on one bridged segment, beside (not instead of) the two-node testbeds.
    state=${NP_TESTBED_STATE:?}
    bash "$testbed" down --state "$state" >/dev/null 2>&1 || true
    bash "$testbed" up --nodes 4 --row auto --state "$state"
    testbed_row "$state"
    nodes=(node$row-1 node$row-2 node$row-3 node$row-4)
else
    testbed_slot
    nodes=("$node_a" "$node_b")
fi
work=$(mktemp -d /tmp/np-tutorial-test.XXXXXX)
# The node steps every mode runs (np-explain node-steps), for the test's own steps on the nodes.
node_steps=$work/node-steps.sh
"${NP_EXPLAIN:?}" node-steps >"$node_steps"
bg_pid=""
# The SSH connections this test's Ansible and scripts keep open (ControlPersist) in DIR's
# control sockets, closed, so that none outlives the test on a node the next test judges.
close_masters() {
    local sock
    for sock in "$1"/*; do
        [[ -S $sock ]] && ssh -o "ControlPath=$sock" -O exit x >/dev/null 2>&1 || true
    done
}
# Ansible's control sockets in this test's own dir, not in ~/.ansible/cp.
export ANSIBLE_SSH_CONTROL_PATH_DIR=$work/ansible-cp
cleanup() {
    if [[ -n $bg_pid ]]; then kill -KILL "$bg_pid" 2>/dev/null || true; fi
    close_masters "$ANSIBLE_SSH_CONTROL_PATH_DIR"
    # Whatever the test did, the nodes are handed back clean for the next test.
    for n in "${nodes[@]}"; do
        ssh -F "$state/ssh_config" "root@$n" sh -s -- teardown "$n" enp0s25 \
            <"$node_steps" >/dev/null 2>&1 || true
        # The testbed's data ports are up (a test that set them down may have failed midway).
        ip netns exec "$n" ip link set enp0s25 up 2>/dev/null || true
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
export OMF_NODES=$node_a,$node_b
# The testbed's params with short tests: this is about the tutorial's machinery, not the wire.
# (Five pings, 3-s tests: at 100 Mbit/s the modes' TCP and UDP still agree within parity's 1 %,
# and the pings' average within its RTT tolerance.)
sed -e 's/^np_ping_count:.*/np_ping_count: 5/' -e 's/^np_tcp_duration_s:.*/np_tcp_duration_s: 3/' \
    -e 's/^np_udp_duration_s:.*/np_udp_duration_s: 3/' -e 's/^np_udp_bandwidth:.*/np_udp_bandwidth: 200M/' \
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
        grep -q 'inet6 .*scope global' <<<"$(ip netns exec "$n" ip -o addr show dev enp0s25)" && fail "$1: IPv6 address left on $n"
        [[ $(ip netns exec "$n" cat /proc/sys/net/ipv6/conf/enp0s25/keep_addr_on_down) == 0 ]] || fail "$1: keep_addr_on_down of $n's enp0s25 not set back"
        grep -q '[<,]UP[,>]' <<<"$(ip netns exec "$n" ip -o link show dev enp0s25)" || fail "$1: enp0s25 of $n left down (it was up)"
        [[ $(ip netns exec "$n" cat /sys/class/net/enp0s25/mtu) == 1500 ]] || fail "$1: the MTU of $n's enp0s25 not set back to 1500"
    done
    for n in "${nodes[@]}"; do
        [[ ! -e /run/network-performance/$n ]] || fail "$1: /run/network-performance/$n left: $(ls -R "/run/network-performance/$n")"
    done
    echo "clean after $1: no process, tc filter, clsact, upload or address on either node"
}

case $test in
parity)
    # With jumbo frames (np_mtu), which each mode sets on both nodes and sets back.
    echo "np_mtu: 9000" >>"$NETWORK_PERFORMANCE_PARAMS"
    t0=$SECONDS
    set +e
    bash "$tut/network-performance_parity.sh" "$node_a" "$node_b" | tee "$work/parity.out"
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
    "${PY:-/usr/bin/python3}" - "$NETWORK_PERFORMANCE_RUN_DIR" "$node_a" "$node_b" <<'PY'
import json, os, sys
d, node_a, node_b = sys.argv[1:4]
for mode in ("manual", "ansible", "jupyter"):
    c = json.load(open(os.path.join(d, f"np_contract_{mode}.json")))
    assert c["mode"] == mode and c["node1"] == node_a and c["node2"] == node_b, c
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
    assert nodes == {node_a, node_b}, nodes
    codes = [f["code"] for f in c["explain"]["findings"]]
    assert codes and "WRONG_INTERFACE" not in codes, (mode, codes)
    assert c["link_mbps"] == 100 and c["model"]["tcp"]["goodput_ceiling_mbps"] > 94, (mode, c["link_mbps"])
    # The model followed the run's MTU: a 9000-byte frame carries 8948 bytes of TCP.
    verdict = next(v for v in c["explain"]["verdicts"] if v["test"].startswith("iperf3 TCP"))
    assert abs(verdict["ceiling_mbps"] - 99.00) < 0.01, (mode, verdict)
    # Ping ran beside the TCP test (the test step), and both probes stamped its echoes: the round
    # trip it grew by under load is placed in the client's egress queue, the tbf TCP fills.
    rtt = [f for f in c["explain"]["findings"]
           if f["code"] == "RTT_UNDER_LOAD" and f.get("test") == verdict["test"]]
    assert rtt and f"{node_b}'s egress queue" in rtt[0]["title"] + rtt[0]["detail"], (mode, codes)
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
ipv6)
    # The same experiment over an IPv6 data plane (the testbed's 2001:2::/48 addresses) in all
    # three modes, with short tests: each waits out duplicate address detection, checks the path
    # by neighbour discovery, pings with ping -6, and is explained against IPv6's ceilings; the
    # teardown leaves no address and keep_addr_on_down as it was. The tests run as iperf3 users
    # also run them, two streams from the server (np_parallel, np_direction: -P 2 -R), which every
    # mode reads from the params through `np-explain params`.
    v6_net=2001:2:0:$((2 * row - 2))::
    { sed -e "s/^np_server_ip:.*/np_server_ip: \"${v6_net}1\"/" -e "s/^np_client_ip:.*/np_client_ip: \"${v6_net}2\"/" \
        -e 's/^np_prefix_len:.*/np_prefix_len: 64/' -e 's/^np_ping_count:.*/np_ping_count: 3/' \
        -e 's/^np_tcp_duration_s:.*/np_tcp_duration_s: 3/' -e 's/^np_udp_duration_s:.*/np_udp_duration_s: 3/' \
        -e 's/^np_udp_bandwidth:.*/np_udp_bandwidth: 25M/' "$NETWORK_PERFORMANCE_PARAMS"
      printf 'np_parallel: 2\nnp_direction: reverse\n'; } >"$work/params6.yml"
    set +e
    NETWORK_PERFORMANCE_PARAMS=$work/params6.yml bash "$tut/network-performance_parity.sh" "$node_a" "$node_b" |
        tee "$work/parity6.out"
    rc=${PIPESTATUS[0]}
    set -e
    # Each mode must have run; their agreement is tutorial.parity's to hold (over a few pings on a
    # busy machine the idle RTTs of 0.07 and 0.1 ms are half apart: not what this test is about).
    for m in manual ansible jupyter; do
        # (the first ok/FAILED line after the mode's header: a command may span lines)
        [[ $(awk -v m="--- $m:" 'index($0, m) == 1 { on = 1 } on && /^    (ok|FAILED) \(/ { print $1; exit }' \
            "$work/parity6.out") == ok ]] || fail "the $m mode failed over IPv6 (harness exit $rc)"
    done
    "${PY:-/usr/bin/python3}" - "$NETWORK_PERFORMANCE_RUN_DIR" "$v6_net" <<'PY'
import json, os, sys
d, net = sys.argv[1:3]
at_line_rate = []
for mode in ("manual", "ansible", "jupyter"):
    c = json.load(open(os.path.join(d, f"np_contract_{mode}.json")))
    # IPv6's ceilings on the 100M link: 92.85 Mbit/s TCP (its 40-byte header), not IPv4's 94.93.
    tcp = c["model"]["tcp"]["goodput_ceiling_mbps"]
    assert abs(tcp - 92.85) < 0.01, (mode, tcp)
    assert c["tcp_mbps"] <= 93.3 and c["udp_mbps"] > 45, (mode, c["tcp_mbps"], c["udp_mbps"])
    findings = c["explain"]["findings"]
    bound = [f for f in findings if f["code"] == "LINE_RATE_BOUND"]
    if bound:
        # At the line rate: explained by IPv6's headers, and nothing else to say of TCP (a UDP
        # receiver this busy machine starved is named as such, and is not what this test is about).
        assert "40 IPv6, 20 TCP" in bound[0]["detail"], (mode, bound)
        codes = [f["code"] for f in findings
                 if f["severity"] != "info" and f.get("test") == bound[0].get("test")]
        assert not codes, (mode, codes)
        at_line_rate.append(mode)
    else:
        # This test runs beside others (it is not held to a rate): a mode the machine held
        # below the line rate is still measured against IPv6's ceiling, not IPv4's.
        below = [f for f in findings if f"of the {tcp:.2f} Mbit/s ceiling" in f["title"]]
        assert below, (mode, c["tcp_mbps"], [f["title"] for f in findings])
        print(f"{mode}: {below[0]['code']} — {below[0]['title']}")
    # Both tests ran as the params said, and the probes' roles swapped with them: the server
    # sent, and each ledger runs from node A to node B.
    tests = [v["test"] for v in c["explain"]["verdicts"] if v["test"].startswith("iperf3")]
    assert tests == ["iperf3 TCP -R -P 2", "iperf3 UDP -R -P 2"], (mode, tests)
    for ledger in c["explain"]["ledgers"]:
        assert (ledger["sender_node"], ledger["receiver_node"]) == (c["node1"], c["node2"]), (mode, ledger["test"])
    ping = open(os.path.join(d, f"{mode}_ping.txt")).read()
    assert net + "1" in ping and "icmp_seq" in ping, (mode, ping[:200])
    print(f"{mode} over IPv6: tcp {c['tcp_mbps']:.2f} of {tcp:.2f}, udp {c['udp_mbps']:.2f} Mbit/s")
assert at_line_rate, "no mode reached IPv6's TCP line rate"
PY
    assert_clean "the three modes over IPv6"
    ;;
teardown_after_kill)
    # A manual run killed with SIGKILL while the TCP test runs leaves the probes, the server,
    # the uploads and the addresses on the nodes; the teardown playbook removes all of it, and
    # a second teardown finds nothing to do.
    params_long=$work/params-long.yml
    sed -e 's/^np_tcp_duration_s:.*/np_tcp_duration_s: 30/' "$NETWORK_PERFORMANCE_PARAMS" >"$params_long"
    NETWORK_PERFORMANCE_PARAMS=$params_long setsid bash "$tut/network-performance_manual.sh" "$node_a" "$node_b" \
        >"$work/manual.log" 2>&1 &
    bg_pid=$!
    # The TCP client on node B (the namespace's own processes: another row's test is not ours).
    tcp_client_runs() {
        local pid
        for pid in $(ip netns pids "$node_b"); do
            [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "iperf3 -c $data_net.1 -p 5201 -t 30 -J " ]] && return 0
        done
        return 1
    }
    for _ in $(seq 600); do
        [[ -f /run/network-performance/$node_a/probe.pid && -f /run/network-performance/$node_a/server ]] &&
            tcp_client_runs && break
        kill -0 "$bg_pid" 2>/dev/null || { cat "$work/manual.log"; fail "the manual script ended early"; }
        sleep 0.1
    done
    tcp_client_runs || { cat "$work/manual.log"; fail "the TCP test never started"; }
    # The SSH control dir the killed script cannot remove (a short path under /tmp: a socket's
    # path has a length limit) is removed by this test: the one its ssh commands name, read
    # from the script's process group before the kill (other tests' scripts have their own).
    ssh_dir=""
    for stat in /proc/[0-9]*/stat; do
        line=$(cat "$stat" 2>/dev/null) || continue
        read -r -a f <<<"${line##*) }" # after "(comm)": state, ppid, pgrp, …
        [[ ${f[2]:-} == "$bg_pid" ]] || continue
        ssh_dir=$(tr '\0' '\n' <"${stat%/stat}/cmdline" 2>/dev/null |
            sed -n 's|^ControlPath=\(/tmp/network-performance-ssh\.[A-Za-z0-9]*\)/%C$|\1|p' | head -n 1)
        [[ -n $ssh_dir ]] && break
    done
    [[ -n $ssh_dir ]] || fail "no ssh command of the manual script names its control dir"
    # The whole script's process group, ssh children included: nothing gets to run its trap.
    kill -KILL -- "-$bg_pid"
    wait "$bg_pid" 2>/dev/null || true
    bg_pid=""
    close_masters "$ssh_dir"
    rm -rf -- "$ssh_dir"
    for n in "${nodes[@]}"; do
        [[ -n $(ip netns exec "$n" tc filter show dev enp0s25 ingress) ]] || fail "nothing was left on $n: the kill came too late to test teardown"
    done
    grep -q "$data_net.1" <<<"$(ip netns exec "$node_a" ip -o addr show dev enp0s25)" || fail "$node_a not configured at the kill"
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
    grep -q "preflight failed on $node_a; no /nonexistent/.omf-image-name" "$work/marker.out" || { cat "$work/marker.out"; fail "no preflight message"; }
    grep -q 'TASK \[Configure' "$work/marker.out" && fail "the playbook configured a node after a failed preflight"
    assert_clean "a failed preflight"
    # The wrong port (enp3s0: carrier, but each node on its own segment): the manual script
    # stops at the data-path check, says why, and leaves both nodes as they were.
    sed -e 's|^np_data_iface:.*|np_data_iface: enp3s0|' -e "s/^np_server_ip:.*/np_server_ip: $wrong_net.1/" \
        -e "s/^np_client_ip:.*/np_client_ip: $wrong_net.2/" "$NETWORK_PERFORMANCE_PARAMS" >"$work/params-port.yml"
    set +e
    NETWORK_PERFORMANCE_PARAMS=$work/params-port.yml bash "$tut/network-performance_manual.sh" "$node_a" "$node_b" >"$work/port.out" 2>&1
    rc=$?
    set -e
    cat "$work/port.out"
    [[ $rc -eq 1 ]] || fail "manual script on the wrong port: exit $rc, not 1"
    grep -q 'ARP unanswered, the two data ports are on different segments' "$work/port.out" || fail "no segment message"
    for n in "${nodes[@]}"; do
        grep -q 'inet ' <<<"$(ip netns exec "$n" ip -o addr show dev enp3s0)" && fail "address left on $n enp3s0"
    done
    assert_clean "the wrong port"
    # The data ports back to back (the testbed's veth pair) and both administratively down: a
    # port has carrier only once the other end is up too, so each mode brings both up before it
    # waits for carrier on either; the run passes and leaves both down, as found.
    for n in "${nodes[@]}"; do ip netns exec "$n" ip link set enp0s25 down; done
    set +e
    bash "$tut/network-performance_manual.sh" "$node_a" "$node_b" >"$work/down.out" 2>&1
    rc=$?
    set -e
    [[ $rc -eq 0 ]] || { cat "$work/down.out"; fail "manual script with both ports down: exit $rc, not 0"; }
    grep -q "$node_a: enp0s25 has carrier" "$work/down.out" || { cat "$work/down.out"; fail "no carrier line"; }
    for n in "${nodes[@]}"; do
        grep -q '[<,]UP[,>]' <<<"$(ip netns exec "$n" ip -o link show dev enp0s25)" && fail "enp0s25 of $n left up (it was down)"
        ip netns exec "$n" ip link set enp0s25 up
    done
    assert_clean "both ports down at the start"
    # A mode holds its nodes from configure to teardown with np-explain's own lock: a run on a
    # node the mode holds is refused naming it, and the mode's teardown frees the node.
    ssh -F "$state/ssh_config" "root@$node_a" sh -s -- configure "$node_a" enp0s25 "$data_net.1" 24 \
        <"$node_steps" >/dev/null
    set +e
    "${NP_EXPLAIN:?}" run "$node_a" "$node_b" --ssh-config "$state/ssh_config" \
        --params "$NETWORK_PERFORMANCE_PARAMS" --run-dir "$work/held" >"$work/held.out" 2>&1
    rc=$?
    set -e
    [[ $rc -eq 3 ]] || { cat "$work/held.out"; fail "np-explain run on a node a mode holds: exit $rc, not 3"; }
    grep -q "held by another np-explain tutorial mode on $node_a" "$work/held.out" ||
        { cat "$work/held.out"; fail "the refusal does not name the mode"; }
    ssh -F "$state/ssh_config" "root@$node_a" sh -s -- teardown "$node_a" enp0s25 \
        <"$node_steps" >/dev/null
    lock=/run/np-explain/net-$(stat -L -c %i "/run/netns/$node_a").lock
    flock -n "$lock" true || fail "$node_a still locked after the mode's teardown"
    assert_clean "a run refused on a node a mode holds"
    ;;
fanout)
    # The testbed's pairs — nodeR-1/nodeR-2 and nodeR-3/nodeR-4 disjoint, nodeR-2/nodeR-3
    # sharing a node with each — and one that cannot work: nodeR-9 does not answer (its
    # address on the control segment is nobody's). Three are measured, two of them at the same
    # time; the fourth is reported and spoils nothing.
    cp "$state/pairs.yml" "$work/pairs.yml"
    n=node$row
    echo "  - {server: $n-4, client: $n-9, server_ip: $data_net.4, client_ip: $data_net.9}" >>"$work/pairs.yml"
    printf 'Host %s\n    HostName %s\n    User root\n    IdentityFile %s/id_ed25519\n    UserKnownHostsFile %s/known_hosts\n    StrictHostKeyChecking yes\n    BatchMode yes\n    ConnectTimeout 5\n' \
        "$n-9" "$ctl_net.9" \
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
    "${PY:-/usr/bin/python3}" - "$gathered" "$work/parity.out" "$n" <<'PY' || { tail -n 120 "$work/fanout.out"; fail "the fan-out's results"; }
import datetime, json, os, sys
d, table, n = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3]
plan = json.load(open(os.path.join(d, "np_pairs.json")))
assert plan["schema"] == "np-pairs/1" and plan["waves"] == 2, plan
waves = {p["name"]: p["wave"] for p in plan["pairs"]}
assert waves == {f"{n}-1_{n}-2": 0, f"{n}-3_{n}-4": 0, f"{n}-2_{n}-3": 1, f"{n}-4_{n}-9": 1}, waves
tcp = {}
for name in (f"{n}-1_{n}-2", f"{n}-3_{n}-4", f"{n}-2_{n}-3"):
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
a, b, s = tcp[f"{n}-1_{n}-2"], tcp[f"{n}-3_{n}-4"], tcp[f"{n}-2_{n}-3"]
overlap = min(a[1], b[1]) - max(a[0], b[0])
assert overlap >= 2, f"the disjoint pairs' TCP tests did not run together: {a} {b}"
assert s[0] >= max(a[1], b[1]) - 1, f"the pair sharing a node ran during the first wave: {s} {a} {b}"
print(f"wave 1 ran together ({overlap:.0f} s of TCP overlap); the shared pair's TCP started after it")
failed = json.load(open(os.path.join(d, f"{n}-4_{n}-9", "np_failed.json")))
assert f"{n}-9" in failed["step"] + failed["message"], failed
assert f"{n}-4 -> {n}-9" in table, table
assert "PAIRS: FAIL (3 of 4 pairs measured" in table, table
assert f"{n}-4 -> {n}-9: not measured: " in table, table
report = open(os.path.join(d, "report.html")).read()
for name in (f"{n}-1_{n}-2", f"{n}-3_{n}-4", f"{n}-2_{n}-3"):
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
