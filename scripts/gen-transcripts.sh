#!/usr/bin/env bash
# Records REAL terminal transcripts for tests/fixtures/transcripts/: interactive shells with
# prompts, in tmux panes, typing iperf2, iperf3 and ping commands on a client node and running
# their servers on a server node, then saving what each terminal shows (tmux capture-pane) —
# what a user copies from a terminal into a wiki page or a question.
#
# The two nodes are network namespaces npx-tr-a (server, 198.18.20.1) and npx-tr-b (client,
# 198.18.20.2) joined by a veth pair shaped like a 100 Mbit/s Ethernet wire, as in
# gen-fixtures.sh: tbf at 100mbit with `stab overhead 24 linklayer ethernet` and gso_max_segs 1.
# Traffic never leaves the namespaces; addresses are from 198.18.20.0/24 only. The shells run
# bash --norc --noprofile with no history file: no shell start file is read or written.
# Everything created here (tmux server, shells, iperf servers, namespaces, veth) is removed on
# exit, also on failure or Ctrl-C; processes are stopped by their PID.
#
#   sudo bash scripts/gen-transcripts.sh     # writes tests/fixtures/transcripts/
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "gen-transcripts: needs root (network namespaces)" >&2; exit 3; }

NS_S=npx-tr-a            # server node
NS_C=npx-tr-b            # client node
VETH_S=npx-tr-va
VETH_C=npx-tr-vb
ADDR_S=198.18.20.1
ADDR_C=198.18.20.2
RATE=100mbit
OUT=tests/fixtures/transcripts
SOCK=npx-tr-$$           # this run's own tmux server
tmux_pid=""
state=$(mktemp -d /tmp/npx-tr.XXXXXX)

T() { tmux -L "$SOCK" -f /dev/null "$@"; }

cleanup() {
  local rc=$?
  if [ -n "$tmux_pid" ]; then kill -TERM "$tmux_pid" 2>/dev/null || true; fi
  sleep 0.5
  # Anything still running inside our namespaces is ours: the shells and servers we started.
  for ns in "$NS_S" "$NS_C"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  ip netns del "$NS_S" 2>/dev/null || true   # deleting a namespace deletes its veth end
  ip netns del "$NS_C" 2>/dev/null || true
  rm -rf "$state"
  exit "$rc"
}
trap cleanup EXIT INT TERM

for ns in "$NS_S" "$NS_C"; do
  if ip netns list | grep -qw "$ns"; then
    echo "gen-transcripts: namespace $ns exists (a previous run?); remove it first" >&2
    trap - EXIT; exit 3
  fi
done

ip netns add "$NS_S"
ip netns add "$NS_C"
ip link add "$VETH_S" netns "$NS_S" type veth peer name "$VETH_C" netns "$NS_C"
for side in s c; do
  if [ $side = s ]; then ns=$NS_S dev=$VETH_S addr=$ADDR_S; else ns=$NS_C dev=$VETH_C addr=$ADDR_C; fi
  ip netns exec "$ns" ip link set lo up
  ip netns exec "$ns" ip addr add "$addr/24" dev "$dev"
  ip netns exec "$ns" ip link set "$dev" gso_max_segs 1
  ip netns exec "$ns" ip link set "$dev" up
  ip netns exec "$ns" tc qdisc add dev "$dev" root stab overhead 24 linklayer ethernet \
    tbf rate "$RATE" burst 32k latency 50ms
done

# One tmux server for every terminal; wide panes so no output line wraps.
shell() {  # shell NS HOST: the command a pane runs, an interactive shell with a prompt
  echo "ip netns exec $1 env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=xterm HOME=$state" \
       "HISTFILE= PS1='root@$2:~# ' bash --norc --noprofile -i"
}
T start-server \; set-option -g history-limit 100000 \; \
  new-session -d -s client -x 220 -y 50 "$(shell "$NS_C" "$NS_C")"
tmux_pid=$(T display-message -p '#{pid}')
for w in iperf3 iperf2-tcp iperf2-udp; do
  T new-window -d -t client -n "$w" "$(shell "$NS_S" "$NS_S")"
done

