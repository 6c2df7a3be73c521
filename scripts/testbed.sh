#!/usr/bin/env bash
# The local testbed (docs/testbed.md): a row of network namespaces nodeR-1 (server), nodeR-2
# (client), … each running its own sshd, so that everything np-explain does over SSH to real
# nodes can run, and be tested, on one machine. Two nodes by default; --nodes 4 gives a row
# for the tutorial's fan-out over pairs.
#
#   scripts/testbed.sh up   [--profile 100M|1G|unshaped] [--state DIR] [--slow-shell SECONDS]
#                           [--nodes N] [--row R|auto]
#   scripts/testbed.sh down [--state DIR]
#   scripts/testbed.sh shell-delay [--state DIR] --slow-shell SECONDS   # of a testbed that is up
#   scripts/testbed.sh node-bpf [--state DIR] --node NODE --bpf off|on   # likewise
#   scripts/testbed.sh node-cpu [--state DIR] --node NODE --cpu-limit CORES|off   # likewise
#   scripts/testbed.sh other-work [--state DIR] --other-work on|off   # likewise
#
# What `up` builds (all addresses from the benchmarking range 198.18.0.0/15), for row R
# (default 1) of N nodes (default 2, at most 8); names below are row 1's, another row's links
# start nptbR- instead of nptb-. `--row auto` takes the lowest row from 2 to 9 that no testbed
# uses, claimed under a lock (/run/np-testbed.lock), so testbeds brought up at the same time
# (the test suite's, one per slot) get rows of their own; row 1 stays free for `run --local`:
#   control  root ns bridge nptb-ctl 198.19.(R-1).254/24; nodeR-i ctl0 198.19.(R-1).i (veths
#            nptb-ci); sshd listens there, port 22
#   data     enp0s25 in every node: the shared segment 198.18.(2R-2).0/24, with --family 6
#            2001:2:0:(2R-2)::/64 (IPv6's benchmarking range) instead (left unaddressed,
#            up, like a node's dark data NIC; `run` configures it). Two nodes: one veth pair
#            between them. More: each node's enp0s25 paired with a port nptb-di of the root
#            ns bridge nptb-data (unaddressed), like a row of nodes on one switch. The profile
#            shapes every node's end.
#   wrong    enp3s0 in each node, each paired with its own root-ns end (nptb-xi): carrier,
#            but separate segments (198.18.(2R-1).0/24 is what params for the wrong-port case
#            would give them), so ARP between them goes unanswered
#   state    DIR (default /run/np-testbed): host keys, the client key, authorized_keys,
#            known_hosts, ssh_config, params.yml (node R-1 server, R-2 client), pairs.yml
#            (more than two nodes: the fan-out's pairs), the image marker, sshd logs and
#            pidfiles, testbed.conf (row and nodes, for `down` and the tests)
#   tmp      each node's own TMPDIR, /tmp/np-testbed-rowR/nodeR-i (set by its sshd): nodes of
#            one machine share /tmp, real nodes do not, so what one node's run leaves there
#            is told apart from another's
#   slow     --slow-shell S: every SSH command and subsystem on the nodes waits S seconds
#            before it runs, as on a node whose root shell start files are slow (a login
#            there runs version-manager init). sshd sets HOME to DIR/slow-home, whose
#            .bashrc sleeps (bash reads ~/.bashrc for commands sshd runs); nothing of the
#            machine's own home or shell start files is touched.
#            `shell-delay --slow-shell S` changes S on a testbed that is up (the next SSH
#            command waits the new time): tests about the slow shell set it, the others 0.
#   bpf      `node-bpf --node NODE --bpf off` restarts NODE's sshd with CAP_BPF, CAP_PERFMON and
#            CAP_SYS_ADMIN out of its bounding set (setpriv), so root on that node cannot load
#            BPF programs, as on a node whose image forbids it; `--bpf on` restarts it whole.
#            Sessions already open keep what they had.
#   cgroups  each sshd starts with the machine's cgroup hierarchies (the unified one and the v1
#            one holding the cpu controller) mounted again in its node's mount namespace, which
#            `ip netns exec` gives a fresh /sys without them: a node sees its processes' cgroups
#            and their CPU limits as a real node does (np-probe reads them).
#   cpu      `node-cpu --node NODE --cpu-limit CORES` puts NODE's tools (iperf3, iperf) into a
#            cgroup of its own (np-testbed-NODE) limited to CORES of CPU time (0.05: 5 % of one
#            core; cgroup v2's cpu.max, else v1's CFS quota), as on a node whose tool runs in a
#            limited slice or container: in the node's mount namespace each tool's binary is a
#            script that joins the cgroup and execs the real one; `--cpu-limit off` undoes that,
#            moves them back and removes the cgroup (`down` too).
#   other    `other-work --other-work on` keeps every CPU of the machine busy with another
#            tenant's batch job: a busy loop pinned to each CPU, at the default priority (nice
#            0, so /proc/stat counts it busy, not niced) but in a cgroup of its own at the least
#            CPU weight (np-testbed-other-R: cgroup v2's cpu.weight 1, v1's cpu.shares 2), so it
#            yields to the nodes' work almost wholly, as a batch slice does: CPUs that read
#            saturated while the test could have had them. `--other-work off` stops the loops by
#            their PIDs and removes the cgroup (`down` too).
# It never reads or writes ~/.ssh: try it with `ssh -F DIR/ssh_config node1-1`.
#
# `down` stops each sshd by the PID in its pidfile (checked against /proc first), then any
# process still inside the namespaces by PID, deletes the namespaces, links and the state
# dir. It is safe to run twice and after a failed `up`.
set -Eeuo pipefail

