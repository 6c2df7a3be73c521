#pragma once
// The np-probe command line as one CLI11 app: what main() parses and what --help, the man page
// and the bash completion (src/docgen/) are generated from. Only CLI11 and ProbeOptions, so the
// documentation generator can use it without the probe's static libbpf.
#include <CLI/CLI.hpp>
#include <memory>

#include "src/probe/probe.hpp"

namespace np::probe {

// Parsing fills `options`.
std::unique_ptr<CLI::App> make_probe_app(ProbeOptions& options);

}  // namespace np::probe
