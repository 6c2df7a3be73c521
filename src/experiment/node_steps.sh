# np-explain's node side: the one implementation of what a run changes on a node and how that
# is undone, shared by `np-explain run`/`teardown` and the tutorial's modes. POSIX sh; every name
# it defines starts with np_.
#
# Two ways in:
# - np-explain defines these functions in the command shell it keeps open on each node (this
#   file is compiled into it) and calls them: np_lock, np_iface_up, np_server_start, …;
# - the tutorial's modes run it as a script, one step per ssh call (`np-explain node-steps`
#   prints it): `np-explain node-steps | ssh root@NODE sh -s -- STEP NODE ARGS…`, the steps at
#   the end of this file.
#
# Undo first: each change is preceded by an undo step, a file NN-NAME.undo in the run's state
# dir (0700, under /run) holding the calls that reverse it. Steps run in the order of their names
# (05-client, 10-probe, 20-server, 30-upload, 40-iface), each sourced in a subshell of a shell
# that has these functions, so an undo step is one line of them. A run killed with SIGKILL, or
# cut off from the node, leaves its undo steps for a teardown.

np_die() {
    echo "$*" >&2
    exit 1
}

# A word quoted for the shell ('…', inner quotes escaped).
np_q() {
    printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# np_private_dir DIR: DIR and each of its parents below /run, made 0700 where missing.
np_private_dir() {
    case $1 in /run/?*) ;; *) np_die "state dir '$1' is not under /run" ;; esac
    _p=/run _rest=${1#/run/}
    while [ -n "$_rest" ]; do
        _p=$_p/${_rest%%/*}
        case $_rest in */*) _rest=${_rest#*/} ;; *) _rest= ;; esac
        # Two runs may make a shared parent at once: there is what counts.
        mkdir -m 0700 "$_p" 2>/dev/null || [ -d "$_p" ] || return 1
    done
}

# --- undo steps ---------------------------------------------------------------------------------

# np_undo_record DIR NAME CALLS: DIR/NAME.undo holds CALLS, before the change they undo is made.
np_undo_record() {
    np_private_dir "$1" || return 1
    printf '%s\n' "$3" >"$1/$2.undo"
}

# np_undo_run FILE: one undo step now; the file goes whatever its outcome (the caller says what
# failed). Its exit status is the step's.
np_undo_run() {
    [ -e "$1" ] || return 0
    if (
        set +eu
        . "$1"
    ); then _s=0; else _s=$?; fi
    rm -f "$1"
    return $_s
}

# np_undo_here PREFIX: the undo steps in the current dir in order, each "undone: PREFIXNAME" (and
# removed) or "failed: PREFIXNAME" (kept for a teardown); np_found=1 when there were any.
np_undo_here() {
    for _f in *.undo; do
        [ -e "$_f" ] || continue
        np_found=1
        if (
            set +eu
            . "./$_f"
        ); then
            echo "undone: $1${_f%.undo}"
            rm -f "$_f"
        else
            echo "failed: $1${_f%.undo}"
        fi
    done
    return 0
}

# A run's state dir removed once none of its undo steps is left (what it still holds, PIDs and
# logs, is the run's); one that failed keeps it for a teardown.
np_remove_if_undone() {
    if ! ls "$1" 2>/dev/null | grep -q '[.]undo$'; then rm -rf -- "$1"; fi
    return 0
}

# np_undo_all DIR: every undo step of one run, in order, then its state dir and (when empty) the
# dir above it. Prints a line per step, or "nothing to undo".
np_undo_all() {
    np_found=0
    if cd "$1" 2>/dev/null; then
        np_undo_here ""
        cd / && np_remove_if_undone "$1"
        rmdir "${1%/*}" 2>/dev/null || true
    fi
    [ "$np_found" = 1 ] || echo 'nothing to undo'
    return 0
}

# np_undo_leftovers NODE_DIR: every run's undo steps left in NODE_DIR/RUN/ (each run's in order),
# then steps left in NODE_DIR itself. Only with the node's lock held, so none is a live run's.
np_undo_leftovers() {
    np_found=0
    if cd "$1" 2>/dev/null; then
        for _d in */; do
            [ -d "$_d" ] || continue
            if (cd "$_d" && np_found=0 && np_undo_here "run ${_d%/}: " && [ "$np_found" = 1 ]); then
                np_found=1
            fi
            cd "$1" && np_remove_if_undone "$_d"
        done
        np_undo_here ""
        cd / && { rmdir "$1" 2>/dev/null || true; }
    fi
    [ "$np_found" = 1 ] || echo 'nothing to undo'
    return 0
}

# --- stopping what a run started, never by name -------------------------------------------------

# np_wait_while TENTHS COMMAND…: up to TENTHS tenths of a second, while COMMAND succeeds.
np_wait_while() {
    _n=$1 _i=0
    shift
    while "$@" && [ $_i -lt "$_n" ]; do
        sleep 0.1
        _i=$((_i + 1))
    done
    return 0
}

# Whether process PID still runs one of PROGRAMS (an extended regex, 'iperf3|ping'), by its
# argv[0]: a recycled PID is left alone.
np_runs() {
    [ -r "/proc/$1/cmdline" ] && tr '\0' '\n' <"/proc/$1/cmdline" | head -n 1 | grep -Eq "(^|/)($2)\$"
}

# np_stop_pid PIDFILE PROGRAMS: that process, if it still runs one of PROGRAMS: TERM, up to 2 s,
# then KILL; the pidfile removed.
np_stop_pid() {
    [ -r "$1" ] || return 0
    _pid=$(cat "$1")
    case $_pid in '' | *[!0-9]*)
        rm -f "$1"
        return 0
        ;;
    esac
    if np_runs "$_pid" "$2"; then
        kill -TERM "$_pid" 2>/dev/null || true
        np_wait_while 20 np_runs "$_pid" "$2"
        if np_runs "$_pid" "$2"; then kill -KILL "$_pid" 2>/dev/null || true; fi
    fi
    rm -f "$1"
}

