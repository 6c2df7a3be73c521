#include "src/experiment/local_testbed.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cstdlib>

#include "analysis/error.hpp"
#include "src/common/errors.hpp"
#include "src/remote/shell.hpp"

namespace np::experiment {
namespace {

// $NP_TESTBED_SCRIPT, else the source tree's scripts/testbed.sh.
std::string testbed_script() {
    if (const char* env = std::getenv("NP_TESTBED_SCRIPT"); env && *env) return env;
    return NP_SOURCE_DIR "/scripts/testbed.sh";
}

int run_script(const std::string& script, const std::string& args) {
    // The script's own messages go to stderr, so stdout stays the explanation (or --json).
    const int status =
        std::system(fmt::format("bash {} {} >&2", remote::shell_quote(script), args).c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

LocalTestbed::LocalTestbed(const std::string& profile)
    : script_(testbed_script()), state_("/run/np-explain-testbed") {
    if (profile != "100M" && profile != "1G" && profile != "unshaped") {
        throw InputError(
            "--profile",
            fmt::format("'{}' is not a testbed profile: 100M, 1G or unshaped", profile));
    }
    const std::string state = "--state " + remote::shell_quote(state_);
    run_script(script_, "down " + state);  // what a killed earlier run may have left
    if (const int rc = run_script(script_, fmt::format("up --profile {} {}", profile, state));
        rc != 0) {
        run_script(script_, "down " + state);
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("the local testbed did not come up ({} up exited {})", script_, rc));
    }
}

LocalTestbed::~LocalTestbed() {
    if (run_script(script_, "down --state " + remote::shell_quote(state_)) != 0) {
        std::fprintf(
            stderr,
            "np-explain: the local testbed was not fully removed; run: bash %s down --state %s\n",
            script_.c_str(), state_.c_str());
    }
}

}  // namespace np::experiment
