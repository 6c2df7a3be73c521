#!/usr/bin/env bash
# Manual mode, scripted: the tutorial's steps one after another over ssh, with np-explain's
# probe counting on both data NICs, ending in np_contract_manual.json (the tutorial's figures
# plus np-explain's explanation and both traces).
#
#   bash network-performance/network-performance_manual.sh NODE_A NODE_B   (A = iperf3 server)
#
# Environment: NETWORK_PERFORMANCE_SSH_CONFIG (default: your own ssh config),
# NETWORK_PERFORMANCE_PARAMS (default: network-performance_params.yml beside this script),
# NETWORK_PERFORMANCE_RUN_DIR (default /tmp/network-performance-$USER/), NP_EXPLAIN (default
# np-explain on PATH), NP_PROBE (default: np-probe beside np-explain). Host keys are checked
# strictly. Whatever happens, the nodes are left as they were found (exit trap).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${NETWORK_PERFORMANCE_MODE:-manual}
[[ $# -eq 2 ]] || { echo "usage: $0 NODE_A NODE_B   (NODE_A runs the iperf3 server)" >&2; exit 2; }
node_a=$1 node_b=$2
np_explain=${NP_EXPLAIN:-$(command -v np-explain || true)}
[[ -n $np_explain && -x $np_explain ]] || { echo "np-explain not found: put it on PATH or set NP_EXPLAIN" >&2; exit 3; }
np_probe=${NP_PROBE:-$(dirname "$(readlink -f "$np_explain")")/np-probe}
[[ -x $np_probe ]] || np_probe=$(dirname "$(readlink -f "$np_explain")")/../probe/np-probe
[[ -x $np_probe ]] || { echo "np-probe not found beside $np_explain: set NP_PROBE" >&2; exit 3; }
params=${NETWORK_PERFORMANCE_PARAMS:-$here/network-performance_params.yml}
run_dir=${NETWORK_PERFORMANCE_RUN_DIR:-/tmp/network-performance-${USER:-$(id -un)}}

# One SSH connection per node for all the steps (a master that ends 30 s after its last use).
cm_dir=$(mktemp -d /tmp/network-performance-ssh.XXXXXX)
# The node steps every mode shares, as np-explain's own runs take them: each step below pipes
# them to `sh -s` on a node.
node_sh=$cm_dir/node-steps.sh
"$np_explain" node-steps >"$node_sh"
ssh_opts=(-o StrictHostKeyChecking=yes -o BatchMode=yes
    -o ControlMaster=auto -o "ControlPath=$cm_dir/%C" -o ControlPersist=30)
[[ -n ${NETWORK_PERFORMANCE_SSH_CONFIG:-} ]] && ssh_opts=(-F "$NETWORK_PERFORMANCE_SSH_CONFIG" "${ssh_opts[@]}")
close_ssh() {
    for n in "$node_a" "$node_b"; do ssh "${ssh_opts[@]}" -O exit "root@$n" 2>/dev/null || true; done
    rm -rf "$cm_dir"
}
on() { ssh "${ssh_opts[@]}" "root@$1" "${@:2}"; }                     # a command on a node
step() { ssh "${ssh_opts[@]}" "root@$1" sh -s -- "${@:2}" <"$node_sh"; } # a node step

# The parameters as np-explain checks them (the same reader as `np-explain run`).
eval "$("$np_explain" params "$params" --shell)"
iface=$np_data_iface
mkdir -p "$run_dir"
out=$run_dir/$mode
echo "== $mode: $node_a (server) <- $node_b (client) over $iface; params $params; run dir $run_dir"

# 0. Preflight: nothing changes on a node unless both pass.
trap close_ssh EXIT
step "$node_a" preflight "$node_a" "$iface" "$np_image_marker"
step "$node_b" preflight "$node_b" "$iface" "$np_image_marker"

teardown() {
    local rc=$?
    trap - EXIT INT TERM
    step "$node_a" teardown "$node_a" "$iface" || true
    step "$node_b" teardown "$node_b" "$iface" || true
    close_ssh
    exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. Configure the data interface on both nodes (server .1, client .2)
step "$node_a" configure "$node_a" "$iface" "$np_server_ip" "$np_prefix_len" "$np_mtu"
step "$node_b" configure "$node_b" "$iface" "$np_client_ip" "$np_prefix_len" "$np_mtu"
# Carrier once both ports are up: cabled back to back, neither has it before the other is up.
step "$node_a" carrier "$node_a" "$iface"
step "$node_b" carrier "$node_b" "$iface"
step "$node_b" datapath "$node_b" "$iface" "$np_server_ip"

# The probe: uploaded into each node's private state dir, checked, started in the background
# on the data NIC (it stops by itself after the longest this run can take).
max_s=$((np_ping_count + np_tcp_duration_s + np_udp_duration_s + 300))
sum=$(sha256sum "$np_probe" | cut -d' ' -f1)
for n in "$node_a" "$node_b"; do
    f=/run/network-performance/$n/np-probe
    on "$n" "cat > $f && chmod 0700 $f && echo '$sum  $f' | sha256sum -c --quiet" <"$np_probe" ||
        { echo "np-probe upload to $n failed or is corrupt" >&2; exit 3; }
done
step "$node_a" probe-start "$node_a" "$iface" "$np_port" server "$max_s"
step "$node_b" probe-start "$node_b" "$iface" "$np_port" client "$max_s"

# 2. Start the server SUPERVISED (systemd-run unit, or a pidfile): stopped by that handle only
step "$node_a" server-start "$node_a" "$np_port"

# 3. Measure from the client, BOUND to the data path; each phase announced to both probes
phase() { step "$node_a" phase "$node_a" "$1" && step "$node_b" phase "$node_b" "$1"; }
# OUT SECONDS COMMAND…: the test step records the test's PID, so a teardown after a killed run
# can stop exactly that test; for a test of SECONDS it pings the server beside it, as
# `np-explain run` does (the probes stamp the echoes: the round trip under load, by stage).
measure() { step "$node_b" test "$node_b" "$iface" "$np_server_ip" "${@:2}" >"$1" || true; }
phase ping
measure "${out}_ping.txt" 0 ping -c "$np_ping_count" -I "$iface" "$np_server_ip"
phase tcp
# iperf3's options as np-explain makes them from the params (port, duration, streams, direction…)
measure "${out}_tcp.json" "$np_tcp_duration_s" iperf3 -c "$np_server_ip" "$np_iperf3_tcp_options"
phase udp
measure "${out}_udp.json" "$np_udp_duration_s" iperf3 -c "$np_server_ip" "$np_iperf3_udp_options"

# 4. Stop exactly that server, stop the probes, bring their traces to the console
step "$node_a" server-stop "$node_a"
traces=()
for n in "$node_a" "$node_b"; do
    step "$n" probe-stop "$n" --print-trace >"${out}_trace_$n.json"
    traces+=(--trace "${out}_trace_$n.json")
done

# 5. Unconfigure (the exit trap runs the same teardown if anything above failed)
trap - EXIT
step "$node_a" teardown "$node_a" "$iface"
step "$node_b" teardown "$node_b" "$iface"
close_ssh

# The result contract: the tutorial's figures from the tools' outputs, the explanation and the
# traces, all by np-explain.
link=()
[[ -n $np_link_rate_bps ]] && link=(--link "$np_link_rate_bps")
"$np_explain" attach "$run_dir/np_contract_$mode.json" --mode "$mode" --node1 "$node_a" --node2 "$node_b" \
    --ping "${out}_ping.txt" --iperf3 "${out}_tcp.json" --iperf3 "${out}_udp.json" "${traces[@]}" "${link[@]}"
echo "== wrote $run_dir/np_contract_$mode.json"