# Whether a member of process group PGID has a command line matching PROGRAMS (extended regex).
np_group_runs() {
    for _m in $(pgrep -g "$1" 2>/dev/null); do
        if tr '\0' ' ' <"/proc/$_m/cmdline" 2>/dev/null | grep -Eq "$2"; then return 0; fi
    done
    return 1
}

# np_stop_pgroup PGID PROGRAMS: the group, while a member still runs PROGRAMS: TERM and CONT (a
# stopped member would hold TERM), up to 2 s, then KILL and up to 1 s.
np_stop_pgroup() {
    np_group_runs "$1" "$2" || return 0
    kill -TERM "-$1" 2>/dev/null || true
    kill -CONT "-$1" 2>/dev/null || true
    np_wait_while 20 np_group_runs "$1" "$2"
    np_group_runs "$1" "$2" || return 0
    kill -KILL "-$1" 2>/dev/null || true
    np_wait_while 10 np_group_runs "$1" "$2"
}

# np_stop_group PIDFILE PROGRAMS: a process that leads a session of its own (setsid), with what
# it started; fails, keeping the pidfile for a teardown, when the group outlives KILL.
np_stop_group() {
    [ -r "$1" ] || return 0
    _pg=$(cat "$1")
    case $_pg in '' | *[!0-9]* | 0 | 1)
        rm -f "$1"
        return 0
        ;;
    esac
    np_stop_pgroup "$_pg" "$2"
    if np_group_runs "$_pg" "$2"; then
        echo "process group $_pg ($2) did not stop" >&2
        return 1
    fi
    rm -f "$1"
}

# np_stop_foreign_group PGIDFILE PROGRAMS: the process group recorded in PGIDFILE (the command
# shell a run's clients ran in), unless it is this shell's own (the run's own teardown).
np_stop_foreign_group() {
    [ -r "$1" ] || return 0
    _pg=$(cat "$1")
    case $_pg in '' | *[!0-9]* | 0 | 1) return 0 ;; esac
    [ "$(ps -o pgid= -p $$ | tr -d ' ')" = "$_pg" ] && return 0
    np_stop_pgroup "$_pg" "$2"
}

# --- the node's lock -----------------------------------------------------------------------------

