// src/remote against the real sshd of the local testbed (scripts/testbed.sh). Needs root.
// Under ctest the testbed fixture brings it up (NP_TESTBED_STATE names its state dir); run
// directly, this binary brings one up itself and takes it down at the end.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "common/errors.hpp"
#include "common/shell_quote.hpp"
#include "src/remote/command_shell.hpp"
#include "src/remote/session.hpp"
#include "src/remote/shell.hpp"
#include "tests/testbed/testbed_environment.hpp"

namespace {

using np::EnvironmentError;
using np::shell_quote;
using np::remote::CommandShell;
using np::remote::HostKeyPolicy;
using np::remote::Millis;
using np::remote::Session;
using np::remote::SessionOptions;
using Kind = EnvironmentError::Kind;
using np::testing::sh;

const auto* const kTestbed = ::testing::AddGlobalTestEnvironment(
    new np::testing::TestbedEnvironment("/run/np-testbed-remote-tests", NP_TESTBED_SLOW_SHELL));
const std::string& state_dir = np::testing::testbed_state_dir();

// The testbed's two nodes (its row: tests/testbed/testbed_environment.hpp) and the address
// `i` on its control segment.
std::string A() {
    return np::testing::testbed().server();
}
std::string B() {
    return np::testing::testbed().client();
}
std::string ctl(int i) {
    return np::testing::testbed().ctl_ip(i);
}

SessionOptions node(const std::string& host) {
    SessionOptions o;
    o.host = host;
    o.ssh_config = state_dir + "/ssh_config";
    o.connect_timeout = Millis(5000);
    return o;
}

// A scratch file in the state dir (so the testbed's down removes it too).
std::string scratch(const std::string& name, const std::string& content) {
    const std::string path = state_dir + "/" + name;
    std::ofstream(path) << content;
    return path;
}

std::string sshd_pid(const std::string& node) {
    std::ifstream in(state_dir + "/" + node + "/sshd.pid");
    std::string pid;
    in >> pid;
    return pid;
}

// The node's sshd's children: one per connection. A test judges only the ones its own sessions
// made (those not there before it), never a connection another client still holds open.
std::set<std::string> sshd_children(const std::string& node) {
    std::set<std::string> pids;
    std::istringstream in(sh("pgrep -P " + sshd_pid(node)).out);
    for (std::string pid; in >> pid;) pids.insert(pid);
    return pids;
}
std::set<std::string> new_sshd_children(const std::string& node,
                                        const std::set<std::string>& before) {
    std::set<std::string> now = sshd_children(node);
    for (const auto& pid : before) now.erase(pid);
    return now;
}

template <typename F>
bool eventually(F condition, Millis within = Millis(3000)) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(Millis(50));
    }
    return condition();
}

EnvironmentError environment_error(const SessionOptions& o) {
    try {
        Session s(o);
    } catch (const EnvironmentError& e) {
        return e;
    }
    ADD_FAILURE() << "connected to " << o.host;
    return EnvironmentError(Kind::remote, "");
}

TEST(RemoteSession, ExecKeepsExitStatusStdoutAndStderr) {
    Session s(node(A()));
    EXPECT_EQ(s.name(), A() + " (root@" + ctl(1) + ":22)");
    const auto r = s.exec("echo out; echo err >&2; exit 3");
    EXPECT_EQ(r.exit_status, 3);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
    EXPECT_EQ(s.exec("true").exit_status, 0);
}

TEST(RemoteSession, CommandsRunInsideTheNodesOwnNetwork) {
    Session a(node(A()));
    Session b(node(B()));
    EXPECT_NE(a.exec("ip -br -4 addr show ctl0").out.find(ctl(1) + "/24"), std::string::npos);
    EXPECT_NE(b.exec("ip -br -4 addr show ctl0").out.find(ctl(2) + "/24"), std::string::npos);
    EXPECT_EQ(a.exec("cat /sys/class/net/enp0s25/carrier").out, "1\n");
}

