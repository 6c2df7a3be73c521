#pragma once
// The probe's lifecycle, top to bottom: check privileges and kernel -> load -> attach on the
// data iface -> sample and cut phases on stdin commands -> write the trace -> detach.
#include <cstdint>
#include <string>

namespace np::probe {

struct ProbeOptions {
    std::string iface;
    std::string role;       // free text copied into the trace (client | server)
    std::string node;       // defaults to the host name
    double duration_s = 0;  // 0: until `stop`, stdin EOF or a signal
    std::string out_path;   // also write the trace document here
    uint16_t iperf_port = 5201;
    int sample_interval_ms = 100;
};

// Runs until stopped; returns the exit status (0). Throws np::InputError for bad options
// (exit 2) and EnvironmentError for what the host lacks (exit 3).
int run_probe(const ProbeOptions& options);

}  // namespace np::probe
