#!/usr/bin/env bash
# The main job: the tutorial's full experiment on the local two-node testbed. It builds the
# testbed (network namespaces node1-1 and node1-2, each with its own sshd, a 100 Mbit/s data
# link shaped like a real wire), runs ping, TCP and UDP over SSH with the BPF probe on both
# data NICs, explains the numbers, and removes the testbed again.
# Extra arguments go to `np-explain run --local`, e.g. --profile 1G.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
exec build/src/cli/np-explain run --local "$@"