# np_lock HOLDER [PID…]: the node held, with an flock on /run/np-explain/net-NETNS.lock (one per
# network namespace, so one host reached under two names is one node), by a small process in a
# session of its own: until the first PID given that is above 1 ends (the sshd serving the run's
# connection: a run killed or cut off releases it with its connection), or without one until
# np_unlock. HOLDER is written into the lock, for whoever is refused. Prints "locked PID"; with
# the node held by another, "held WHO" and status 75 after up to 3 s.
np_lock() {
    _holder=$1
    shift
    umask 077
    np_private_dir /run/np-explain || return 3
    if ! command -v flock >/dev/null 2>&1; then
        echo 'flock (util-linux) is not installed' >&2
        return 4
    fi
    _net=$(stat -L -c %i /proc/self/ns/net 2>/dev/null) || _net=host
    _lock=/run/np-explain/net-$_net.lock
    exec 9<>"$_lock" || return 3
    if ! flock -w 3 9; then
        _held=$(head -c 512 "$_lock" | tr -cd '[:print:]\n' | head -n 1)
        exec 9>&-
        echo "held ${_held:-by a process that has not said who it is}"
        return 75
    fi
    _watch=
    for _c in "$@"; do
        if [ -z "$_watch" ] && [ "$_c" -gt 1 ] 2>/dev/null; then _watch=$_c; fi
    done
    setsid sh -c 'while [ -z "$1" ] || kill -0 "$1" 2>/dev/null; do sleep 1 9>&-; done' np-lock \
        "$_watch" </dev/null >/dev/null 2>&1 &
    _holder_pid=$!
    printf '%s, since %s (holder pid %s on this node)\n' "$_holder" \
        "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$_holder_pid" >"$_lock"
    exec 9>&-
    echo "locked $_holder_pid"
}

# np_unlock PID: the holder np_lock started, if PID is still it (a recycled PID is not); it leads
# a session of its own, so its sleep goes with it. Returns once it is gone (up to 5 s; an exited
# holder's command line is empty and its lock closed), so a node its teardown freed is free: a
# run started right after is not refused (seen on a loaded machine: the lock still held after
# the teardown returned).
np_unlock() {
    case $1 in '' | *[!0-9]*) return 0 ;; esac
    if grep -q np-lock "/proc/$1/cmdline" 2>/dev/null; then
        kill -TERM "-$1" 2>/dev/null || true
        _waits=0
        while [ "$_waits" -lt 50 ] && grep -q np-lock "/proc/$1/cmdline" 2>/dev/null; do
            sleep 0.1
            _waits=$((_waits + 1))
        done
    fi
    return 0
}

# --- the data interface ---------------------------------------------------------------------------

# np_dad_wait IFACE ADDR: an IPv6 address is usable once duplicate address detection has passed
# (one neighbour solicitation and a second's wait by default, after a random delay of up to a
# second), while it is "tentative"; up to 10 s. Prints dad=done, dad=failed (another host on the
# segment holds it), dad=no-carrier (a link without carrier keeps it tentative) or dad=waiting.
np_dad_wait() {
    _i=0
    while [ $_i -lt 50 ]; do
        _s=$(ip -o addr show dev "$1" to "$2")
        case $_s in
            *dadfailed*)
                echo dad=failed
                return 0
                ;;
            *tentative*) ;;
            *)
                echo dad=done
                return 0
                ;;
        esac
        if [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" != 1 ]; then
            echo dad=no-carrier
            return 0
        fi
        sleep 0.2
        _i=$((_i + 1))
    done
    echo dad=waiting
}