TEST(RemoteSession, CheckNamesTheCommandStatusAndStderr) {
    Session s(node(A()));
    try {
        s.check("ip link show dev nosuchif0");
        FAIL() << "no throw";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(e.kind(), Kind::remote);
        const std::string m = e.what();
        EXPECT_NE(m.find(A()), std::string::npos) << m;
        EXPECT_NE(m.find("exited with status 1"), std::string::npos) << m;
        EXPECT_NE(m.find("nosuchif0"), std::string::npos) << m;
    }
}

TEST(RemoteSession, QuotedArgumentsReachTheRemoteProgramUnchanged) {
    Session s(node(B()));
    for (const std::string text :
         {"a b", "$(id -u)", "`id`", "it's", "x; echo pwned", "\"q\"", "a\nb", "*", "", "\\"}) {
        EXPECT_EQ(s.exec("printf %s " + shell_quote(text)).out, text);
    }
    EXPECT_EQ(s.exec(np::shell_join({"printf", "%s|%s", "a b", "c'd"})).out, "a b|c'd");
}

// How long a new command takes to start on the node: its login shell's start files run first
// (1 s and more on some images; the testbed can simulate that with --slow-shell).
Millis command_start(Session& s) {
    const auto t0 = std::chrono::steady_clock::now();
    s.exec("true");
    return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - t0);
}

TEST(RemoteSession, ExecTimeoutIsAnErrorAndStopsTheCommand) {
    Session s(node(A()));
    // Long enough for the command to have started whatever the shell's start costs, so the
    // timeout hits a running command.
    const Millis timeout = command_start(s) * 3 + Millis(1000);
    const std::string pidfile = scratch("exec-timeout.pid", "");
    const auto t0 = std::chrono::steady_clock::now();
    try {
        s.exec("echo $$ > " + shell_quote(pidfile) + "; exec sleep 300", timeout);
        FAIL() << "no timeout";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(e.kind(), Kind::timeout);
        EXPECT_NE(
            std::string(e.what()).find(fmt::format("did not finish within {} ms", timeout.count())),
            std::string::npos)
            << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, timeout + Millis(10000));
    std::string pid;
    std::ifstream(pidfile) >> pid;
    ASSERT_FALSE(pid.empty()) << "the command had not started within " << timeout.count() << " ms";
    EXPECT_TRUE(eventually([&] { return sh("kill -0 " + pid).status != 0; }))
        << "sleep " << pid << " still runs";
}

TEST(RemoteProcess, StreamsLinesBothWaysAndEndsOnStdinEof) {
    Session s(node(A()));
    auto p = s.start("while read -r l; do echo \"got $l\"; done; echo bye >&2; exit 7");
    p->write_line("phase tcp");
    EXPECT_EQ(p->read_line(Millis(3000)), "got phase tcp");
    p->write_line("phase udp");
    EXPECT_EQ(p->read_line(Millis(3000)), "got phase udp");
    EXPECT_EQ(p->read_line(Millis(200)), std::nullopt);  // nothing to say: a timeout, not EOF
    EXPECT_FALSE(p->eof());
    p->write_line("poll");
    std::optional<std::string> polled;
    for (int i = 0; i < 100 && !polled; ++i) {
        polled = p->read_line(Millis(0));  // a zero timeout polls what has arrived
        if (!polled) std::this_thread::sleep_for(Millis(20));
    }
    EXPECT_EQ(polled, "got poll");
    p->close_stdin();
    EXPECT_EQ(p->wait(Millis(5000)), 7);
    EXPECT_TRUE(p->eof());
    EXPECT_EQ(p->err(), "bye\n");
}

TEST(RemoteProcess, LinesPrintedBeforeExitAreStillReadAfterWait) {
    Session s(node(B()));
    auto p = s.start("echo one; echo two; printf three");
    EXPECT_EQ(p->wait(Millis(5000)), 0);
    EXPECT_EQ(p->read_line(Millis(100)), "one");
    EXPECT_EQ(p->read_line(Millis(100)), "two");
    EXPECT_EQ(p->read_line(Millis(100)), "three");
    EXPECT_EQ(p->read_line(Millis(100)), std::nullopt);
}

