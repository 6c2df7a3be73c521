#pragma once
// TEST-ONLY: a deterministic point at which a test can break something under a run.
//
// With NP_EXPLAIN_TEST_PAUSE_AT=PHASE and NP_EXPLAIN_TEST_RESUME_FILE=PATH in its environment,
// `np-explain run` stops when it reaches PHASE (one of kTestPausePhases), prints
//   np-explain: test pause at PHASE (pid N)
// on stderr and waits until PATH exists or a signal (SIGINT, SIGTERM, SIGHUP) arrives, then
// goes on. The fault-matrix tests (tests/faults/test_fault_matrix.cpp) inject their fault
// while it waits. Without both variables nothing pauses; nothing else reads them. It is not a
// user feature and is not documented as one: a forgotten pause ends by itself after 10 min.
#include <array>
#include <string_view>

namespace np::experiment {

// Where each pause sits in the run (experiment.cpp), in the run's order:
//   preflight    connected to both nodes, nothing checked or changed on them yet
//   configure    both data ifaces configured (undo scripts written), carrier not checked yet
//   upload       np-probe uploaded and verified on both nodes, not started
//   probe start  both probes attached and counting, the iperf3 server not started
//   ping         server up, the ping phase announced to the probes, ping not started
//   tcp          ping saved, the tcp phase announced, the iperf3 TCP client not started
//   udp          tcp saved, the udp phase announced, the iperf3 UDP client not started
//   collect      all tests done and saved, the server stopped, traces not collected yet
//   teardown     traces collected, nothing undone yet (probes, uploads, ifaces)
inline constexpr std::array<std::string_view, 9> kTestPausePhases = {
    "preflight", "configure", "upload", "probe start", "ping", "tcp", "udp", "collect", "teardown"};

// Pauses here when the environment names `phase` (see above). Call from the run's own thread.
void test_pause_point(std::string_view phase);

}  // namespace np::experiment
