#!/usr/bin/env bash
# The local two-node testbed (docs/testbed.md): network namespaces node1-1
# (server) and node1-2 (client), each running its own sshd, so that everything np-explain
# does over SSH to real nodes can run, and be tested, on one machine.
#
#   scripts/testbed.sh up   [--profile 100M|1G|unshaped] [--state DIR] [--slow-shell SECONDS]
#   scripts/testbed.sh down [--state DIR]
#   scripts/testbed.sh shell-delay [--state DIR] --slow-shell SECONDS   # of a testbed that is up
#
# What `up` builds (all addresses from the benchmarking range 198.18.0.0/15):
#   control  root ns bridge nptb-ctl 198.19.0.254/24; node1-1 ctl0 198.19.0.1, node1-2 ctl0
#            198.19.0.2 (veths nptb-c1/nptb-c2); sshd listens there, port 22
#   data     enp0s25 <-> enp0s25, one veth pair between the nodes: the shared segment
#            198.18.0.0/24 (left unaddressed, up, like a node's dark data NIC; `run`
#            configures it). The profile shapes both ends.
#   wrong    enp3s0 in each node, each paired with its own root-ns end (nptb-x1/nptb-x2):
#            carrier, but two separate segments (198.18.1.0/24 is what params for the
#            wrong-port case would give them), so ARP between them goes unanswered
#   state    DIR (default /run/np-testbed): host keys, the client key, authorized_keys,
#            known_hosts, ssh_config, params.yml, the image marker, sshd logs and pidfiles
#   slow     --slow-shell S: every SSH command and subsystem on the nodes waits S seconds
#            before it runs, as on a node whose root shell start files are slow (a login
#            there runs version-manager init). sshd sets HOME to DIR/slow-home, whose
#            .bashrc sleeps (bash reads ~/.bashrc for commands sshd runs); nothing of the
#            machine's own home or shell start files is touched.
#            `shell-delay --slow-shell S` changes S on a testbed that is up (the next SSH
#            command waits the new time): tests about the slow shell set it, the others 0.
# It never reads or writes ~/.ssh: try it with `ssh -F DIR/ssh_config node1-1`.
#
# `down` stops each sshd by the PID in its pidfile (checked against /proc first), then any
# process still inside the two namespaces by PID, deletes the namespaces, links and the state
# dir. It is safe to run twice and after a failed `up`.
set -Eeuo pipefail

readonly NODES=(node1-1 node1-2)
readonly CTL_IPS=(198.19.0.1 198.19.0.2)
readonly CTL_BRIDGE=nptb-ctl
readonly CTL_ROOT_IP=198.19.0.254/24
readonly CTL_VETHS=(nptb-c1 nptb-c2)
readonly WRONG_VETHS=(nptb-x1 nptb-x2)
readonly DATA_IFACE=enp0s25
readonly WRONG_IFACE=enp3s0

die() {
    echo "testbed: $*" >&2
    exit 2
}
usage() {
    echo "usage: scripts/testbed.sh up|down|shell-delay [--profile 100M|1G|unshaped] [--state DIR] [--slow-shell SECONDS]" >&2
    exit 2
}