TEST(RemoteProcess, DroppingARunningProcessEndsItOnTheNode) {
    Session s(node(A()));
    std::string pid;
    {
        // Ignores stdin, so only the signal the destructor sends after EOF can end it.
        auto p = s.start("echo $$; exec sleep 1000");
        pid = p->read_line(Millis(3000)).value_or("");
        ASSERT_FALSE(pid.empty());
        ASSERT_EQ(s.exec("kill -0 " + pid).exit_status, 0);
    }
    EXPECT_TRUE(eventually([&] { return s.exec("kill -0 " + pid).exit_status != 0; }))
        << "sleep " << pid << " still runs";
}

TEST(CommandShell, RunsCommandsOneAfterAnotherInOneShell) {
    Session s(node(B()));
    CommandShell shell(s);
    const auto first = shell.run("echo $$; echo err >&2; exit 4");
    EXPECT_EQ(first.exit_status, 4);
    EXPECT_EQ(first.err, "err\n");
    // The same shell runs every command: they share its PID, but not each other's cd.
    const auto second = shell.run("cd /tmp; echo $$");
    EXPECT_EQ(second.out, first.out);
    EXPECT_NE(shell.run("pwd").out, "/tmp\n");
    EXPECT_EQ(shell.run("printf 'a\\n\\nb'").out, "a\n\nb\n");
    EXPECT_THROW(shell.check("false"), EnvironmentError);
    ASSERT_EQ(shell.log().size(), 5u);
    EXPECT_EQ(shell.log()[0].exit_status, 4);
}

TEST(CommandShell, ATimedOutCommandIsStoppedAndTheNextCommandGetsAFreshShell) {
    Session s(node(A()));
    CommandShell shell(s);
    const std::string pidfile = scratch("shell-timeout.pid", "");
    EXPECT_THROW(shell.run("echo $$ > " + shell_quote(pidfile) + "; exec sleep 300", Millis(500)),
                 EnvironmentError);
    std::string pid;
    std::ifstream(pidfile) >> pid;
    ASSERT_FALSE(pid.empty());
    EXPECT_TRUE(eventually([&] { return sh("kill -0 " + pid).status != 0; }, Millis(10000)))
        << "sleep " << pid << " still runs";
    EXPECT_EQ(shell.run("echo again").out, "again\n");
}

// Functions define()d in the shell reach every command, before and after the shell restarts
// (a command that timed out takes the shell with it).
TEST(CommandShell, DefinedFunctionsReachEveryCommandAndOutliveARestart) {
    Session s(node(B()));
    CommandShell shell(s);
    EXPECT_NE(shell.run("np_greet world").exit_status, 0);
    shell.define("np_greet() { echo \"hello $1\"; }");
    EXPECT_EQ(shell.run("np_greet world").out, "hello world\n");
    EXPECT_EQ(shell.run("(np_greet sub)").out, "hello sub\n");
    EXPECT_THROW(shell.run("exec sleep 300", Millis(500)), EnvironmentError);
    EXPECT_EQ(shell.run("np_greet again").out, "hello again\n");
}

// What a flood may add to the console's peak memory: the bounds' worth, plus, under
// AddressSanitizer, its quarantine of freed memory (256 MiB by default) and shadow — a sanitized
// run grew 429 MiB where the product grows 40; unbounded, it grew 2 GiB in 16 s.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kFloodPeakMib = 640;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr long kFloodPeakMib = 640;
#else
constexpr long kFloodPeakMib = 160;
#endif
#else
constexpr long kFloodPeakMib = 160;
#endif

// The console's peak resident memory so far, in MiB.
long peak_rss_mib() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6) / 1024;
    return -1;
}

