// np-docgen OUTDIR: writes the man pages (np-explain.1, np-probe.1) and bash completions
// (np-explain.bash, np-probe.bash) of both programs from the same CLI11 apps they parse, run
// by the build (src/docgen/CMakeLists.txt). Not installed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "common/version.hpp"
#include "src/cli/commands.hpp"
#include "src/docgen/cli_docs.hpp"
#include "src/docgen/man_prose.hpp"
#include "src/probe/probe_cli.hpp"

namespace {

bool write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) std::fprintf(stderr, "np-docgen: cannot write %s\n", path.c_str());
    return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: np-docgen OUTDIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    np::cli::Runner run;
    const auto explain = np::cli::make_app(run);
    np::probe::ProbeOptions probe_options;
    const auto probe = np::probe::make_probe_app(probe_options);
    using namespace np::docgen;
    const bool ok =
        write(dir + "/np-explain.1", man_page(*explain, np::version(), np_explain_prose())) &&
        write(dir + "/np-probe.1", man_page(*probe, np::version(), np_probe_prose())) &&
        write(dir + "/np-explain.bash", bash_completion(*explain)) &&
        write(dir + "/np-probe.bash", bash_completion(*probe));
    return ok ? 0 : 1;
}