# np_iface_up DIR IFACE ADDR/PREFIX [MTU [keep]]: the link up with the address (replaced), and the
# MTU when one is given; undone as found (DIR/40-iface.undo) unless "keep". An IPv6 address
# keeps keep_addr_on_down set for the run (IPv6 drops a link's addresses when it goes down, IPv4
# does not: the address outlives a flap of the link) and is waited for (np_dad_wait). Nothing
# changes when the link's flags and MTU cannot be read.
np_iface_up() {
    _dir=$1 _if=$2 _cidr=$3 _mtu=${4:-} _keep=${5:-}
    _addr=${_cidr%/*}
    _sys=/sys/class/net/$_if
    _flags=$(cat "$_sys/flags" 2>/dev/null) || _flags=
    _was_mtu=$(cat "$_sys/mtu" 2>/dev/null) || _was_mtu=
    case $_flags in 0x[0-9a-f]*) ;; *)
        echo "$_if: its flags could not be read from $_sys/flags; nothing was changed" >&2
        return 1
        ;;
    esac
    case $_was_mtu in '' | *[!0-9]*)
        echo "$_if: its MTU could not be read from $_sys/mtu; nothing was changed" >&2
        return 1
        ;;
    esac
    case $_mtu in *[!0-9]*)
        echo "MTU '$_mtu' is not a number" >&2
        return 2
        ;;
    esac
    _had=0
    if [ -n "$(ip -o addr show dev "$_if" to "$_addr" 2>/dev/null)" ]; then _had=1; fi
    _keepf='' _keep_was=''
    case $_addr in *:*)
        _keepf=/proc/sys/net/ipv6/conf/$_if/keep_addr_on_down
        _keep_was=$(cat "$_keepf" 2>/dev/null) || _keep_was=
        [ "$_keep_was" != 1 ] || _keep_was=
        ;;
    esac
    [ "$_mtu" != "$_was_mtu" ] || _mtu=
    if [ "$_keep" != keep ]; then
        _undo=
        [ $_had = 1 ] || _undo="${_undo}ip addr del $(np_q "$_cidr") dev $(np_q "$_if") 2>/dev/null; "
        [ -z "$_keep_was" ] || _undo="${_undo}echo $_keep_was > $(np_q "$_keepf") 2>/dev/null; "
        [ -z "$_mtu" ] || _undo="${_undo}ip link set dev $(np_q "$_if") mtu $_was_mtu 2>/dev/null; "
        [ $((_flags & 1)) = 1 ] || _undo="${_undo}ip link set dev $(np_q "$_if") down; "
        np_undo_record "$_dir" 40-iface "${_undo}true" || return 1
    fi
    if [ -n "$_keep_was" ]; then echo 1 >"$_keepf" || return 1; fi
    if [ -n "$_mtu" ]; then ip link set dev "$_if" mtu "$_mtu" || return 1; fi
    ip link set dev "$_if" up && ip addr replace "$_cidr" dev "$_if" || return 1
    case $_addr in *:*) np_dad_wait "$_if" "$_addr" ;; esac
    return 0
}

# --- the iperf3 server --------------------------------------------------------------------------

np_listening() { ss -Htln "sport = :$1" | grep -q .; }

# np_server_start DIR PORT UNIT: iperf3 -s supervised: a transient systemd unit UNIT where PID 1
# is systemd, else in a session of its own with a pidfile (DIR/iperf3.pid); stopped by that
# handle only (DIR/20-server.undo). Refused (status 2) when PORT is already in use. Prints its
# supervisor, "systemd unit UNIT" or "pid N", once it listens (up to 5 s).
np_server_start() {
    _dir=$1 _port=$2 _unit=$3
    if np_listening "$_port"; then
        echo "TCP port $_port is already in use" >&2
        return 2
    fi
    _bin=$(command -v iperf3) || {
        echo "iperf3 is not installed" >&2
        return 1
    }
    if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; then
        np_undo_record "$_dir" 20-server \
            "systemctl stop $_unit 2>/dev/null; systemctl reset-failed $_unit 2>/dev/null; true" ||
            return 1
        echo "unit $_unit" >"$_dir/server"
        systemd-run --quiet --unit="$_unit" --collect "$_bin" -s -p "$_port" || return 1
    else
        np_undo_record "$_dir" 20-server \
            "rm -f $(np_q "$_dir/iperf3.log"); np_stop_group $(np_q "$_dir/iperf3.pid") iperf3" ||
            return 1
        echo pid >"$_dir/server"
        # setsid -f forks: the server holds none of the caller's fds (an SSH channel's), and is
        # out of reach of its process group. The pidfile is written just before exec.
        setsid -f sh -c 'cd / && echo $$ >"$1" && exec "$2" -s -p "$3"' np-iperf3 \
            "$_dir/iperf3.pid" "$_bin" "$_port" </dev/null >"$_dir/iperf3.log" 2>&1 || return 1
    fi
    _i=0
    until np_server_alive "$_dir" "$_port"; do
        if [ $_i -ge 50 ]; then
            echo "the iperf3 server ($(np_server_supervisor "$_dir")) did not start listening on port $_port" >&2
            return 1
        fi
        sleep 0.1
        _i=$((_i + 1))
    done
    np_server_supervisor "$_dir"
}

np_server_supervisor() {
    read -r _kind _unit <"$1/server" || return 1
    if [ "$_kind" = unit ]; then echo "systemd unit $_unit"; else echo "pid $(cat "$1/iperf3.pid" 2>/dev/null)"; fi
}

# np_server_pid DIR: the server's PID (the unit's main process).
np_server_pid() {
    read -r _kind _unit <"$1/server" || return 1
    if [ "$_kind" = unit ]; then systemctl show -p MainPID --value "$_unit"; else cat "$1/iperf3.pid"; fi
}

# np_server_runs DIR: whether its process (its unit) still runs (it may be killed mid-run): by
# its state in /proc, none once it is gone. A killed server whose adopter (PID 1, a subreaper)
# has not reaped it yet is a zombie, which kill -0 would still find: it runs no more.
np_server_runs() {
    read -r _kind _unit <"$1/server" || return 1
    if [ "$_kind" = unit ]; then
        systemctl is-active --quiet "$_unit"
    else
        _pid=$(cat "$1/iperf3.pid" 2>/dev/null)
        case $_pid in '' | *[!0-9]*) return 1 ;; esac
        case $(sed -n 's/.*) \(.\).*/\1/p' "/proc/$_pid/stat" 2>/dev/null) in '' | Z | X) return 1 ;; esac
    fi
}

# np_server_alive DIR PORT: whether it runs and listens.
np_server_alive() { np_server_runs "$1" && np_listening "$2"; }

# np_server_ready DIR PORT: whether it can take a test: it runs, listens, and no connection of
# the last test is open on PORT. After a test iperf3 closes those, then its listening socket,
# and opens a new one; a client that connects to the old one is reset.
np_server_ready() {
    np_server_alive "$1" "$2" || return 1
    ! ss -Htn state established state close-wait "sport = :$2" | grep -q .
}

# np_server_stopped DIR: "PID T" when a SIGSTOP holds the server (t: a debugger), from the state
# field of /proc/PID/stat after the command name; status 1 otherwise.
np_server_stopped() {
    _pid=$(np_server_pid "$1") || return 1
    case $_pid in '' | *[!0-9]* | 0) return 1 ;; esac
    _state=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$_pid/stat" 2>/dev/null)
    case $_state in T | t) echo "$_pid $_state" ;; *) return 1 ;; esac
}