// A node printing without end — lines, one endless line, its errors — is stopped at each
// bound, named with the command and what it exceeded, in flat memory; the shell then runs the
// next command as before, and nothing of the flood is left running on the node.
TEST(CommandShell, ANodePrintingWithoutEndIsStoppedAtEachBoundInFlatMemory) {
    Session s(node(B()));
    CommandShell shell(s);
    const long before = peak_rss_mib();
    struct Case {
        std::string command, exceeded;
        size_t max_out;
    };
    // (The default 16 MiB bound is run()'s, below: one flood of 16 MiB is enough, each takes
    // seconds through SSH in the sanitized build.) Lines of 200 bytes: the bounds are in bytes,
    // and the sanitized console took 26 s for the 21 MiB of 6-byte lines beside the suite's
    // other tests, most of it line by line.
    const std::string flood = "yes " + std::string(199, 'f');
    const std::vector<Case> cases = {
        {flood, "printed more than 2 MiB on stdout", size_t{2} << 20},
        {"cat /dev/zero", "printed a line longer than 1 MiB", np::remote::kMaxOutputBytes},
        {flood + " >&2", "printed more than 1 MiB on stderr", np::remote::kMaxOutputBytes},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.command);
        try {
            shell.begin(c.command, c.max_out);
            while (!shell.finished()) shell.read_line(Millis(1000));
            ADD_FAILURE() << "not stopped";
        } catch (const np::remote::OutputTooLarge& e) {
            EXPECT_EQ(e.exceeded(), c.exceeded);
            const std::string what = e.what();
            EXPECT_TRUE(what.starts_with(B() + " ")) << what;
            EXPECT_NE(what.find(": `" + c.command + "` " + c.exceeded + ": stopped"),
                      std::string::npos)
                << what;
        }
        EXPECT_EQ(shell.run("echo again").out, "again\n");
    }
    // run() holds every command to the default bound. (16 MiB through SSH in the sanitized build
    // on a busy machine took over 30 s, run()'s default time: it gets as long as it needs.)
    try {
        shell.run(flood, Millis(300000));
        ADD_FAILURE() << "run() was not stopped";
    } catch (const np::remote::OutputTooLarge& e) {
        EXPECT_EQ(e.exceeded(), "printed more than 16 MiB on stdout");
    }
    // Session::exec too.
    try {
        s.exec(flood + " >&2");
        ADD_FAILURE() << "exec() was not stopped";
    } catch (const np::remote::OutputTooLarge& e) {
        EXPECT_EQ(e.exceeded(), "printed more than 1 MiB on stderr");
    }
    // Memory: the bounds, not the flood (the sanitized build's own overhead included).
    std::cout << "peak RSS " << before << " MiB before the floods, " << peak_rss_mib()
              << " MiB after\n";
    EXPECT_LT(peak_rss_mib() - before, kFloodPeakMib) << "peak RSS grew from " << before << " MiB";
    EXPECT_TRUE(eventually(
        [&] {
            return sh("ip netns pids " + B() +
                      " | xargs -r -I{} cat /proc/{}/comm 2>/dev/null | grep -qx yes")
                       .status != 0;
        },
        Millis(10000)))
        << "a flood still runs on " << B();
}

TEST(CommandShell, PrivateDirIsMadeByMktempWithMode0700) {
    Session s(node(B()));
    CommandShell shell(s);
    const std::string dir = shell.make_private_dir();
    // Under the node's own TMPDIR (the testbed's sshd sets it), as mktemp makes it.
    const std::string prefix = np::testing::testbed().tmpdir(B()) + "/np-explain.";
    EXPECT_EQ(dir.rfind(prefix, 0), 0u) << dir;
    EXPECT_EQ(dir.size(), prefix.size() + 10) << dir;
    EXPECT_EQ(shell.run("stat -c %a " + shell_quote(dir)).out, "700\n");
    shell.check("rm -rf " + shell_quote(dir));
}

// The upload rides on the shell's own channel: every byte value, including what a shell would
// read as commands, arrives intact, and the shell goes on reading commands afterwards.
TEST(CommandShell, UploadLandsWithItsModeAndAVerifiedChecksumThroughTheShell) {
    std::string content(300 * 1024 + 7, '\0');
    std::mt19937 rng(42);
    for (auto& c : content) c = static_cast<char>(rng());
    content += "\nexit 0\necho pwned > /tmp/np-upload-leak\n";
    const std::string local_path = scratch("upload.bin", content);

    Session s(node(B()));
    CommandShell shell(s);
    const std::string dir = shell.make_private_dir();
    const std::string remote = shell.upload(local_path, dir, "np-probe", 0700);
    EXPECT_EQ(remote, dir + "/np-probe");
    EXPECT_EQ(shell.run("stat -c %a:%s " + shell_quote(remote)).out,
              "700:" + std::to_string(content.size()) + "\n");
    EXPECT_EQ(shell.run("sha256sum < " + shell_quote(remote)).out.substr(0, 64),
              np::remote::sha256_file_hex(local_path));
    EXPECT_EQ(shell.run("ls " + shell_quote(dir)).out, "np-probe\n");  // no .part left
    EXPECT_FALSE(std::filesystem::exists("/tmp/np-upload-leak"));
    EXPECT_EQ(shell.run("echo still here").out, "still here\n");
    shell.check("rm -rf " + shell_quote(dir));
}

