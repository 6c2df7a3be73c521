#!/usr/bin/env bash
# The testbed slots of a test run (tests/testbed/CMakeLists.txt): N two-node testbeds, slot K's
# state in PREFIX-K, each on a row of its own (scripts/testbed.sh up --row auto), so the tests
# CTest gives different slots run at the same time.
#   slots.sh up PREFIX N SLOW_SHELL   # first takes down what a killed earlier run left in PREFIX-*
#   slots.sh down PREFIX
# `up` also empties PREFIX.tables, where the fault tests of the run save their tables' rows
# (tests/faults/tables.hpp).
# Only this run's own state dirs (PREFIX-*) are touched: another build dir's slots, a user's
# testbed and `run --local`'s stay up.
set -euo pipefail
action=$1
prefix=$2
testbed=$(dirname "$0")/../../scripts/testbed.sh

down() {
    local state status=0
    for state in "$prefix"-*; do
        [[ -e $state ]] || continue
        bash "$testbed" down --row auto --state "$state" || status=1
    done
    return $status
}

case $action in
    up)
        slots=$3
        slow_shell=$4
        down
        rm -rf -- "$prefix.tables"
        for ((k = 0; k < slots; k++)); do
            bash "$testbed" up --row auto --state "$prefix-$k" --slow-shell "$slow_shell"
        done
        ;;
    down) down ;;
    *)
        echo "usage: slots.sh up PREFIX N SLOW_SHELL | down PREFIX" >&2
        exit 2
        ;;
esac
