#!/usr/bin/env bash
# Regenerates the REAL fixtures under tests/fixtures/ with this machine's iperf3 (3.12),
# iperf (2.1.8) and iputils ping, inside two network namespaces joined by a veth pair shaped
# like a 100 Mbit/s Ethernet wire (docs/testbed.md): tbf at 100mbit, `stab overhead
# 24 linklayer ethernet` so each frame pays preamble+SFD, FCS and inter-frame gap, and
# gso_max_segs 1 so the shaper sees wire-sized frames. Traffic never leaves the namespaces;
# addresses are from 198.18.10.0/24. Everything created here is removed on exit, also on
# failure or Ctrl-C; processes are stopped by the PID this script started.
#
#   sudo bash scripts/gen-fixtures.sh            # writes tests/fixtures/{iperf3,iperf2,ping}
#   NPX_DURATION=5 sudo bash scripts/gen-fixtures.sh   # shorter runs
#   sudo bash scripts/gen-fixtures.sh counters    # only iperf3's wrong UDP counts with -O,
#       and datagrams reordered on the way (needs the built tests' fault_drop.bpf.o)
#   sudo bash scripts/gen-fixtures.sh ipv6        # only iperf3 TCP and UDP over IPv6
#   sudo bash scripts/gen-fixtures.sh platforms   # only what names the platform: the other
#       Linux pings, GNU inetutils and busybox (Debian's packages unpacked into a temporary
#       directory, not installed), iputils over IPv6 (2001:2:0:10::/64) and iperf3's text with
#       -V; their commands go to tests/fixtures/PLATFORMS.generated.md
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "gen-fixtures: needs root (network namespaces)" >&2; exit 3; }

NS_A=npx-fix-a          # client node
NS_B=npx-fix-b          # server node
VETH_A=npx-fix-va
VETH_B=npx-fix-vb
ADDR_A=198.18.10.1
ADDR_B=198.18.10.2
UNUSED=198.18.10.99     # on the segment, no host: ARP goes unanswered
ADDR6_A=2001:2:0:10::1
ADDR6_B=2001:2:0:10::2
PART=${1:-all}
case $PART in all | platforms | counters | ipv6) ;; *) echo "gen-fixtures: unknown part '$PART' (all, platforms, counters, ipv6)" >&2; exit 2 ;; esac
RATE=${NPX_RATE:-100mbit}
DUR=${NPX_DURATION:-10}
OUT=tests/fixtures
pids=()
unpacked=

cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  ip netns del "$NS_A" 2>/dev/null || true   # deleting a namespace deletes its veth end
  ip netns del "$NS_B" 2>/dev/null || true
  ip link del "$VETH_A" 2>/dev/null || true
  [ -z "$unpacked" ] || rm -rf "$unpacked"
  exit "$rc"
}
trap cleanup EXIT INT TERM

a() { ip netns exec "$NS_A" "$@"; }
b() { ip netns exec "$NS_B" "$@"; }

ip netns add "$NS_A"
ip netns add "$NS_B"
ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B"
for side in a b; do
  if [ $side = a ]; then dev=$VETH_A addr=$ADDR_A; else dev=$VETH_B addr=$ADDR_B; fi
  $side ip link set lo up
  $side ip addr add "$addr/24" dev "$dev"
  if [ $side = a ]; then addr6=$ADDR6_A; else addr6=$ADDR6_B; fi
  $side ip addr add "$addr6/64" dev "$dev" nodad
  $side ip link set "$dev" gso_max_segs 1
  $side ip link set "$dev" up
  $side tc qdisc add dev "$dev" root stab overhead 24 linklayer ethernet \
    tbf rate "$RATE" burst 32k latency 50ms
done
# Both nodes answer broadcast pings, so `ping -b` gets two replies per request: the real
# source of iputils' "+N duplicates".
a sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0
b sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0

mkdir -p "$OUT/iperf3" "$OUT/iperf2" "$OUT/ping"
record() { echo "| \`$1\` | \`$2\` | $3 |" >>"$commands"; }

