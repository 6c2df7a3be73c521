#!/bin/sh
# The node side of the network-performance tutorial, the same for every mode: the manual script
# and the notebook run it over ssh (`ssh root@NODE sh -s -- CMD … < network-performance_node.sh`),
# the playbooks with Ansible's `script` module. One implementation of what changes a node, so
# the teardown playbook can undo what any mode (or a killed run of it) left behind.
#
#   preflight NODE IFACE MARKER        checks only; changes nothing (exit 1 naming what failed)
#   configure NODE IFACE ADDR PREFIX [MTU]  the node locked (as np-explain's runs lock it), iface up +
#                                      address, undo recorded first
#   carrier NODE IFACE                 waits up to 5 s for carrier (once both nodes' ports are up:
#                                      back to back, one end's carrier needs the other end up),
#                                      then up to 10 s for IPv6 duplicate address detection
#   datapath  NODE IFACE PEER          ping -I the peer's data address (ARP or neighbour discovery
#                                      answered: same segment)
#   probe-start NODE IFACE PORT ROLE MAX_S   np-probe (uploaded to the node's state dir) in the background
#   phase NODE NAME                    announce a phase to the probe (its counters are cut there)
#   probe-stop NODE [--print-trace]    stop the probe: it writes STATE/trace.json (printed) and detaches
#   server-start NODE PORT             supervised iperf3 -s: systemd-run --unit=np-iperf3 --collect
#                                      where PID 1 is systemd, else iperf3 -D with a pidfile
#   server-stop NODE                   stops exactly that unit / PID
#   teardown NODE IFACE                all of the above undone; safe twice and after kill -9
#
# State: /run/network-performance/NODE/ (0700): the uploaded np-probe, its control socket,
# pidfiles (probe, server, and client.pid, which each mode's client test writes as it starts:
# `echo $$ > client.pid && exec TOOL …`), the trace, the tool outputs, and `undo` (the commands that reverse the iface changes,
# written before each change).
set -eu

die() {
    echo "network-performance: $*" >&2
    exit 1
}
[ $# -ge 2 ] || die "usage: network-performance_node.sh CMD NODE ARGS…"
cmd=$1
node=$2
shift 2
case $node in
    *[!A-Za-z0-9._-]* | '' | . | ..) die "bad node name '$node'" ;;
esac
state=/run/network-performance/$node
probe=$state/np-probe
sock=$state/probe.sock

