// np-probe: the BPF probe on a node's data iface (what `np-explain run` uploads to each node
// and `np-explain probe` runs locally). Linked fully static so a node needs no libbpf (but
// for a sanitized build's, src/probe/CMakeLists.txt).
#include <cstdio>
#include <exception>

#include "common/errors.hpp"
#include "src/probe/probe.hpp"
#include "src/probe/probe_cli.hpp"

#ifdef NP_SANITIZER_LOG
// A sanitized build's probe (NP_SANITIZE) started on a local testbed node over SSH, without the
// test suite's environment, still logs a report where scripts/test.sh looks for one: the nodes
// are namespaces on this machine and share its files. ASAN_OPTIONS/UBSAN_OPTIONS override.
extern "C" const char* __asan_default_options() {
    return "log_path=" NP_SANITIZER_LOG ":detect_leaks=1";
}
extern "C" const char* __ubsan_default_options() {
    return "log_path=" NP_SANITIZER_LOG ":print_stacktrace=1:halt_on_error=1";
}
#endif

int main(int argc, char** argv) {
    np::probe::ProbeOptions o;
    if (const auto done = np::probe::parse_probe_command_line(argc, argv, o)) return *done;
    try {
        if (!o.send_command.empty()) {
            if (o.control_path.empty()) throw np::InputError("--send", "needs --control PATH");
            return np::probe::send_to_probe(o.control_path, o.send_command);
        }
        return np::probe::run_probe(o);
    } catch (const np::InputError& e) {
        std::fprintf(stderr, "np-probe: %s: %s\n", e.field().c_str(), e.what());
        return 2;
    } catch (const np::EnvironmentError& e) {
        std::fprintf(stderr, "np-probe: %s\n", e.what());
        return 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "np-probe: error: %s\n", e.what());
        return 1;
    }
}