# --- np-probe ------------------------------------------------------------------------------------

# np_probe_start DIR BINARY IFACE PIDFILE ARGS…: np-probe counting on IFACE in the background
# (BINARY --iface IFACE --pidfile PIDFILE --background ARGS…), its ready message on stdout; undone
# by np_stop_probe (DIR/10-probe.undo, before 30-upload removes the binary).
np_probe_start() {
    _dir=$1 _bin=$2 _if=$3 _pf=$4
    shift 4
    np_undo_record "$_dir" 10-probe "np_stop_probe $(np_q "$_pf") $(np_q "$_bin") $(np_q "$_if")" ||
        return 1
    "$_bin" --iface "$_if" --pidfile "$_pf" --background "$@" </dev/null
}

# np_stop_probe PIDFILE BINARY IFACE: the probe stopped (TERM: it writes its trace and detaches).
# tc filters stay attached when the probe that attached them was killed (they belong to the
# qdisc, not the process): if its np_tc_* filters are still there, `np-probe --cleanup` removes
# them, and the clsact a probe made.
np_stop_probe() {
    np_stop_pid "$1" np-probe
    if tc filter show dev "$3" ingress 2>/dev/null | grep -q np_tc_ ||
        tc filter show dev "$3" egress 2>/dev/null | grep -q np_tc_; then
        if [ -x "$2" ]; then "$2" --iface "$3" --cleanup </dev/null >/dev/null 2>&1 || true; fi
    fi
    return 0
}