# A PID from a pidfile, only if that process still runs the program named (a stale pidfile of a
# recycled PID must never get a signal).
live_pid() { # PIDFILE COMM
    [ -f "$1" ] || return 1
    p=$(cat "$1" 2>/dev/null) || return 1
    case $p in '' | *[!0-9]*) return 1 ;; esac
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] || return 1
    echo "$p"
}
wait_gone() { # PID SECONDS
    i=0
    while kill -0 "$1" 2>/dev/null && [ $i -lt $(($2 * 10)) ]; do
        sleep 0.1
        i=$((i + 1))
    done
    ! kill -0 "$1" 2>/dev/null
}
systemd_pid1() { [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; }

preflight() { # IFACE MARKER
    iface=$1 marker=$2 bad=""
    if [ -e "$marker" ]; then echo "$node: image marker $marker: present"; else
        bad="$bad; no $marker (the node booted the PXE stage image: omf tell offh, wait 20 s, omf tell on)"
    fi
    if [ -d "/sys/class/net/$iface" ]; then
        oper=$(cat "/sys/class/net/$iface/operstate")
        carrier=$(cat "/sys/class/net/$iface/carrier" 2>/dev/null || echo unknown)
        echo "$node: $iface: operstate $oper, carrier $carrier"
        if [ "$oper" != down ] && [ "$carrier" = 0 ]; then
            bad="$bad; no carrier on $iface (ports with carrier: $(carrier_ports)) - set np_data_iface"
        fi
    else
        bad="$bad; no interface $iface (ports: $(ls /sys/class/net | tr '\n' ' ')) - set np_data_iface"
    fi
    for tool in iperf3 ping ip; do
        command -v "$tool" >/dev/null 2>&1 || bad="$bad; $tool is not installed"
    done
    [ -z "$bad" ] || die "preflight failed on $node${bad}"
    echo "$node: preflight ok"
}
carrier_ports() {
    for d in /sys/class/net/*; do
        [ "$(cat "$d/carrier" 2>/dev/null)" = 1 ] && [ "${d##*/}" != lo ] && printf '%s ' "${d##*/}"
    done
    true
}

# The node held for this mode from configure to teardown, with the lock np-explain's runs take
# (one per network namespace, /run/np-explain/net-NETNS.lock): a run, or another mode or pair of
# the fan-out, on the node is refused naming what holds it, until teardown (which a killed mode
# leaves to the teardown playbook). A process in a session of its own holds it.
node_lock() {
    if ! command -v flock >/dev/null 2>&1; then
        echo "$node: flock (util-linux) is not installed: the node is not locked" >&2
        return 0
    fi
    p=$(cat "$state/lock.pid" 2>/dev/null || true)
    case $p in '' | *[!0-9]*) ;; *) grep -q np-lock "/proc/$p/cmdline" 2>/dev/null && return 0 ;; esac
    mkdir -p -m 0700 /run/np-explain
    net=$(stat -L -c %i /proc/self/ns/net 2>/dev/null) || net=host
    lock=/run/np-explain/net-$net.lock
    exec 9<>"$lock"
    if ! flock -w 3 9; then
        held=$(head -c 512 "$lock" | tr -cd '[:print:]\n' | head -n 1)
        die "$node is held by another np-explain ${held:-process}; wait for it to end (a killed mode's: its teardown playbook)"
    fi
    setsid sh -c 'while :; do sleep 3600 9>&-; done' np-lock </dev/null >/dev/null 2>&1 &
    echo $! >"$state/lock.pid"
    printf 'tutorial mode on %s (network-performance_node.sh configure), since %s (holder pid %s on this node)\n' \
        "$node" "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$!" >"$lock"
    exec 9>&-
}

node_unlock() {
    p=$(cat "$state/lock.pid" 2>/dev/null || true)
    case $p in '' | *[!0-9]*) return 0 ;; esac
    if grep -q np-lock "/proc/$p/cmdline" 2>/dev/null; then kill -TERM "-$p" 2>/dev/null || true; fi
}

configure() { # IFACE ADDR PREFIX [MTU]
    iface=$1 addr=$2 prefix=$3 mtu=${4:-}
    case $mtu in *[!0-9]*) die "MTU '$mtu' is not a number" ;; esac
    # An IPv6 address on a port (or a kernel) without IPv6: the kernel would refuse it.
    case $addr in *:*)
        [ -d /proc/sys/net/ipv6 ] || die "$node's kernel runs without IPv6 (booted with ipv6.disable=1): $iface cannot take $addr; use IPv4 data addresses (np_server_ip, np_client_ip)"
        [ "$(cat "/proc/sys/net/ipv6/conf/$iface/disable_ipv6" 2>/dev/null)" != 1 ] ||
            die "IPv6 is disabled on $iface of $node (net.ipv6.conf.$iface.disable_ipv6 = 1): it cannot take $addr; enable it (sysctl -w net.ipv6.conf.$iface.disable_ipv6=0) or use IPv4 data addresses"
        ;;
    esac
    mkdir -p -m 0700 "$state"
    node_lock
    # Undo first: what reverses each change is on disk before the change is made.
    if ! ip -o addr show dev "$iface" | grep -q " $addr/$prefix "; then
        echo "ip addr del $addr/$prefix dev $iface" >>"$state/undo"
    fi
    # IPv6 drops a link's addresses when it goes down unless keep_addr_on_down is set (IPv4
    # keeps them): kept for the run, so the address outlives a flap of the link, and set back.
    # (sysctl's slash form: an iface name may hold a dot.)
    keep=net/ipv6/conf/$iface/keep_addr_on_down
    case $addr in *:*)
        was=$(sysctl -n "$keep" 2>/dev/null) || was=
        if [ -n "$was" ] && [ "$was" != 1 ]; then
            echo "sysctl -qw $keep=$was" >>"$state/undo"
            sysctl -qw "$keep=1"
        fi
        ;;
    esac
    if ! ip -o link show dev "$iface" | grep -q '[<,]UP[,>]'; then
        echo "ip link set $iface down" >>"$state/undo"
    fi
    # The run's MTU (np_mtu), set back to the one the port had.
    was_mtu=$(cat "/sys/class/net/$iface/mtu")
    if [ -n "$mtu" ] && [ "$mtu" != "$was_mtu" ]; then
        echo "ip link set $iface mtu $was_mtu" >>"$state/undo"
        ip link set "$iface" mtu "$mtu"
    fi
    ip link set "$iface" up
    ip addr replace "$addr/$prefix" dev "$iface"
    echo "$node: $iface up, $addr/$prefix"
}

