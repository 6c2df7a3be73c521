// `np-explain node-steps`: the node side as the tutorial's modes get it — the very file np-explain
// defines in its command shells, valid sh that does nothing when only sourced, whose steps refuse
// what they cannot do naming it. (What the steps change is tested for real by the run and
// tutorial tests on the testbed.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

// The printed script in a file of its own, removed with the fixture.
class CliNodeSteps : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto r = np_explain({"node-steps"});
        ASSERT_EQ(r.exit_status, 0) << r.err;
        printed_ = r.out;
        char path[] = "/tmp/np-node-steps-XXXXXX";
        const int fd = mkstemp(path);
        ASSERT_GE(fd, 0);
        close(fd);
        path_ = path;
        std::ofstream(path_) << printed_;
    }
    void TearDown() override {
        if (!path_.empty()) unlink(path_.c_str());
    }
    Shell step(const std::string& args) {
        return sh("sh -s -- " + args + " < " + shell_quote(path_));
    }
    std::string printed_;
    std::string path_;
};

TEST_F(CliNodeSteps, PrintsTheFileRunsUseAsValidSh) {
    EXPECT_EQ(printed_, read_file(NP_SOURCE_DIR "/src/experiment/node_steps.sh"));
    const auto syntax = sh("sh -n " + shell_quote(path_));
    EXPECT_EQ(syntax.status, 0) << syntax.out;
}

TEST_F(CliNodeSteps, SourcedWithoutAStepItOnlyDefinesFunctions) {
    // As np-explain's command shell reads it: a shell without positional parameters.
    const auto r =
        sh("sh -c 'f=$1; set --; . \"$f\"; for n in np_lock np_iface_up np_undo_all; do command -v "
           "$n; done' sh " +
           shell_quote(path_));
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out, "np_lock\nnp_iface_up\nnp_undo_all\n");
}

TEST_F(CliNodeSteps, AStepThatCannotRunIsRefusedNamingWhat) {
    // Each refused with exit 1, naming what it lacks. Preflight changes nothing: a port this
    // machine does not have is named, with the ones it has. A test on a node no mode configured
    // starts nothing (no state dir to keep its PIDs in).
    const std::vector<std::pair<std::string, std::vector<std::string>>> refused = {
        {"calibrate node1-1", {"unknown step 'calibrate'"}},
        {"teardown '../etc' eth0", {"bad node name '../etc'"}},
        {"configure node1-1 eth0", {"usage: configure NODE IFACE ADDR PREFIX [MTU]"}},
        {"preflight node1-1 np-no-such0 /nonexistent-marker",
         {"no interface np-no-such0 (ports: ", "no /nonexistent-marker"}},
        {"test np-unconfigured-9 lo 198.18.0.1 3 true", {"np-unconfigured-9 is not configured"}},
        {"test node1-1 lo 198.18.0.1 three true", {"SECONDS must be a whole number, not 'three'"}}};
    for (const auto& [args, said] : refused) {
        const auto r = step(args);
        EXPECT_EQ(r.status, 1) << args;
        for (const auto& text : said) EXPECT_NE(r.out.find(text), std::string::npos) << r.out;
    }
}

// A server is ready for a test once it listens and holds no connection of the last one: iperf3
// closes its listening socket after each test and opens a new one, and a client let in before
// that is reset (seen with a server held to 2 % of a core). Real iperf3 in a network namespace
// of its own (unshare -n): ready; a control connection open (a client that sent nothing): not,
// though it listens; that client gone: ready again; the server killed and not yet reaped (kill
// -0 still finds a zombie): it no longer runs.
TEST_F(CliNodeSteps, AServerIsReadyForATestOnlyOnceTheLastTestsConnectionsAreClosed) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (unshare -n)";
    char dir[] = "/run/np-node-steps-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string script = R"sh(
set -u
f=$1 d=$2
set --
. "$f"
ip link set lo up
echo pid >"$d/server"
# Its parent (a sleep) never reaps it, like an adopter that reaps late: killed, it stays a zombie.
sh -c 'iperf3 -s -p 5399 >/dev/null 2>&1 & echo $! >"$1/iperf3.pid.new"; exec sleep 120' sh "$d" &
holder=$!
i=0; until [ -s "$d/iperf3.pid.new" ] || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
mv "$d/iperf3.pid.new" "$d/iperf3.pid"
i=0; until np_server_alive "$d" 5399 || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
np_server_ready "$d" 5399 && echo "ready at start"
exec 3<>/dev/tcp/127.0.0.1/5399
i=0; until ss -Htn state established "sport = :5399" | grep -q . || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
np_server_alive "$d" 5399 && echo "listening"
np_server_ready "$d" 5399 || echo "not ready with a connection open"
exec 3<&-
i=0; until np_server_ready "$d" 5399 || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
np_server_ready "$d" 5399 && echo "ready once it closed"
p=$(cat "$d/iperf3.pid")
kill -KILL "$p"
i=0; until grep -q ') Z' "/proc/$p/stat" || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$p"; then np_server_runs "$d" || echo "gone, a zombie"; else echo "reaped"; fi
kill "$holder"; wait
)sh";
    const auto r = sh("unshare -n bash -c " + shell_quote(script) + " sh " + shell_quote(path_) +
                      " " + shell_quote(dir));
    std::filesystem::remove_all(dir);
    EXPECT_EQ(r.out,
              "ready at start\nlistening\nnot ready with a connection open\nready once it "
              "closed\ngone, a zombie\n")
        << r.out;
}

}  // namespace
}  // namespace np::testing
