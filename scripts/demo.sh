#!/usr/bin/env bash
# The main job. For now: the header-overhead model for 1 GbE and 10 GbE, which is what every
# explanation np-explain gives rests on. (When `np-explain run --local` lands, this runs the
# full experiment on the local two-node testbed.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
np=build/src/cli/np-explain

echo "== 1 GbE, iperf3 defaults (1448-byte payloads, TCP timestamps on)"
"$np" model --link 1G
echo
echo "== 10 GbE, iperf2's 1470-byte UDP datagrams"
"$np" model --link 10G --udp-payload 1470