readonly DATA_IFACE=enp0s25
readonly WRONG_IFACE=enp3s0

die() {
    echo "testbed: $*" >&2
    exit 2
}
usage() {
    echo "usage: scripts/testbed.sh up|down|shell-delay|node-bpf|node-cpu|other-work [--profile 100M|1G|unshaped] [--family 4|6] [--state DIR] [--slow-shell SECONDS] [--nodes N] [--row R|auto] [--node NODE --bpf off|on] [--node NODE --cpu-limit CORES|off] [--other-work on|off]" >&2
    exit 2
}

[[ $# -ge 1 ]] || usage
action=$1
shift
profile=100M
family=4
state=/run/np-testbed
slow_shell=0
nodes=2
row=1
bpf_node=""
bpf=""
cpu_limit=""
other_work=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --profile) [[ $# -ge 2 ]] || usage; profile=$2; shift 2 ;;
        --family) [[ $# -ge 2 ]] || usage; family=$2; shift 2 ;;
        --state) [[ $# -ge 2 ]] || usage; state=$2; shift 2 ;;
        --slow-shell) [[ $# -ge 2 ]] || usage; slow_shell=$2; shift 2 ;;
        --nodes) [[ $# -ge 2 ]] || usage; nodes=$2; shift 2 ;;
        --row) [[ $# -ge 2 ]] || usage; row=$2; shift 2 ;;
        --node) [[ $# -ge 2 ]] || usage; bpf_node=$2; shift 2 ;;
        --bpf) [[ $# -ge 2 ]] || usage; bpf=$2; shift 2 ;;
        --cpu-limit) [[ $# -ge 2 ]] || usage; cpu_limit=$2; shift 2 ;;
        --other-work) [[ $# -ge 2 ]] || usage; other_work=$2; shift 2 ;;
        *) usage ;;
    esac
done
case $profile in 100M | 1G | unshaped) ;; *) die "--profile: '$profile' is not 100M, 1G or unshaped" ;; esac
case $family in 4 | 6) ;; *) die "--family: '$family' is not 4 (IPv4) or 6 (IPv6)" ;; esac
[[ $slow_shell =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--slow-shell: '$slow_shell' is not a number of seconds"
[[ $state == /* ]] || die "--state: '$state' must be an absolute path"
[[ $nodes =~ ^[2-8]$ ]] || die "--nodes: '$nodes' is not a number of nodes from 2 to 8"
[[ $row =~ ^([1-9]|auto)$ ]] || die "--row: '$row' is not a row from 1 to 9, or auto"
# `down`, `shell-delay`, `node-bpf`, `node-cpu` and `other-work` act on the testbed that is up there, whatever their options say.
if [[ $action != up && -r $state/testbed.conf ]]; then
    conf=$(<"$state/testbed.conf")
    [[ $conf =~ ^row=([1-9])\ nodes=([2-8])$ ]] || die "$state/testbed.conf: '$conf' is not 'row=R nodes=N'"
    row=${BASH_REMATCH[1]}
    nodes=${BASH_REMATCH[2]}
elif [[ $action != up && $row == auto ]]; then
    # No testbed.conf (an `up --row auto` killed before it wrote it): the row whose control
    # bridge names this state dir as its owner; none, and there is nothing of it to take down.
    row=""
    for r in 1 2 3 4 5 6 7 8 9; do
        bridge=nptb$r-ctl
        [[ $r == 1 ]] && bridge=nptb-ctl
        if [[ $(cat "/sys/class/net/$bridge/ifalias" 2>/dev/null) == "np-testbed $state" ]]; then
            row=$r
            nodes=$(ip netns list | grep -c -- "^node$r-" || true)
            [[ $nodes -ge 2 ]] || nodes=2
            break
        fi
    done
    if [[ -z $row ]]; then
        [[ $action == down ]] || die "no testbed is up with state $state"
        rm -rf -- "$state"
        exit 0
    fi
fi
# Row R's names and addresses (row 1 keeps the names the tests and docs use).
set_row() {
    local i pfx=nptb
    row=$1
    [[ $row == 1 ]] || pfx=nptb$row
    NODES=() CTL_IPS=() CTL_VETHS=() WRONG_VETHS=() DATA_PORTS=()
    for ((i = 1; i <= nodes; i++)); do
        NODES+=("node$row-$i")
        CTL_IPS+=("198.19.$((row - 1)).$i")
        CTL_VETHS+=("$pfx-c$i")
        WRONG_VETHS+=("$pfx-x$i")
        DATA_PORTS+=("$pfx-d$i")
    done
    CTL_BRIDGE=$pfx-ctl CTL_ROOT_IP=198.19.$((row - 1)).254/24 DATA_BRIDGE=$pfx-data
    DATA_NET=198.18.$((2 * row - 2)) TMP_ROOT=/tmp/np-testbed-row$row
    # Node i's data address and the prefix: 198.18.(2R-2).i/24, or with --family 6 the IPv6
    # benchmarking range's 2001:2:0:(2R-2)::i/64 (quoted: YAML reads it as a string either way).
    if [[ $family == 6 ]]; then
        DATA_PREFIX=64
        data_ip() { echo "\"2001:2:0:$((2 * row - 2))::$1\""; }
    else
        DATA_PREFIX=24
        data_ip() { echo "$DATA_NET.$1"; }
    fi
}
[[ $row == auto ]] || set_row "$row"
[[ $(id -u) -eq 0 ]] || { echo "testbed: needs root (network namespaces, sshd)" >&2; exit 3; }

# The sshd we started for NODE, if its pidfile names a live sshd running our config.
sshd_pid() { pid_of_ours "$state/$1/sshd.pid" "-f $state/$1/sshd_config"; }

# The PID in PIDFILE if that process is alive and its command line holds MARK (a PID reused by
# another process is not ours to stop).
pid_of_ours() {
    local pid
    [[ -r $1 ]] || return 1
    pid=$(<"$1")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$2" || return 1
    echo "$pid"
}

# A zombie has exited already; only its parent can reap it.
is_running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]]
}

# Sends TERM to each PID, waits up to 2 s for all to go, then KILLs what is left.
stop_pids() {
    [[ $# -gt 0 ]] || return 0
    kill -TERM "$@" 2>/dev/null || true
    local i pid alive
    for i in $(seq 20); do
        alive=()
        for pid in "$@"; do is_running "$pid" && alive+=("$pid"); done
        [[ ${#alive[@]} -eq 0 ]] && return 0
        sleep 0.1
    done
    kill -KILL "${alive[@]}" 2>/dev/null || true
}

# What np-explain's runs and the tutorial's modes keep for NODE under /run (undo steps, pidfiles,
# the probe's trace) describes that node's namespace: its processes stopped, its iface and the
# hooks on it deleted with it, its uploads in the node's dir under TMP_ROOT. So it goes with the
# namespace, and a node made anew starts without it, also after a testbed that was never taken
# down (a killed machine, a snapshot): else its next run's check that nothing was left behind
# finds a killed run's steps.
forget_runs() {
    rm -rf -- "/run/np-explain/$1" "/run/network-performance/$1"
}

down() {
    local i node pid pids owner
    owner=$(cat "/sys/class/net/$CTL_BRIDGE/ifalias" 2>/dev/null || true)
    if [[ -n $owner && $owner != "np-testbed $state" && -d ${owner#np-testbed } ]]; then
        die "the testbed that is up was made with --state ${owner#np-testbed }; run down with that"
    fi
    for node in "${NODES[@]}"; do
        if pid=$(sshd_pid "$node"); then stop_pids "$pid"; fi
        # Sessions sshd forked (and anything they started) live on in the namespace: stop
        # them by PID so deleting the namespace really frees it.
        if ip netns list | grep -qx -- "$node\( (id: [0-9]*)\)\?"; then
            mapfile -t pids < <(ip netns pids "$node" 2>/dev/null)
            stop_pids "${pids[@]}"
            # The node lock np-explain keeps per network namespace goes with the namespace.
            rm -f "/run/np-explain/net-$(stat -L -c %i "/run/netns/$node" 2>/dev/null).lock"
            ip netns delete "$node"
        fi
        forget_runs "$node"
        node_cpu_off "$node"
    done
    other_work_off
    # Deleting a namespace deletes its veths, and with them these peers, asynchronously: one
    # that `ip link show` still saw may be gone when it is deleted (down then failed halfway).
    for i in "${!NODES[@]}"; do
        ip link delete "${CTL_VETHS[$i]}" 2>/dev/null || true
        ip link delete "${WRONG_VETHS[$i]}" 2>/dev/null || true
        ip link delete "${DATA_PORTS[$i]}" 2>/dev/null || true
    done
    ip link show "$DATA_BRIDGE" &>/dev/null && ip link delete "$DATA_BRIDGE"
    ip link show "$CTL_BRIDGE" &>/dev/null && ip link delete "$CTL_BRIDGE"
    rm -rf -- "$TMP_ROOT"
    # sshd needs its privilege-separation dir. A testbed that made it marks that machine-wide:
    # other testbeds' sshds may still need it, so the last one down, when no sshd runs any more
    # (a read-only look by name), removes it.
    if [[ -f /run/np-testbed.made-run-sshd ]] && ! pgrep -x sshd >/dev/null; then
        rmdir /run/sshd 2>/dev/null || true
        rm -f /run/np-testbed.made-run-sshd
    fi
    rm -rf -- "$state"
}

# Whether row R is free: no control bridge, no node namespace, no link of its name.
row_free() {
    local pfx=nptb
    [[ $1 == 1 ]] || pfx=nptb$1
    ! ip -o link show | grep -q -- " $pfx-" && ! ip netns list | grep -q -- "^node$1-"
}

# --row auto: the lowest free row from 2 to 9, claimed by making its control bridge while
# holding the lock, so a second `up --row auto` at the same time sees it taken.
claim_row() {
    local r lock
    exec {lock}>/run/np-testbed.lock
    flock "$lock"
    for r in 2 3 4 5 6 7 8 9; do
        if row_free "$r"; then
            set_row "$r"
            ip link add "$CTL_BRIDGE" type bridge
            exec {lock}>&-
            return
        fi
    done
    exec {lock}>&-
    # Which testbed holds each row: its control bridge names the state dir `up` was given.
    local held="" owner
    for r in 2 3 4 5 6 7 8 9; do
        owner=$(cat "/sys/class/net/nptb$r-ctl/ifalias" 2>/dev/null || true)
        held+=$'\n'"  row $r: ${owner:+the testbed of --state ${owner#np-testbed }}"
        [[ -n $owner ]] || held+="links or namespaces without a state dir (ip netns list)"
    done
    die "--row auto: rows 2 to 9 are all in use:$held"$'\n'"a testbed a killed run left is" \
        "taken down with: scripts/testbed.sh down --state DIR"
}

ns() { ip netns exec "$1" "${@:2}"; }

# The shell commands that mount this machine's cgroup hierarchies again where a node's shell
# runs them (see "cgroups" above): the tmpfs holding them, the unified one, and v1's with the
# cpu controller. Each may fail (then the node lacks it, as the machine would).
cgroup_mounts() {
    awk '{
        for (i = 7; i <= NF && $i != "-"; i++) {}
        t = $(i + 1); o = $(i + 3); m = $5
        if (m == "/sys/fs/cgroup" && t == "tmpfs")
            print "mount -t tmpfs -o mode=755 np_cgroups /sys/fs/cgroup || true;"
        else if (m ~ /^\/sys\/fs\/cgroup(\/|$)/ && t == "cgroup2")
            print "mkdir -p " m " && mount -t cgroup2 none " m " || true;"
        else if (m ~ /^\/sys\/fs\/cgroup\// && t == "cgroup" && o ~ /(^|,)cpu(,|$)/) {
            sub(/^r[ow],/, "", o)
            print "mkdir -p " m " && mount -t cgroup -o " o " none " m " || true;"
        }
    }' /proc/self/mountinfo | tr '\n' ' '
}

# NODE's sshd started in the node's namespaces with the cgroups mounted; any further arguments
# go before sshd (setpriv …), after the mounts, which need CAP_SYS_ADMIN.
node_sshd() {
    local dir=$state/$1
    ns "$1" sh -c "{ true; $(cgroup_mounts) } 2>/dev/null; exec \"\$@\"" sh "${@:2}" \
        /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
}

shape() {  # NODE: apply the profile to the node's end of the data veth
    case $profile in
        unshaped) ;;
        100M | 1G)
            local rate burst
            [[ $profile == 100M ]] && { rate=100mbit; burst=16kb; } || { rate=1gbit; burst=128kb; }
            # One frame per skb, so the size table adds the 24 bytes of L1 overhead the MAC
            # header does not carry (preamble+SFD 8, FCS 4, gap 12) to every frame.
            ns "$1" ip link set dev "$DATA_IFACE" gso_max_segs 1
            ns "$1" tc qdisc replace dev "$DATA_IFACE" root handle 1: \
                stab overhead 24 linklayer ethernet tbf rate "$rate" burst "$burst" latency 50ms
            ;;
    esac
}

# The shell start file of the nodes' root home: sleeps --slow-shell seconds (none for 0).
shell_delay() {
    if [[ $slow_shell == 0 ]]; then
        printf '# testbed.sh: the shell starts at once\n' >"$state/slow-home/.bashrc.new"
    else
        printf '# testbed.sh --slow-shell: a slow shell start file\nsleep %s\n' "$slow_shell" \
            >"$state/slow-home/.bashrc.new"
    fi
    mv "$state/slow-home/.bashrc.new" "$state/slow-home/.bashrc"
}

# More than two nodes: the fan-out's pairs (tutorial/network-performance/, docs/tutorial.md).
# Neighbours (1,2), (3,4), … are disjoint and run in parallel; (2,3), (4,5), … share a node
# with them and run after. Each node keeps its own address .i on the data segment.
write_pairs() {
    local i
    {
        echo "# network-performance_pairs.yml for the local testbed (scripts/testbed.sh up --nodes $nodes --row $row)"
        echo "pairs:"
        for ((i = 1; i < nodes; i += 2)); do
            echo "  - {server: node$row-$i, client: node$row-$((i + 1)), server_ip: $(data_ip $i), client_ip: $(data_ip $((i + 1)))}"
        done
        for ((i = 2; i < nodes; i += 2)); do
            echo "  - {server: node$row-$i, client: node$row-$((i + 1)), server_ip: $(data_ip $i), client_ip: $(data_ip $((i + 1)))}"
        done
    } >"$state/pairs.yml"
}

up() {
    local i node dir t0=$SECONDS
    [[ -e $state ]] && die "$state exists: the testbed is up or was left behind (scripts/testbed.sh down --state $state)"
    # The nodes' sshds read their keys from the state dir, and with StrictModes (OpenSSH's
    # default) refuse keys under a dir another user could write: every dir above it must be
    # root's and writable by no one else, else no login would work.
    dir=$(dirname -- "$(realpath -m -- "$state")")
    while :; do
        if [[ -e $dir ]]; then
            local owner mode
            read -r owner mode < <(stat -L -c '%u %a' -- "$dir")
            if [[ $owner != 0 ]] || (((8#$mode & 8#022) != 0)); then
                die "--state $state: $dir is owned by uid $owner with mode $mode: sshd (StrictModes) refuses keys below a dir that is not root's or that others can write; choose a state dir under /run or /root"
            fi
        fi
        [[ $dir == / ]] && break
        dir=$(dirname -- "$dir")
    done
    if [[ $row == auto ]]; then
        claim_row
    else
        for node in "${NODES[@]}"; do
            ip netns list | grep -q -- "^$node\b" && die "namespace $node exists: the testbed is up (scripts/testbed.sh down first)"
        done
        ip link add "$CTL_BRIDGE" type bridge
    fi
    trap 'echo "testbed: up failed; removing what was made" >&2; down' ERR
    mkdir -p -m 0700 "$state"
    if mkdir -m 0755 /run/sshd 2>/dev/null; then touch /run/np-testbed.made-run-sshd; fi

    # Whose testbed this is: `down --state OTHER` must not tear down this one.
    ip link set "$CTL_BRIDGE" alias "np-testbed $state"
    ip addr add "$CTL_ROOT_IP" dev "$CTL_BRIDGE"
    ip link set "$CTL_BRIDGE" up
    echo "row=$row nodes=$nodes" >"$state/testbed.conf"
    for node in "${NODES[@]}"; do
        forget_runs "$node"
        ip netns add "$node"
    done
    if [[ $nodes == 2 ]]; then
        ip link add "$DATA_IFACE" netns "${NODES[0]}" type veth peer name "$DATA_IFACE" netns "${NODES[1]}"
    else
        ip link add "$DATA_BRIDGE" type bridge
        ip link set "$DATA_BRIDGE" addrgenmode none
        ip link set "$DATA_BRIDGE" up
        for i in "${!NODES[@]}"; do
            ip link add "${DATA_PORTS[$i]}" type veth peer name "$DATA_IFACE" netns "${NODES[$i]}"
            ip link set "${DATA_PORTS[$i]}" addrgenmode none
            ip link set "${DATA_PORTS[$i]}" master "$DATA_BRIDGE" up
        done
    fi
    for i in "${!NODES[@]}"; do
        node=${NODES[$i]}
        ns "$node" ip link set lo up
        ip link add "${CTL_VETHS[$i]}" type veth peer name ctl0 netns "$node"
        ip link set "${CTL_VETHS[$i]}" master "$CTL_BRIDGE" up
        ns "$node" ip addr add "${CTL_IPS[$i]}/24" dev ctl0
        ns "$node" ip link set ctl0 up
        ip link add "${WRONG_VETHS[$i]}" type veth peer name "$WRONG_IFACE" netns "$node"
        ip link set "${WRONG_VETHS[$i]}" addrgenmode none
        ip link set "${WRONG_VETHS[$i]}" up
        ns "$node" ip link set "$WRONG_IFACE" up
        ns "$node" ip link set "$DATA_IFACE" up
        shape "$node"
    done

    # The nodes' root home: its .bashrc is the shell start file every SSH command reads.
    mkdir -m 0700 "$state/slow-home"
    shell_delay
    mkdir -m 0700 "$TMP_ROOT"
    ssh-keygen -q -t ed25519 -N '' -C np-testbed-client -f "$state/id_ed25519"
    cp "$state/id_ed25519.pub" "$state/authorized_keys"
    : >"$state/known_hosts"
    echo "np-testbed (stands in for /.omf-image-name)" >"$state/omf-image-name"
    for i in "${!NODES[@]}"; do
        node=${NODES[$i]}
        dir=$state/$node
        mkdir -m 0700 "$dir" "$TMP_ROOT/$node"
        ssh-keygen -q -t ed25519 -N '' -C "$node" -f "$dir/ssh_host_ed25519_key"
        echo "$node,${CTL_IPS[$i]} $(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")" >>"$state/known_hosts"
        cat >"$dir/sshd_config" <<EOF
# sshd of testbed node $node (scripts/testbed.sh); nothing here reads ~/.ssh
ListenAddress ${CTL_IPS[$i]}:22
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $state/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PermitUserEnvironment no
PrintMotd no
PrintLastLog no
MaxSessions 32
MaxStartups 32:30:64
Subsystem sftp /usr/lib/openssh/sftp-server
SetEnv HOME=$state/slow-home TMPDIR=$TMP_ROOT/$node
EOF
        node_sshd "$node"
        cat >>"$state/ssh_config" <<EOF
Host $node
    HostName ${CTL_IPS[$i]}
    User root
    Port 22
    IdentityFile $state/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $state/known_hosts
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 5

EOF
    done
    local link_rate=""
    [[ $profile == unshaped ]] || link_rate="np_link_rate: $profile"
    cat >"$state/params.yml" <<EOF
# network-performance_params.yml for the local testbed (scripts/testbed.sh up --profile $profile)
np_data_iface: $DATA_IFACE
np_server_ip: $(data_ip 1)
np_client_ip: $(data_ip 2)
np_prefix_len: $DATA_PREFIX
np_port: 5201
np_ping_count: 5
np_tcp_duration_s: 10
np_udp_duration_s: 10
np_udp_bandwidth: 1G
np_image_marker: $state/omf-image-name
$link_rate
EOF
    [[ $nodes == 2 ]] || write_pairs
    # sshd writes its pidfile once it listens.
    local listening
    for i in $(seq 50); do
        listening=0
        for node in "${NODES[@]}"; do sshd_pid "$node" >/dev/null && listening=$((listening + 1)); done
        [[ $listening == "$nodes" ]] && break
        sleep 0.1
    done
    for node in "${NODES[@]}"; do
        sshd_pid "$node" >/dev/null || { cat "$state/$node/sshd.log" >&2; false; }
    done
    trap - ERR
    echo "testbed up ($profile, shell start +${slow_shell} s, $((SECONDS - t0)) s): nodes ${NODES[*]} (${NODES[0]} server, ${NODES[1]} client); state $state"
    echo "try: ssh -F $state/ssh_config ${NODES[0]} ip -br addr"
}

# node-bpf: NODE's sshd restarted with (on) or without (off) the capabilities BPF needs.
node_bpf() {
    [[ $bpf == on || $bpf == off ]] || die "--bpf: '$bpf' is not on or off"
    local node="" n pid dir
    for n in "${NODES[@]}"; do [[ $n == "$bpf_node" ]] && node=$n; done
    [[ -n $node ]] || die "--node: '$bpf_node' is not a node of this testbed (${NODES[*]})"
    dir=$state/$node
    pid=$(sshd_pid "$node") || die "$node: its sshd is not running"
    # Only the listener: the sessions it forked keep running.
    stop_pids "$pid"
    rm -f "$dir/sshd.pid"
    if [[ $bpf == off ]]; then
        node_sshd "$node" setpriv --bounding-set=-bpf,-perfmon,-sys_admin
    else
        node_sshd "$node"
    fi
    for n in $(seq 50); do
        sshd_pid "$node" >/dev/null && return 0
        sleep 0.1
    done
    cat "$dir/sshd.log" >&2
    die "$node: sshd did not come back"
}

# The cgroup hierarchy that holds the cpu controller here: "v2 DIR" or "v1 DIR"; nothing when none.
cpu_hierarchy() {
    if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        echo "v2 /sys/fs/cgroup"
    elif [[ -f /sys/fs/cgroup/cpu/cgroup.procs ]]; then
        echo "v1 /sys/fs/cgroup/cpu"
    fi
}

# The tools node-cpu limits, where the nodes' shells find them.
cpu_tools=(/usr/bin/iperf3 /usr/bin/iperf)

# NODE's tools back to their own binaries (the wrappers node-cpu mounted over them in the
# node's mount namespace, which is its sshd's; gone anyway once that sshd is).
node_tools_unwrapped() {
    local node=$1 sshd tool
    sshd=$(sshd_pid "$node") || return 0
    for tool in "${cpu_tools[@]}"; do
        [[ -e $state/$node/real/${tool##*/} ]] || continue
        nsenter -t "$sshd" -m sh -c 'umount "$1"; umount "$2"' sh "$tool" \
            "$state/$node/real/${tool##*/}" 2>/dev/null || true
    done
    rm -rf "$state/$node/real" "$state/$node/wrap"
}

# NODE's tools out of their cgroup (np-testbed-NODE), back where the node's sshd is, unwrapped,
# and the cgroup gone.
node_cpu_off() {
    local node=$1 version base cg orig p
    node_tools_unwrapped "$node"
    read -r version base <<<"$(cpu_hierarchy)"
    [[ -n ${base:-} ]] || return 0
    cg=$base/np-testbed-$node
    [[ -d $cg ]] || return 0
    orig=$(cat "$state/$node/cgroup.orig" 2>/dev/null || echo /)
    [[ -f $base$orig/cgroup.procs ]] || orig=/
    [[ $orig == / ]] && orig=""
    while read -r p; do echo "$p" >"$base$orig/cgroup.procs" 2>/dev/null || true; done <"$cg/cgroup.procs"
    rmdir "$cg" 2>/dev/null || true
    rm -f "$state/$node/cgroup.orig"
}

# node-cpu: NODE's tools (iperf3, iperf) limited to --cpu-limit cores, or back (off), and
# nothing else of the node: its sshd, shells and probe run as before. In the node's mount
# namespace each tool's binary is replaced by a script that puts its own PID into the cgroup and
# then execs the real binary (mounted under the state dir, so the process is still named after
# the tool): a tool is in the cgroup from its first instruction, however soon it ends. Tools
# already running are moved once.
node_cpu() {
    local node="" n sshd version base cg quota period=100000 tool name d comm
    for n in "${NODES[@]}"; do [[ $n == "$bpf_node" ]] && node=$n; done
    [[ -n $node ]] || die "--node: '$bpf_node' is not a node of this testbed (${NODES[*]})"
    if [[ $cpu_limit == off ]]; then
        node_cpu_off "$node"
        return 0
    fi
    [[ $cpu_limit =~ ^[0-9]*\.?[0-9]+$ ]] || die "--cpu-limit: '$cpu_limit' is not a number of cores or off"
    quota=$(awk -v c="$cpu_limit" -v p=$period 'BEGIN { printf "%d", c * p }')
    ((quota >= 1000)) || die "--cpu-limit: '$cpu_limit' is below the kernel's least, 0.01 of a core"
    read -r version base <<<"$(cpu_hierarchy)"
    [[ -n ${base:-} ]] || die "this machine has no cgroup hierarchy with the cpu controller"
    sshd=$(sshd_pid "$node") || die "$node: its sshd is not running"
    cg=$base/np-testbed-$node
    if [[ ! -d $cg ]]; then
        if [[ $version == v2 ]]; then
            sed -n 's/^0:://p' "/proc/$sshd/cgroup" >"$state/$node/cgroup.orig"
            grep -qw cpu "$base/cgroup.subtree_control" || echo +cpu >"$base/cgroup.subtree_control"
        else
            sed -n 's/^[0-9]*:\([^:]*,\)\?cpu\(,[^:]*\)\?://p' "/proc/$sshd/cgroup" >"$state/$node/cgroup.orig"
        fi
        mkdir "$cg"
    fi
    if [[ $version == v2 ]]; then
        echo "$quota $period" >"$cg/cpu.max"
    else
        echo $period >"$cg/cpu.cfs_period_us"
        echo "$quota" >"$cg/cpu.cfs_quota_us"
    fi
    if [[ ! -d $state/$node/real ]]; then
        mkdir -p "$state/$node/real" "$state/$node/wrap"
        for tool in "${cpu_tools[@]}"; do
            [[ -x $tool ]] || continue
            name=${tool##*/}
            : >"$state/$node/real/$name"
            printf '#!/bin/sh\n# scripts/testbed.sh node-cpu: %s in cgroup np-testbed-%s\necho $$ >%s/cgroup.procs\nexec %s "$@"\n' \
                "$name" "$node" "$cg" "$state/$node/real/$name" >"$state/$node/wrap/$name"
            chmod 755 "$state/$node/wrap/$name"
            nsenter -t "$sshd" -m sh -c 'mount --bind "$1" "$2" && mount --bind "$3" "$1"' sh \
                "$tool" "$state/$node/real/$name" "$state/$node/wrap/$name" ||
                die "$node: could not put the cgroup's wrapper over $tool in its mount namespace"
        done
    fi
    for d in /proc/[0-9]*; do
        [[ $d/ns/net -ef /run/netns/$node ]] || continue
        read -r comm <"$d/comm" 2>/dev/null || continue
        [[ $comm == iperf3 || $comm == iperf ]] && echo "${d#/proc/}" >"$cg/cgroup.procs" 2>/dev/null
    done
    return 0
}

# The other work's loops stopped by the PIDs other-work wrote, and its cgroup removed.
other_work_off() {
    local version base pids=()
    if [[ -f $state/other-work.pids ]]; then
        mapfile -t pids <"$state/other-work.pids"
        stop_pids "${pids[@]}"
        rm -f "$state/other-work.pids"
    fi
    read -r version base <<<"$(cpu_hierarchy)"
    [[ -n ${base:-} && -d $base/np-testbed-other-$row ]] && rmdir "$base/np-testbed-other-$row"
    return 0
}

# other-work on: a busy loop pinned to each CPU /proc/stat counts, in cgroup
# np-testbed-other-ROW at the least CPU weight (see "other" above); off: other_work_off.
other_work_on() {
    local version base cg cpu
    read -r version base <<<"$(cpu_hierarchy)"
    [[ -n ${base:-} ]] || die "this machine has no cgroup hierarchy with the cpu controller"
    [[ -f $state/other-work.pids ]] && return 0
    cg=$base/np-testbed-other-$row
    if [[ $version == v2 ]]; then
        grep -qw cpu "$base/cgroup.subtree_control" || echo +cpu >"$base/cgroup.subtree_control"
        mkdir -p "$cg"
        echo 1 >"$cg/cpu.weight"
    else
        mkdir -p "$cg"
        echo 2 >"$cg/cpu.shares"
    fi
    for cpu in $(sed -n 's/^cpu\([0-9][0-9]*\) .*/\1/p' /proc/stat); do
        # Into the cgroup before the loop starts: the shell's PID is the loop's.
        taskset -c "$cpu" sh -c 'echo $$ >"$1/cgroup.procs" && exec sh -c "while :; do :; done"' \
            sh "$cg" </dev/null >/dev/null 2>&1 &
        echo $! >>"$state/other-work.pids"
    done
}

case $action in
    up) up ;;
    down) down ;;
    shell-delay)
        [[ -d $state/slow-home ]] || die "no testbed is up with state $state"
        shell_delay
        ;;
    node-bpf)
        [[ -d $state/slow-home ]] || die "no testbed is up with state $state"
        node_bpf
        ;;
    node-cpu)
        [[ -d $state/slow-home ]] || die "no testbed is up with state $state"
        node_cpu
        ;;
    other-work)
        [[ -d $state/slow-home ]] || die "no testbed is up with state $state"
        case $other_work in
            on) other_work_on ;;
            off) other_work_off ;;
            *) die "--other-work: '$other_work' is not on or off" ;;
        esac
        ;;
    *) usage ;;
esac