# Types a command into a pane and waits until the prompt is back (or TIMEOUT seconds).
prompts() { T capture-pane -p -J -S - -t "$1" | grep -c '^root@npx-tr-.:~#' || true; }
run() {  # run PANE TIMEOUT COMMAND
  local pane=$1 timeout=$2 before; shift 2
  before=$(prompts "$pane")
  T send-keys -t "$pane" -l "$*"
  T send-keys -t "$pane" Enter
  for _ in $(seq $((timeout * 5))); do
    sleep 0.2
    [ "$(prompts "$pane")" -gt "$before" ] && return 0
  done
  echo "gen-transcripts: '$*' did not finish in ${timeout}s" >&2
  return 1
}
start() {  # start PANE COMMAND: a server that keeps running; waits for its banner
  local pane=$1; shift
  T send-keys -t "$pane" -l "$*"
  T send-keys -t "$pane" Enter
  for _ in $(seq 25); do
    sleep 0.2
    T capture-pane -p -t "$pane" | grep -q 'listening' && return 0
  done
  echo "gen-transcripts: '$*' printed no banner" >&2
  return 1
}
save() {  # save PANE FILE: what the terminal shows, without trailing blanks and blank lines
  T capture-pane -p -J -S - -t "$1" | sed -e 's/[[:space:]]*$//' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' \
    >"$OUT/$2"
}

for pane in client:0 client:iperf3 client:iperf2-tcp client:iperf2-udp; do
  for _ in $(seq 25); do [ "$(prompts "$pane")" -gt 0 ] && break; sleep 0.2; done
done
mkdir -p "$OUT"

start client:iperf3 iperf3 -s
start client:iperf2-tcp iperf -s
start client:iperf2-udp iperf -s -u
# The UDP server's terminal before any client reached it: only its banner.
save client:iperf2-udp server-iperf2-udp.banner.txt

C=client:0
# The tutorial's step 3 (seeds/000: ping -I, iperf3 TCP, iperf3 UDP at 1G offered), here.
run $C 30 ping -c 5 -I "$VETH_C" "$ADDR_S"
run $C 30 iperf3 -c "$ADDR_S" -t 10
run $C 30 iperf3 -c "$ADDR_S" -u -b 1G -t 10
# iperf3's JSON and its other modes in the same session.
run $C 30 iperf3 -c "$ADDR_S" -t 5 -P 2 -J
run $C 30 iperf3 -c "$ADDR_S" -t 5 -R
run $C 30 iperf3 -c "$ADDR_S" -u -b 50M -l 1000 -t 5
# iperf2, TCP then UDP, as on the 2019 optical page.
run $C 30 iperf -c "$ADDR_S" -t 10
run $C 30 iperf -c "$ADDR_S" -u -b 90M -t 10
run $C 30 iperf -c "$ADDR_S" -u -b 200M -l 1200 -t 5
save $C client.txt

sleep 1
save client:iperf3 server-iperf3.txt
save client:iperf2-tcp server-iperf2-tcp.txt
save client:iperf2-udp server-iperf2-udp.txt

# The same sessions as people paste them into pages: Markdown fences, a MediaWiki <pre>, a
# Trac/MoinMoin {{{ }}} block, with prose around.
{
  echo "# iperf on the testbed"
  echo
  echo "Server (UDP), before the test:"
  echo
  echo '```console'
  cat "$OUT/server-iperf2-udp.banner.txt"
  echo '```'
  echo
  echo "Client:"
  echo
  echo '```'
  cat "$OUT/client.txt"
  echo '```'
} >"$OUT/session.md"
{
  echo "== Throughput between the nodes =="
  echo "<pre>"
  cat "$OUT/client.txt"
  echo "</pre>"
  echo "The UDP server said:"
  echo "<pre>"
  cat "$OUT/server-iperf2-udp.banner.txt"
  echo "</pre>"
} >"$OUT/session.mediawiki"
{
  echo "= Results ="
  echo "{{{"
  cat "$OUT/client.txt"
  echo "}}}"
} >"$OUT/session.trac"
{
  echo "Written by scripts/gen-transcripts.sh on $(date -u +%Y-%m-%d) with $(iperf3 --version | head -1),"
  echo "$(iperf --version 2>&1 | head -1), $(ping -V | head -1), tmux $(tmux -V | cut -d' ' -f2)."
} >"$OUT/VERSIONS.generated.txt"
echo "gen-transcripts: wrote $OUT"