# --- the tutorial's steps -------------------------------------------------------------------------
# Run as a script: STEP NODE ARGS…, state in /run/network-performance/NODE/ (0700): the uploaded
# np-probe, its control socket, pidfiles (client.pid and ping.pid: the client's test and the ping
# beside it, written by the test step), the trace, the undo steps.
#
#   preflight NODE IFACE MARKER        checks only; changes nothing (exit 1 naming what failed)
#   configure NODE IFACE ADDR PREFIX [MTU]  the node locked (as np-explain's runs lock it), the
#                                      iface up with the address, each change's undo first
#   carrier NODE IFACE                 up to 5 s for carrier (back to back, one end's carrier needs
#                                      the other end up), then for IPv6 duplicate address detection
#   datapath NODE IFACE PEER           ping -I the peer's data address (ARP or neighbour discovery
#                                      answered: same segment)
#   probe-start NODE IFACE PORT ROLE MAX_S   the uploaded np-probe in the background
#   phase NODE NAME                    a phase announced to the probe (its counters are cut there)
#   probe-stop NODE [--print-trace]    the probe stopped: it writes STATE/trace.json (printed)
#   test NODE IFACE PEER SECONDS COMMAND…  the client's test, its output on stdout; with SECONDS
#                                      above 0 (a test of that length), ping to PEER over IFACE
#                                      beside it, as np-explain's runs do (its echoes, which the
#                                      probes stamp, split the round trip under load by stage)
#   server-start NODE PORT             iperf3 -s supervised (np_server_start, unit np-iperf3)
#   server-stop NODE                   stops exactly that unit / PID
#   teardown NODE IFACE                every undo step, then the lock; safe twice and after kill -9

np_tut_carrier_ports() {
    for _d in /sys/class/net/*; do
        if [ "$(cat "$_d/carrier" 2>/dev/null)" = 1 ] && [ "${_d##*/}" != lo ]; then printf '%s ' "${_d##*/}"; fi
    done
    return 0
}

np_tut_preflight() { # IFACE MARKER
    _bad=
    if [ -e "$2" ]; then echo "$np_node: image marker $2: present"; else
        _bad="$_bad; no $2 (the node booted the PXE stage image: omf tell offh, wait 20 s, omf tell on)"
    fi
    if [ -d "/sys/class/net/$1" ]; then
        _oper=$(cat "/sys/class/net/$1/operstate")
        _carrier=$(cat "/sys/class/net/$1/carrier" 2>/dev/null || echo unknown)
        echo "$np_node: $1: operstate $_oper, carrier $_carrier"
        if [ "$_oper" != down ] && [ "$_carrier" = 0 ]; then
            _bad="$_bad; no carrier on $1 (ports with carrier: $(np_tut_carrier_ports)) - set np_data_iface"
        fi
    else
        _bad="$_bad; no interface $1 (ports: $(ls /sys/class/net | tr '\n' ' ')) - set np_data_iface"
    fi
    for _tool in iperf3 ping ip; do
        command -v "$_tool" >/dev/null 2>&1 || _bad="$_bad; $_tool is not installed"
    done
    [ -z "$_bad" ] || np_die "network-performance: preflight failed on $np_node${_bad}"
    echo "$np_node: preflight ok"
}

np_tut_configure() { # IFACE ADDR PREFIX [MTU]
    # An IPv6 address on a port (or a kernel) without IPv6: the kernel would refuse it.
    case $2 in *:*)
        [ -d /proc/sys/net/ipv6 ] || np_die "network-performance: $np_node's kernel runs without IPv6 (booted with ipv6.disable=1): $1 cannot take $2; use IPv4 data addresses (np_server_ip, np_client_ip)"
        [ "$(cat "/proc/sys/net/ipv6/conf/$1/disable_ipv6" 2>/dev/null)" != 1 ] ||
            np_die "network-performance: IPv6 is disabled on $1 of $np_node (net.ipv6.conf.$1.disable_ipv6 = 1): it cannot take $2; enable it (sysctl -w net.ipv6.conf.$1.disable_ipv6=0) or use IPv4 data addresses"
        ;;
    esac
    np_private_dir "$np_state" || np_die "network-performance: cannot make $np_state on $np_node"
    # Held from configure to teardown, a mode's steps being separate connections.
    if ! grep -q np-lock "/proc/$(cat "$np_state/lock.pid" 2>/dev/null)/cmdline" 2>/dev/null; then
        if _locked=$(np_lock "tutorial mode on $np_node (network-performance configure)"); then
            echo "${_locked#locked }" >"$np_state/lock.pid"
        else
            case $_locked in held\ *) np_die "network-performance: $np_node is held by another np-explain ${_locked#held }; wait for it to end (a killed mode's: its teardown playbook)" ;; esac
            echo "$np_node: flock (util-linux) is not installed: the node is not locked" >&2
        fi
    fi
    # A client test a killed mode left running (ping or iperf3 -c) stops before the rest.
    np_undo_record "$np_state" 05-client "np_stop_pid $(np_q "$np_state/client.pid") 'iperf3|ping'; np_stop_pid $(np_q "$np_state/ping.pid") ping"
    _dad=$(np_iface_up "$np_state" "$1" "$2/$3" "${4:-}") || np_die "network-performance: $1 of $np_node could not be configured"
    [ "$_dad" != dad=failed ] || np_die "network-performance: another host on the segment holds $2 ($np_node's address on $1): IPv6 duplicate address detection failed (dadfailed); find that host, or choose another address"
    echo "$np_node: $1 up, $2/$3"
}

