#pragma once
// The tutorial's parity check: the same experiment run in several modes (manual, ansible,
// jupyter, np-explain) must give the same numbers.
#include <string>
#include <vector>

#include "analysis/explanation/contract.hpp"

namespace np {

struct ParityTolerance {
    double throughput_spread = 1.01;  // max/min of tcp_mbps and of udp_mbps
    double loss_points = 0.5;         // max - min of udp_loss_pct, in percentage points
    double rtt_spread = 1.5;          // RTT is noisy: only a gross difference fails
    double rtt_floor_ms = 0.1;        // ping_rtt_ms this close pass whatever their spread
};

struct ParityCheck {
    std::string figure;  // tcp_mbps, udp_mbps, udp_loss_pct, ping_rtt_ms, nodes
    bool pass = true;
    std::string summary;  // "spread 1.000 (max/min; allowed 1.010)"
};

struct ParityResult {
    bool pass = true;
    std::vector<ParityCheck> checks;
    // When the contracts carry np-explain findings: what one mode found that another did not,
    // e.g. "manual: WRONG_INTERFACE — Traffic did not cross the data NIC".
    std::vector<std::string> differing_evidence;
};

// Contracts in the order to show them. Needs at least one.
ParityResult check_parity(const std::vector<Contract>& contracts, const ParityTolerance& tol = {});

// The tutorial's table, then "PARITY: PASS (…)" or "PARITY: FAIL (…)" and each check.
std::string render_parity(const std::vector<Contract>& contracts, const ParityResult& result);

}  // namespace np