start_server() {  # start_server CMD... ; output to $srv_out. `ip netns exec` execs the
  # command, so $! is the server's own PID (not a subshell's).
  ip netns exec "$NS_B" stdbuf -oL "$@" >"$srv_out" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  sleep 1
}
stop_server() {  # SIGTERM: background jobs of a script ignore SIGINT
  kill -TERM "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}

# Counters iperf3 itself gets wrong: UDP with -O on an unshaped veth, where a 16 KiB receive
# buffer overflows. With -O each end subtracts its counts at its own omit instant, and the
# receiver's lost/total stop matching the bytes it counted (without -O they match exactly).
if [ "$PART" = counters ]; then
  a tc qdisc del dev "$VETH_A" root
  b tc qdisc del dev "$VETH_B" root
  commands="$OUT/COUNTERS.generated.md"
  {
    echo "# Commands that produced the fixtures of iperf3's broken counters"
    echo
    echo "Written by \`scripts/gen-fixtures.sh counters\` on $(date -u +%Y-%m-%d) with"
    echo "$(iperf3 --version | head -1), in the namespaces and veth of COMMANDS.generated.md without"
    echo "their tbf (unshaped), so the 16 KiB receive buffer overflows."
    echo
    echo "| file | command (in $NS_A) | server (in $NS_B) |"
    echo "|---|---|---|"
  } >"$commands"
  srv_out=/dev/null
  start_server iperf3 -s -B "$ADDR_B"
  cmd="iperf3 -c $ADDR_B -u -b 3G -w 16K -O 1 -t 3 -J"
  a $cmd >"$OUT/iperf3/udp-omit-counts-wrong.json" || true
  record "iperf3/udp-omit-counts-wrong.json" "$cmd" "\`iperf3 -s -B $ADDR_B\`"
  stop_server
  # Reordering without loss: the fault suite's reorder program (tests/faults/drop.bpf.c) on
  # the client's egress under htb sends one in fifty datagrams past the queue the others wait
  # in. The client sent them, so only the server's output holds the out-of-order count: in
  # text (a server without -J) and in JSON.
  obj=${NPX_REORDER_OBJECT:-build/tests/faults/fault_drop.bpf.o}
  [ -f "$obj" ] || { echo "gen-fixtures: $obj missing: build the tests first (scripts/test.sh, or NPX_REORDER_OBJECT=…)" >&2; exit 3; }
  a tc qdisc add dev "$VETH_A" root handle 1: htb
  a tc class add dev "$VETH_A" parent 1: classid 1:10 htb rate 100mbit burst 1600 cburst 1600 quantum 1514
  a tc class add dev "$VETH_A" parent 1: classid 1:20 htb rate 10gbit quantum 1514
  a tc filter add dev "$VETH_A" parent 1: bpf da obj "$obj" sec classifier/reorder classid 1:1
  reorder="htb on $VETH_A: 1:10 100mbit burst 1600, 1:20 10gbit, bpf classifier/reorder"
  for server in "iperf3 -s -B $ADDR_B" "iperf3 -s -J -B $ADDR_B"; do
    file=iperf3/udp-reordered.json
    [ "$server" = "iperf3 -s -B $ADDR_B" ] || file=iperf3/udp-reordered-server-json.json
    start_server $server
    cmd="iperf3 -c $ADDR_B -u -b 50M -t 3 -J --get-server-output"
    a $cmd >"$OUT/$file"
    record "$file" "$cmd" "\`$server\`; $reorder"
    stop_server
  done
  echo "gen-fixtures: wrote $OUT/iperf3 (see $commands)"
  exit 0
fi

# iperf3 over IPv6 on the 100 Mbit/s wire: what the model's IPv6 ceilings are held to.
if [ "$PART" = ipv6 ]; then
  commands="$OUT/IPV6.generated.md"
  {
    echo "# Commands that produced the fixtures of iperf3 over IPv6"
    echo
    echo "Written by \`scripts/gen-fixtures.sh ipv6\` on $(date -u +%Y-%m-%d) with"
    echo "$(iperf3 --version | head -1), in the namespaces and shaped veth of COMMANDS.generated.md"
    echo "($ADDR6_A → $ADDR6_B)."
    echo
    echo "| file | command (in $NS_A) | server (in $NS_B) |"
    echo "|---|---|---|"
  } >"$commands"
  srv_out=/dev/null
  start_server iperf3 -s -B "$ADDR6_B"
  for c in "tcp-100m-ipv6.json|iperf3 -c $ADDR6_B -t $DUR -J" \
           "udp-100m-ipv6-b200M.json|iperf3 -c $ADDR6_B -u -b 200M -t $DUR -J --get-server-output"; do
    file=iperf3/${c%%|*} cmd=${c#*|}
    a $cmd >"$OUT/$file"
    record "$file" "$cmd" "\`iperf3 -s -B $ADDR6_B\`"
  done
  stop_server
  echo "gen-fixtures: wrote $OUT/iperf3 (see $commands)"
  exit 0
fi

# The pings of other Linux userlands, and iputils over IPv6: what `explain` must read besides
# iputils' IPv4 output. The packages are Debian's, unpacked (dpkg -x), never installed, so the
# machine's own ping stays as it is.
if [ "$PART" = platforms ]; then
  unpacked=$(mktemp -d /tmp/npx-fix-pkgs.XXXXXX)
  (cd "$unpacked" && apt-get download -q inetutils-ping busybox >/dev/null 2>&1) ||
    { echo "gen-fixtures: apt-get download inetutils-ping busybox failed" >&2; exit 3; }
  for deb in "$unpacked"/*.deb; do dpkg -x "$deb" "$unpacked/root"; done
  inet_ping=$unpacked/root/bin/ping
  busybox=$unpacked/root/bin/busybox
  commands="$OUT/PLATFORMS.generated.md"
  {
    echo "# Commands that produced the fixtures of other pings and of iperf3 -V"
    echo
    echo "Written by \`scripts/gen-fixtures.sh platforms\` on $(date -u +%Y-%m-%d) with"
    for deb in "$unpacked"/*.deb; do
      echo "Debian's $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version),"
    done
    echo "unpacked, not installed, and $(ping -V | head -1), in the namespaces and veth of"
    echo "COMMANDS.generated.md ($ADDR_A/$ADDR6_A → $ADDR_B/$ADDR6_B)."
    echo
    echo "| file | command (in $NS_A) |"
    echo "|---|---|"
  } >"$commands"
  record() { echo "| \`$1\` | \`$2\` |" >>"$commands"; }
  ping_case() {  # ping_case FILE LABEL COMMAND...
    local file=$1 label=$2; shift 2
    a "$@" >"$OUT/ping/$file" 2>&1 || true
    record "ping/$file" "$label"
  }
  ping_case inetutils-ok.txt "inetutils ping -c 5 -i 0.2 $ADDR_B" "$inet_ping" -c 5 -i 0.2 "$ADDR_B"
  ping_case inetutils-unreachable.txt "inetutils ping -c 3 -i 0.2 $UNUSED" \
    "$inet_ping" -c 3 -i 0.2 "$UNUSED"
  ping_case busybox-ok.txt "busybox ping -c 5 $ADDR_B" "$busybox" ping -c 5 "$ADDR_B"
  ping_case busybox-ipv6.txt "busybox ping -6 -c 5 $ADDR6_B" "$busybox" ping -6 -c 5 "$ADDR6_B"
  ping_case iputils-ipv6.txt "ping -6 -c 5 -i 0.2 $ADDR6_B" ping -6 -c 5 -i 0.2 "$ADDR6_B"
  ping_case iputils-ipv6-unreachable.txt "ping -6 -c 3 -i 0.2 2001:2:0:10::99" \
    ping -6 -c 3 -i 0.2 2001:2:0:10::99
  srv_out=/dev/null
  start_server iperf3 -s -B "$ADDR_B"
  cmd="iperf3 -c $ADDR_B -t 3 -V"
  a $cmd >"$OUT/iperf3/tcp-100m-verbose.txt" 2>&1 || true
  record "iperf3/tcp-100m-verbose.txt" "$cmd (server: iperf3 -s -B $ADDR_B)"
  stop_server
  echo "gen-fixtures: wrote $OUT/ping and $OUT/iperf3 (see $commands)"
  exit 0
fi

commands="$OUT/COMMANDS.generated.md"
{
  echo "# Commands that produced the generated fixtures"
  echo
  echo "Written by scripts/gen-fixtures.sh on $(date -u +%Y-%m-%d) with $(iperf3 --version | head -1),"
  echo "$(iperf --version 2>&1 | head -1), $(ping -V | head -1)."
  echo "Testbed: namespaces $NS_A ($ADDR_A, client) and $NS_B ($ADDR_B, server), veth"
  echo "$VETH_A/$VETH_B with \`tc qdisc add dev X root stab overhead 24 linklayer ethernet tbf"
  echo "rate $RATE burst 32k latency 50ms\` and \`gso_max_segs 1\` on both ends."
  echo
  echo "| file | command (client side, in $NS_A) | server (in $NS_B) |"
  echo "|---|---|---|"
} >"$commands"


# iperf3: one server for all runs; -J on the client side.
srv_out=/dev/null
start_server iperf3 -s -B "$ADDR_B"
iperf3_case() {  # iperf3_case NAME ARGS...
  local name=$1; shift
  local cmd="iperf3 -c $ADDR_B -t $DUR $* -J"
  a $cmd >"$OUT/iperf3/$name.json" || true   # a failed run still prints its JSON
  record "iperf3/$name.json" "$cmd" "\`iperf3 -s -B $ADDR_B\`"
}
iperf3_case tcp-100m
iperf3_case tcp-100m-P4 -P 4
iperf3_case tcp-100m-reverse -R
iperf3_case tcp-100m-bidir --bidir
iperf3_case udp-100m-b90M -u -b 90M
iperf3_case udp-100m-b200M -u -b 200M
iperf3_case udp-100m-b90M-reverse -u -b 90M -R
stop_server
cmd="iperf3 -c $ADDR_B -p 5299 -t $DUR -J"
a $cmd >"$OUT/iperf3/unreachable-refused.json" || true
record "iperf3/unreachable-refused.json" "$cmd" "none listening on 5299"

# iperf2: a fresh server per run so its own report is captured as well.
iperf2_case() {  # iperf2_case NAME "SERVER ARGS" CLIENT ARGS...
  local name=$1 sargs=$2; shift 2
  srv_out="$OUT/iperf2/$name.server.txt"
  start_server iperf -s -B "$ADDR_B" $sargs
  local cmd="iperf -c $ADDR_B -t $DUR $*"
  a $cmd >"$OUT/iperf2/$name.client.txt" 2>&1 || true
  sleep 1
  stop_server
  record "iperf2/$name.client.txt, .server.txt" "$cmd" "\`iperf -s -B $ADDR_B $sargs\`"
}
iperf2_case tcp-100m ""
iperf2_case tcp-100m-P4 "" -P 4
iperf2_case tcp-100m-enhanced "-e" -e
iperf2_case udp-100m-b90M "-u" -u -b 90M
iperf2_case udp-100m-b200M "-u" -u -b 200M
iperf2_case udp-100m-b90M-enhanced "-u -e" -u -e -b 90M
iperf2_case udp-100m-b90M-P4 "-u" -u -b 90M -P 4

# ping: a reachable peer, an address nobody answers (100 % loss, no rtt line, +errors), and
# the segment's broadcast, which both nodes answer (+duplicates).
cmd="ping -c 10 -i 0.2 $ADDR_B"
a $cmd >"$OUT/ping/iputils-ok.txt" 2>&1 || true
record "ping/iputils-ok.txt" "$cmd" "-"
cmd="ping -c 5 -i 0.2 $UNUSED"
a $cmd >"$OUT/ping/iputils-unreachable.txt" 2>&1 || true
record "ping/iputils-unreachable.txt" "$cmd" "-"
cmd="ping -b -c 5 -i 0.2 198.18.10.255"
a $cmd >"$OUT/ping/iputils-broadcast-duplicates.txt" 2>&1 || true
record "ping/iputils-broadcast-duplicates.txt" "$cmd" "-"
echo "gen-fixtures: wrote $OUT (see $commands)"
