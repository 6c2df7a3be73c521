# Sourced by the shell tests that need a testbed: the shell side of testbed_environment.hpp.
# Sets `state` to the testbed the test was given — under ctest the slot CTest allocated
# (CTEST_RESOURCE_GROUP_0_TESTBED "id:K,slots:1" under the fixture's prefix NP_TESTBED_STATES),
# else NP_TESTBED_STATE — and from its testbed.conf the row's names and addresses:
#   row, node_a node_b (server, client), data_net ctl_net wrong_net ("198.18.N" etc.), tmp_root
# (the nodes' TMPDIRs are $tmp_root/NODE).
testbed_slot() {
    state=${NP_TESTBED_STATE:-}
    if [[ -n ${NP_TESTBED_STATES:-} && ${CTEST_RESOURCE_GROUP_0_TESTBED:-} =~ id:([0-9]+) ]]; then
        state=$NP_TESTBED_STATES-${BASH_REMATCH[1]}
    fi
    [[ -n $state ]] || { echo "no testbed: set NP_TESTBED_STATE (or run under ctest)" >&2; return 1; }
    testbed_row "$state"
}

# The row of the testbed that is up in $1, and its names and addresses.
testbed_row() {
    local conf
    conf=$(cat "$1/testbed.conf" 2>/dev/null) || { echo "no testbed is up in $1" >&2; return 1; }
    [[ $conf =~ ^row=([1-9])\ nodes=([2-8])$ ]] || { echo "$1/testbed.conf: '$conf'" >&2; return 1; }
    row=${BASH_REMATCH[1]}
    node_a=node$row-1 node_b=node$row-2
    data_net=198.18.$((2 * row - 2)) wrong_net=198.18.$((2 * row - 1)) ctl_net=198.19.$((row - 1))
    tmp_root=/tmp/np-testbed-row$row
}