np_tut_carrier() { # IFACE
    _i=0
    while [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" != 1 ]; do
        [ $_i -lt 50 ] || np_die "network-performance: no carrier on $1 of $np_node though both nodes' ports are up (ports with carrier: $(np_tut_carrier_ports)) - wrong port for this row? set np_data_iface"
        sleep 0.1
        _i=$((_i + 1))
    done
    echo "$np_node: $1 has carrier"
    for _a in $(ip -o addr show dev "$1" | awk '$3 == "inet6" && /tentative/ {sub("/.*", "", $4); print $4}'); do
        case $(np_dad_wait "$1" "$_a") in
            dad=failed) np_die "network-performance: another host on the segment holds $_a ($np_node's address on $1): IPv6 duplicate address detection failed (dadfailed); find that host, or choose another address" ;;
            dad=waiting) np_die "network-performance: $_a on $1 of $np_node is still tentative after 10 s (duplicate address detection)" ;;
        esac
    done
}

np_tut_datapath() { # IFACE PEER
    case $2 in *:*) _asked="neighbour discovery" ;; *) _asked=ARP ;; esac
    ping -c 2 -W 1 -I "$1" "$2" >/dev/null 2>&1 ||
        np_die "network-performance: $np_node cannot reach $2 over $1: $_asked unanswered, the two data ports are on different segments (use the shared one: np_data_iface)"
    echo "$np_node: $2 answers over $1 (same segment)"
}

np_tut_probe_start() { # IFACE PORT ROLE MAX_S
    [ -x "$np_state/np-probe" ] || np_die "network-performance: no np-probe in $np_state (upload it first)"
    if np_runs "$(cat "$np_state/probe.pid" 2>/dev/null)" np-probe; then
        np_die "network-performance: a probe already runs on $np_node (pid $(cat "$np_state/probe.pid"))"
    fi
    np_probe_start "$np_state" "$np_state/np-probe" "$1" "$np_state/probe.pid" --port "$2" \
        --role "$3" --node "$np_node" --duration "$4" --control "$np_state/probe.sock" \
        --out "$np_state/trace.json" >"$np_state/probe.ready" 2>"$np_state/probe.log" ||
        np_die "network-performance: np-probe did not start on $np_node: $(cat "$np_state/probe.log")"
    echo "$np_node: probe counting on $1 (pid $(cat "$np_state/probe.pid"))"
}

np_tut_test() { # IFACE PEER SECONDS COMMAND…
    _if=$1 _peer=$2 _s=$3
    shift 3
    case $_s in '' | *[!0-9]*) np_die "network-performance: test: SECONDS must be a whole number, not '$_s'" ;; esac
    # Its PIDs are kept for the teardown in the state dir configure made.
    [ -d "$np_state" ] || np_die "network-performance: $np_node is not configured (no $np_state): run configure first"
    if [ "$_s" -gt 0 ]; then
        # Five echoes a second (the shortest interval ping allows a user who is not root), ended
        # with the test, or by its deadline should this shell be cut; its output is not kept.
        ping -q -i 0.2 -w $((_s + 2)) -I "$_if" "$_peer" >/dev/null 2>&1 &
        echo $! >"$np_state/ping.pid"
    fi
    "$@" &
    echo $! >"$np_state/client.pid"
    _rc=0
    wait $! || _rc=$?
    rm -f "$np_state/client.pid"
    np_stop_pid "$np_state/ping.pid" ping
    return $_rc
}