TEST(CommandShell, AFailedUploadIsAnErrorAndNoDataIsReadAsCommands) {
    const std::string local_path = scratch("upload-cmds.txt", "touch /tmp/np-upload-leak\n");
    Session s(node(A()));
    CommandShell shell(s);
    try {
        shell.upload(local_path, "/nonexistent-dir", "f");
        FAIL() << "uploaded into a directory that does not exist";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/f"), std::string::npos) << e.what();
    }
    EXPECT_EQ(shell.run("echo still here").out, "still here\n");
    EXPECT_FALSE(std::filesystem::exists("/tmp/np-upload-leak"));
}

TEST(CommandShell, UploadOfAMissingLocalFileOrABadNameIsBadInput) {
    Session s(node(B()));
    CommandShell shell(s);
    EXPECT_THROW(shell.upload(state_dir + "/no-such-file", "/tmp", "x"), np::InputError);
    EXPECT_THROW(shell.upload(state_dir + "/ssh_config", "/tmp", "../x"), np::InputError);
    EXPECT_THROW(shell.upload(state_dir, "/tmp", "x"), np::InputError);  // a directory
}

TEST(RemoteHostKey, UnknownKeyIsRefusedWithItsFingerprintAndHowToAccept) {
    auto o = node(A());
    o.known_hosts = scratch("known_hosts.empty", "");
    const auto e = environment_error(o);
    EXPECT_EQ(e.kind(), Kind::host_key);
    const std::string m = e.what();
    // The fingerprint OpenSSH shows for the node's key.
    const std::string fp =
        sh("ssh-keygen -lf " + state_dir + "/" + A() + "/ssh_host_ed25519_key.pub | cut -d' ' -f2")
            .out;
    ASSERT_EQ(fp.rfind("SHA256:", 0), 0u) << fp;
    EXPECT_NE(m.find(fp.substr(0, fp.size() - 1)), std::string::npos) << m;
    EXPECT_NE(m.find("host key unknown"), std::string::npos) << m;
    EXPECT_NE(m.find("--accept-new-host-keys"), std::string::npos) << m;
    EXPECT_EQ(sh("cat " + o.known_hosts).out, "") << "strict mode wrote known_hosts";
}

TEST(RemoteHostKey, AcceptNewAddsTheKeyAndStrictModeThenConnects) {
    auto o = node(B());
    o.known_hosts = scratch("known_hosts.accept", "");
    o.host_keys = HostKeyPolicy::accept_new;
    { Session s(o); }
    EXPECT_NE(sh("cat " + o.known_hosts).out.find("ssh-ed25519"), std::string::npos);
    o.host_keys = HostKeyPolicy::strict;
    Session s(o);
    EXPECT_EQ(s.exec("true").exit_status, 0);
}

TEST(RemoteHostKey, ChangedKeyIsRefusedEvenWhenAcceptingNewKeys) {
    // Node B's key filed under node A's address: what a man in the middle looks like.
    const std::string other =
        sh("cut -d' ' -f1,2 " + state_dir + "/" + B() + "/ssh_host_ed25519_key.pub").out;
    auto o = node(A());
    o.known_hosts = scratch("known_hosts.changed", ctl(1) + " " + other);
    o.host_keys = HostKeyPolicy::accept_new;
    const auto e = environment_error(o);
    EXPECT_EQ(e.kind(), Kind::host_key);
    const std::string m = e.what();
    EXPECT_NE(m.find("HOST KEY MISMATCH"), std::string::npos) << m;
    EXPECT_NE(m.find("SHA256:"), std::string::npos) << m;
    EXPECT_NE(m.find("ssh-keygen -R '" + ctl(1) + "' -f " + o.known_hosts), std::string::npos) << m;
}

