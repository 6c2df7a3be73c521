#pragma once
// The np-probe command line as one CLI11 app: what main() parses and what --help, the man page
// and the bash completion (src/docgen/) are generated from. Only CLI11 and ProbeOptions, so the
// documentation generator can use it without the probe's static libbpf. CLI11 itself is only
// declared here: what walks the app includes <CLI/CLI.hpp>, main() needs none of it.
#include <memory>
#include <optional>

#include "src/probe/probe.hpp"

namespace CLI {
class App;
}

namespace np::probe {

// Parsing fills `options`.
std::unique_ptr<CLI::App> make_probe_app(ProbeOptions& options);

// Parses the command line into `options`. Returns the exit status when the command line
// itself ends the program (--help, --version: 0, after printing; a usage error: 2, after
// saying why), nothing when the probe is to run.
std::optional<int> parse_probe_command_line(int argc, char** argv, ProbeOptions& options);

}  // namespace np::probe