[[ $# -ge 1 ]] || usage
action=$1
shift
profile=100M
state=/run/np-testbed
slow_shell=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --profile) [[ $# -ge 2 ]] || usage; profile=$2; shift 2 ;;
        --state) [[ $# -ge 2 ]] || usage; state=$2; shift 2 ;;
        --slow-shell) [[ $# -ge 2 ]] || usage; slow_shell=$2; shift 2 ;;
        *) usage ;;
    esac
done
case $profile in 100M | 1G | unshaped) ;; *) die "--profile: '$profile' is not 100M, 1G or unshaped" ;; esac
[[ $slow_shell =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--slow-shell: '$slow_shell' is not a number of seconds"
[[ $state == /* ]] || die "--state: '$state' must be an absolute path"
[[ $(id -u) -eq 0 ]] || { echo "testbed: needs root (network namespaces, sshd)" >&2; exit 3; }

# The sshd we started for NODE, if its pidfile names a live sshd running our config.
sshd_pid() {
    local pidfile=$state/$1/sshd.pid pid
    [[ -r $pidfile ]] || return 1
    pid=$(<"$pidfile")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-f $state/$1/sshd_config" || return 1
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
            ip netns delete "$node"
        fi
    done
    # Deleting a namespace deletes its veths, and with them these peers, asynchronously: one
    # that `ip link show` still saw may be gone when it is deleted (down then failed halfway).
    for i in 0 1; do
        ip link delete "${CTL_VETHS[$i]}" 2>/dev/null || true
        ip link delete "${WRONG_VETHS[$i]}" 2>/dev/null || true
    done
    ip link show "$CTL_BRIDGE" &>/dev/null && ip link delete "$CTL_BRIDGE"
    # sshd needs its privilege-separation dir; remove it only if we created it.
    if [[ -f $state/created-run-sshd ]]; then rmdir /run/sshd 2>/dev/null || true; fi
    rm -rf -- "$state"
}

ns() { ip netns exec "$1" "${@:2}"; }

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

up() {
    local i node dir t0=$SECONDS
    for node in "${NODES[@]}"; do
        ip netns list | grep -q -- "^$node\b" && die "namespace $node exists: the testbed is up (scripts/testbed.sh down first)"
    done
    [[ -e $state ]] && die "$state exists: the testbed is up or was left behind (scripts/testbed.sh down --state $state)"
    trap 'echo "testbed: up failed; removing what was made" >&2; down' ERR
    mkdir -p -m 0700 "$state"
    if [[ ! -d /run/sshd ]]; then mkdir -m 0755 /run/sshd && touch "$state/created-run-sshd"; fi

    ip link add "$CTL_BRIDGE" type bridge
    # Whose testbed this is: `down --state OTHER` must not tear down this one.
    ip link set "$CTL_BRIDGE" alias "np-testbed $state"
    ip addr add "$CTL_ROOT_IP" dev "$CTL_BRIDGE"
    ip link set "$CTL_BRIDGE" up
    for node in "${NODES[@]}"; do ip netns add "$node"; done
    ip link add "$DATA_IFACE" netns node1-1 type veth peer name "$DATA_IFACE" netns node1-2
    for i in 0 1; do
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
    local slow_env="SetEnv HOME=$state/slow-home"
    ssh-keygen -q -t ed25519 -N '' -C np-testbed-client -f "$state/id_ed25519"
    cp "$state/id_ed25519.pub" "$state/authorized_keys"
    : >"$state/known_hosts"
    echo "np-testbed (stands in for /.omf-image-name)" >"$state/omf-image-name"
    for i in 0 1; do
        node=${NODES[$i]}
        dir=$state/$node
        mkdir -m 0700 "$dir"
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
$slow_env
EOF
        ns "$node" /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
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
np_server_ip: 198.18.0.1
np_client_ip: 198.18.0.2
np_prefix_len: 24
np_port: 5201
np_ping_count: 5
np_tcp_duration_s: 10
np_udp_duration_s: 10
np_udp_bandwidth: 1G
np_image_marker: $state/omf-image-name
$link_rate
EOF
    # sshd writes its pidfile once it listens.
    for i in $(seq 50); do
        sshd_pid node1-1 >/dev/null && sshd_pid node1-2 >/dev/null && break
        sleep 0.1
    done
    for node in "${NODES[@]}"; do
        sshd_pid "$node" >/dev/null || { cat "$state/$node/sshd.log" >&2; false; }
    done
    trap - ERR
    echo "testbed up ($profile, shell start +${slow_shell} s, $((SECONDS - t0)) s): nodes node1-1 (server) node1-2 (client); state $state"
    echo "try: ssh -F $state/ssh_config node1-1 ip -br addr"
}

case $action in
    up) up ;;
    down) down ;;
    shell-delay)
        [[ -d $state/slow-home ]] || die "no testbed is up with state $state"
        shell_delay
        ;;
    *) usage ;;
esac