np_tut_probe_stop() { # [--print-trace]: the trace on stdout, the message on stderr
    _p=$(cat "$np_state/probe.pid" 2>/dev/null) || _p=
    if ! np_runs "$_p" np-probe; then
        echo "$np_node: no probe running"
        return 0
    fi
    "$np_state/np-probe" --control "$np_state/probe.sock" --send stop >/dev/null 2>&1 || true
    np_wait_while 100 np_runs "$_p" np-probe
    np_undo_run "$np_state/10-probe.undo" # TERM, then KILL, if it did not take stop
    if [ "${1:-}" = --print-trace ]; then
        cat "$np_state/trace.json"
        echo "$np_node: probe stopped, trace $np_state/trace.json" >&2
    else
        echo "$np_node: probe stopped, trace $np_state/trace.json"
    fi
}

np_tut_teardown() { # IFACE
    if [ ! -d "$np_state" ]; then
        echo "$np_node: nothing to tear down"
        return 0
    fi
    _lock_pid=$(cat "$np_state/lock.pid" 2>/dev/null) || _lock_pid=
    _out=$(np_undo_all "$np_state")
    case $_out in *failed:*) np_die "network-performance: teardown of $np_node incomplete ($(echo "$_out" | tr '\n' ' ')); run it again" ;; esac
    np_unlock "$_lock_pid"
    rm -rf "$np_state"
    rmdir /run/network-performance 2>/dev/null || true
    echo "$np_node: torn down (probe, server, uploads, $1 as found)"
}

np_tutorial_step() {
    set -eu
    [ $# -ge 2 ] || np_die "network-performance: usage: STEP NODE ARGS…"
    _step=$1 np_node=$2
    shift 2
    case $np_node in *[!A-Za-z0-9._-]* | '' | . | ..) np_die "network-performance: bad node name '$np_node'" ;; esac
    np_state=/run/network-performance/$np_node
    case $_step in
        preflight) [ $# -eq 2 ] || np_die "usage: preflight NODE IFACE MARKER"; np_tut_preflight "$@" ;;
        configure) [ $# -eq 3 ] || [ $# -eq 4 ] || np_die "usage: configure NODE IFACE ADDR PREFIX [MTU]"; np_tut_configure "$@" ;;
        carrier) [ $# -eq 1 ] || np_die "usage: carrier NODE IFACE"; np_tut_carrier "$@" ;;
        datapath) [ $# -eq 2 ] || np_die "usage: datapath NODE IFACE PEER"; np_tut_datapath "$@" ;;
        probe-start) [ $# -eq 4 ] || np_die "usage: probe-start NODE IFACE PORT ROLE MAX_S"; np_tut_probe_start "$@" ;;
        phase)
            [ $# -eq 1 ] || np_die "usage: phase NODE NAME"
            "$np_state/np-probe" --control "$np_state/probe.sock" --send "phase $1" >/dev/null ||
                np_die "network-performance: the probe on $np_node did not take phase $1"
            ;;
        probe-stop) np_tut_probe_stop "$@" ;;
        test) [ $# -ge 4 ] || np_die "usage: test NODE IFACE PEER SECONDS COMMAND…"; np_tut_test "$@" ;;
        server-start)
            [ $# -eq 1 ] || np_die "usage: server-start NODE PORT"
            np_private_dir "$np_state" || np_die "network-performance: cannot make $np_state on $np_node"
            _sup=$(np_server_start "$np_state" "$1" np-iperf3) || np_die "network-performance: iperf3 server did not start on port $1 of $np_node"
            echo "$np_node: iperf3 server supervised ($_sup) on port $1"
            ;;
        server-stop)
            if [ -e "$np_state/20-server.undo" ]; then
                np_undo_run "$np_state/20-server.undo" || np_die "network-performance: the iperf3 server on $np_node did not stop"
                rm -f "$np_state/server"
                echo "$np_node: iperf3 server stopped"
            else
                echo "$np_node: no server started here"
            fi
            ;;
        teardown) [ $# -eq 1 ] || np_die "usage: teardown NODE IFACE"; np_tut_teardown "$@" ;;
        *) np_die "network-performance: unknown step '$_step'" ;;
    esac
}

# As a script with a step to run; defined only, in np-explain's command shell.
if [ $# -gt 0 ]; then np_tutorial_step "$@"; fi
