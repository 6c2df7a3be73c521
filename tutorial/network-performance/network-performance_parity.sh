#!/usr/bin/env bash
# The parity harness: the same experiment in all three modes, one after another — the manual
# script, the Ansible playbook, the notebook (headless) — then `np-explain parity` over their
# contracts. Prints the table; exit 0 on PASS, 1 on FAIL (or when a mode could not run).
#
#   bash network-performance/network-performance_parity.sh NODE_A NODE_B
#
# Same environment as each mode (NETWORK_PERFORMANCE_SSH_CONFIG, NETWORK_PERFORMANCE_PARAMS,
# NETWORK_PERFORMANCE_RUN_DIR, NP_EXPLAIN); OMF_NODES is set from the arguments. Each mode's
# log is kept in the run dir as parity_<mode>.log.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -eq 2 ]] || { echo "usage: $0 NODE_A NODE_B   (NODE_A runs the iperf3 server)" >&2; exit 2; }
export OMF_NODES="$1,$2"
export NETWORK_PERFORMANCE_RUN_DIR=${NETWORK_PERFORMANCE_RUN_DIR:-/tmp/network-performance-${USER:-$(id -un)}}
np_explain=${NP_EXPLAIN:-$(command -v np-explain || true)}
[[ -n $np_explain ]] || { echo "np-explain not found: put it on PATH or set NP_EXPLAIN" >&2; exit 3; }
export NP_EXPLAIN=$np_explain
# The notebook's kernel and nbclient are Debian's (python3-nbclient, python3-ipykernel).
py=${NETWORK_PERFORMANCE_PYTHON:-/usr/bin/python3}
run_dir=$NETWORK_PERFORMANCE_RUN_DIR
mkdir -p "$run_dir"
# Contracts of an earlier harness run must not stand in for a mode that fails now.
rm -f "$run_dir"/np_contract_{manual,ansible,jupyter}.json

failed=()
mode() { # NAME COMMAND…
    local name=$1 t0=$SECONDS
    shift
    echo "--- $name: $*"
    if "$@" >"$run_dir/parity_$name.log" 2>&1; then
        echo "    ok ($((SECONDS - t0)) s)"
    else
        echo "    FAILED ($((SECONDS - t0)) s); last lines of $run_dir/parity_$name.log:"
        tail -n 15 "$run_dir/parity_$name.log" | sed 's/^/    | /'
        failed+=("$name")
    fi
}

mode manual bash "$here/network-performance_manual.sh" "$1" "$2"
mode ansible ansible-playbook "$here/network-performance.yml"
mode jupyter "$py" -c '
import sys, nbformat
from nbclient import NotebookClient
src, out = sys.argv[1], sys.argv[2]
nb = nbformat.read(src, as_version=4)
import os
try:
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": os.path.dirname(src)}}).execute()
finally:
    nbformat.write(nb, out)
' "$here/network-performance_tutorial.ipynb" "$run_dir/network-performance_tutorial.executed.ipynb"

"$np_explain" parity "$run_dir"
rc=$?
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "modes that failed: ${failed[*]}"
    exit 1
fi
exit $rc