carrier() { # IFACE
    iface=$1
    i=0
    while [ "$(cat "/sys/class/net/$iface/carrier" 2>/dev/null)" != 1 ]; do
        [ $i -lt 50 ] || die "no carrier on $iface of $node though both nodes' ports are up (ports with carrier: $(carrier_ports)) - wrong port for this row? set np_data_iface"
        sleep 0.1
        i=$((i + 1))
    done
    echo "$node: $iface has carrier"
    # An IPv6 address is usable only once duplicate address detection has passed, about a
    # second after it was added (while it is "tentative"); "dadfailed": another host holds it.
    i=0
    while s=$(ip -o addr show dev "$iface" tentative) && [ -n "$s" ]; do
        case $s in *dadfailed*) die "another host on the segment holds $node's address on $iface: IPv6 duplicate address detection failed (dadfailed); find that host, or choose another address" ;; esac
        [ $i -lt 100 ] || die "the addresses of $iface on $node are still tentative after 10 s (duplicate address detection)"
        sleep 0.1
        i=$((i + 1))
    done
}

datapath() { # IFACE PEER
    case $2 in *:*) asked="neighbour discovery" ;; *) asked=ARP ;; esac
    ping -c 2 -W 1 -I "$1" "$2" >/dev/null 2>&1 ||
        die "$node cannot reach $2 over $1: $asked unanswered, the two data ports are on different segments (use the shared one: np_data_iface)"
    echo "$node: $2 answers over $1 (same segment)"
}

probe_start() { # IFACE PORT ROLE MAX_S
    [ -x "$probe" ] || die "no np-probe in $state (upload it first)"
    if p=$(live_pid "$state/probe.pid" np-probe); then die "a probe already runs on $node (pid $p)"; fi
    "$probe" --iface "$1" --port "$2" --role "$3" --node "$node" --duration "$4" \
        --background --control "$sock" --out "$state/trace.json" --pidfile "$state/probe.pid" \
        </dev/null >"$state/probe.ready" 2>"$state/probe.log" ||
        die "np-probe did not start on $node: $(cat "$state/probe.log")"
    echo "$node: probe counting on $1 (pid $(cat "$state/probe.pid"))"
}

phase() { # NAME
    "$probe" --control "$sock" --send "phase $1" >/dev/null || die "the probe on $node did not take phase $1"
}

probe_stop() { # [--print-trace]: the trace on stdout, the message on stderr
    p=$(live_pid "$state/probe.pid" np-probe) || { echo "$node: no probe running"; return 0; }
    "$probe" --control "$sock" --send stop >/dev/null 2>&1 || kill -TERM "$p" 2>/dev/null || true
    wait_gone "$p" 10 || { kill -KILL "$p" 2>/dev/null || true; }
    if [ "${1:-}" = --print-trace ]; then
        cat "$state/trace.json"
        echo "$node: probe stopped, trace $state/trace.json" >&2
    else
        echo "$node: probe stopped, trace $state/trace.json"
    fi
}

