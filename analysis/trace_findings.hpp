#pragma once
// Rules that read probe traces (trace.hpp), with the tools' own figures when there are any,
// and locate loss and confirm retransmits with kernel evidence:
//   LOSS_AT_SENDER_QDISC     the sender's qdisc dropped packets of the measured flow
//   LOSS_ON_WIRE             frames the client sent that the server never received
//   LOSS_AT_RECEIVER_NIC     the receiver's NIC/driver or its backlog dropped
//   LOSS_AT_RECEIVER_SOCKET  the receiving socket's buffer was full (SOCKET_RCVBUFF)
//   RETRANSMITS_CONFIRMED    TCP retransmitted on the data NIC (and how that compares)
//   WRONG_INTERFACE          (error) the data NIC did not carry what iperf moved
#include <string>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/measurement.hpp"
#include "analysis/trace.hpp"

namespace np {

// `traces`: one per node (role "client" / "server" tell sender from receiver; without roles
// the direction of the measured flow decides). For each throughput test the phase named after
// its transport ("tcp", "udp") is used, else all phases together. Without measurements the
// rules run for the "tcp" and "udp" phases the traces have (or all phases as one).
// A finding about a test carries its label as evidence "test", first.
std::vector<Finding> trace_findings(const std::vector<Trace>& traces, const Measurements& measured);

// All phases of a trace summed into one (name "all"), for traces not cut into phases.
PhaseTrace merged_phases(const Trace& t);

}  // namespace np