TEST(RemoteConnect, UnreachableNodeIsAClearErrorWithinTheTimeout) {
    // .99 is on the testbed's control segment but nobody has it: ARP goes unanswered.
    const std::string config =
        scratch("ssh_config.ghost", "Host ghost\n  HostName " + ctl(99) + "\n  User root\n");
    auto o = node("ghost");
    o.ssh_config = config;
    o.connect_timeout = Millis(1500);
    const auto t0 = std::chrono::steady_clock::now();
    const auto e = environment_error(o);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, Millis(6000));
    EXPECT_EQ(e.kind(), Kind::unreachable);
    EXPECT_NE(std::string(e.what()).find("ghost (" + ctl(99) + ":22): cannot connect"),
              std::string::npos)
        << e.what();
}

TEST(RemoteConnect, RefusedPortIsAClearError) {
    const std::string config =
        scratch("ssh_config.port", "Host closed\n  HostName " + ctl(1) + "\n  Port 2222\n");
    auto o = node("closed");
    o.ssh_config = config;
    const auto e = environment_error(o);
    EXPECT_EQ(e.kind(), Kind::unreachable);
    EXPECT_NE(std::string(e.what()).find(ctl(1) + ":2222"), std::string::npos) << e.what();
}

TEST(RemoteConnect, AKeyTheNodeDoesNotKnowIsAnAuthenticationError) {
    sh("rm -f " + state_dir + "/stranger_key*; ssh-keygen -q -t ed25519 -N '' -f " + state_dir +
       "/stranger_key");
    const std::string config =
        scratch("ssh_config.stranger", "Host stranger\n  HostName " + ctl(1) +
                                           "\n  User root\n"
                                           "  IdentityFile " +
                                           state_dir +
                                           "/stranger_key\n"
                                           "  UserKnownHostsFile " +
                                           state_dir + "/known_hosts\n");
    auto o = node("stranger");
    o.ssh_config = config;
    ::unsetenv("SSH_AUTH_SOCK");  // the user's agent is not part of this test
    const auto e = environment_error(o);
    EXPECT_EQ(e.kind(), Kind::auth) << e.what();
    EXPECT_NE(std::string(e.what()).find("authentication failed"), std::string::npos);
}

TEST(RemoteConnect, AnUnreadableSshConfigIsBadInput) {
    auto o = node(A());
    o.ssh_config = state_dir + "/no-such-config";
    try {
        Session s(o);
        FAIL() << "connected";
    } catch (const np::InputError& e) {
        EXPECT_EQ(e.field(), "--ssh-config");
    }
}

TEST(RemoteSession, ACutSessionIsAClearErrorNotAHang) {
    const std::set<std::string> before = sshd_children(B());
    Session s(node(B()));
    auto p = s.start("cat");
    // Each connection is served by a child of the node's sshd: cutting this session's is the
    // session dropping under us.
    const std::set<std::string> ours = new_sshd_children(B(), before);
    ASSERT_FALSE(ours.empty());
    for (const auto& pid : ours) sh("kill -KILL " + pid);
    const auto t0 = std::chrono::steady_clock::now();
    try {
        p->write_line("x");
        while (!p->eof() && !p->read_line(Millis(3000))) {
        }
        s.exec("true");
        FAIL() << "the session still works";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(e.kind(), Kind::unreachable) << e.what();
        EXPECT_NE(std::string(e.what()).find(B()), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, Millis(6000));
}

TEST(RemoteSession, NothingIsLeftOnTheNodeWhenSessionsClose) {
    const std::set<std::string> before = sshd_children(A());
    {
        Session s(node(A()));
        auto p = s.start("cat");
        p->write_line("x");
        CommandShell shell(s);
        shell.run("true");
    }
    // Every connection is a child of the node's sshd; none of this test's may outlive its
    // Session.
    const std::string pid = sshd_pid(A());
    ASSERT_FALSE(pid.empty());
    EXPECT_TRUE(eventually([&] { return new_sshd_children(A(), before).empty(); }))
        << sh("ps -o pid,args --ppid " + pid).out;
}

}  // namespace