server_start() { # PORT
    mkdir -p -m 0700 "$state"
    if systemd_pid1; then
        echo unit >"$state/server"
        systemd-run --unit=np-iperf3 --collect /usr/bin/iperf3 -s -p "$1" >/dev/null
    else
        echo pid >"$state/server"
        iperf3 -s -p "$1" -D -I "$state/iperf3.pid"
    fi
    i=0
    until ss -Hltn "sport = :$1" | grep -q .; do
        [ $i -lt 50 ] || die "iperf3 server did not start listening on port $1 of $node"
        sleep 0.1
        i=$((i + 1))
    done
    echo "$node: iperf3 server supervised ($(cat "$state/server")) on port $1"
}

server_stop() {
    [ -f "$state/server" ] || { echo "$node: no server started here"; return 0; }
    if [ "$(cat "$state/server")" = unit ]; then
        systemctl stop np-iperf3 2>/dev/null || true
    elif p=$(live_pid "$state/iperf3.pid" iperf3); then
        kill -TERM "$p" 2>/dev/null || true # it may have ended since live_pid looked
        wait_gone "$p" 5 || kill -KILL "$p" 2>/dev/null || true
    fi
    rm -f "$state/server" "$state/iperf3.pid"
    echo "$node: iperf3 server stopped"
}

teardown() { # IFACE
    if [ ! -d "$state" ]; then
        echo "$node: nothing to tear down"
        return 0
    fi
    probe_stop
    # A client test a killed run left running (ping or iperf3 -c, its PID recorded as it
    # started) ends here, not when its -t runs out.
    if p=$(live_pid "$state/client.pid" iperf3) || p=$(live_pid "$state/client.pid" ping); then
        # A client whose SSH session was cut is ending on its own: gone by the time of the
        # signal is fine (under set -e a failed kill would fail the whole teardown).
        kill -TERM "$p" 2>/dev/null || true
        wait_gone "$p" 5 || kill -KILL "$p" 2>/dev/null || true
        echo "$node: stopped the client test left running (pid $p)"
    fi
    # A probe killed with SIGKILL leaves its tc filters: --cleanup removes them (by handle).
    [ -x "$probe" ] && "$probe" --cleanup --iface "$1" >/dev/null 2>&1 || true
    server_stop
    if [ -f "$state/undo" ]; then
        # Newest change first.
        tac "$state/undo" | while read -r line; do $line 2>/dev/null || true; done
    fi
    node_unlock
    rm -rf "$state"
    rmdir /run/network-performance 2>/dev/null || true
    echo "$node: torn down (probe, server, uploads, $1 as found)"
}

case $cmd in
    preflight) [ $# -eq 2 ] || die "usage: preflight NODE IFACE MARKER"; preflight "$@" ;;
    configure) [ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: configure NODE IFACE ADDR PREFIX [MTU]"; configure "$@" ;;
    carrier) [ $# -eq 1 ] || die "usage: carrier NODE IFACE"; carrier "$@" ;;
    datapath) [ $# -eq 2 ] || die "usage: datapath NODE IFACE PEER"; datapath "$@" ;;
    probe-start) [ $# -eq 4 ] || die "usage: probe-start NODE IFACE PORT ROLE MAX_S"; probe_start "$@" ;;
    phase) [ $# -eq 1 ] || die "usage: phase NODE NAME"; phase "$@" ;;
    probe-stop) probe_stop "$@" ;;
    server-start) [ $# -eq 1 ] || die "usage: server-start NODE PORT"; server_start "$@" ;;
    server-stop) server_stop ;;
    teardown) [ $# -eq 1 ] || die "usage: teardown NODE IFACE"; teardown "$@" ;;
    *) die "unknown command '$cmd'" ;;
esac
