// src/remote against the real sshd of the local testbed (scripts/testbed.sh). Needs root.
// Under ctest the testbed fixture brings it up (NP_TESTBED_STATE names its state dir); run
// directly, this binary brings one up itself and takes it down at the end.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "analysis/error.hpp"
#include "src/common/errors.hpp"
#include "src/remote/session.hpp"
#include "src/remote/shell.hpp"
#include "tests/testbed/testbed_environment.hpp"

namespace {

using np::EnvironmentError;
using np::remote::HostKeyPolicy;
using np::remote::Millis;
using np::remote::Session;
using np::remote::SessionOptions;
using np::remote::shell_quote;
using Kind = EnvironmentError::Kind;
using np::testing::sh;

const auto* const kTestbed = ::testing::AddGlobalTestEnvironment(
    new np::testing::TestbedEnvironment("/run/np-testbed-remote-tests"));
const std::string& state_dir = np::testing::testbed_state_dir();

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
    Session s(node("node1-1"));
    EXPECT_EQ(s.name(), "node1-1 (root@198.19.0.1:22)");
    const auto r = s.exec("echo out; echo err >&2; exit 3");
    EXPECT_EQ(r.exit_status, 3);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
    EXPECT_EQ(s.exec("true").exit_status, 0);
}

TEST(RemoteSession, CommandsRunInsideTheNodesOwnNetwork) {
    Session a(node("node1-1"));
    Session b(node("node1-2"));
    EXPECT_NE(a.exec("ip -br -4 addr show ctl0").out.find("198.19.0.1/24"), std::string::npos);
    EXPECT_NE(b.exec("ip -br -4 addr show ctl0").out.find("198.19.0.2/24"), std::string::npos);
    EXPECT_EQ(a.exec("cat /sys/class/net/enp0s25/carrier").out, "1\n");
}

TEST(RemoteSession, CheckNamesTheCommandStatusAndStderr) {
    Session s(node("node1-1"));
    try {
        s.check("ip link show dev nosuchif0");
        FAIL() << "no throw";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(e.kind(), Kind::remote);
        const std::string m = e.what();
        EXPECT_NE(m.find("node1-1"), std::string::npos) << m;
        EXPECT_NE(m.find("exited with status 1"), std::string::npos) << m;
        EXPECT_NE(m.find("nosuchif0"), std::string::npos) << m;
    }
}

TEST(RemoteSession, QuotedArgumentsReachTheRemoteProgramUnchanged) {
    Session s(node("node1-2"));
    for (const std::string text :
         {"a b", "$(id -u)", "`id`", "it's", "x; echo pwned", "\"q\"", "a\nb", "*", "", "\\"}) {
        EXPECT_EQ(s.exec("printf %s " + shell_quote(text)).out, text);
    }
    EXPECT_EQ(s.exec(np::remote::shell_join({"printf", "%s|%s", "a b", "c'd"})).out, "a b|c'd");
}

TEST(RemoteSession, ExecTimeoutIsAnErrorAndStopsTheCommand) {
    Session s(node("node1-1"));
    auto dir = s.make_temp_dir();
    const std::string pidfile = dir->path() + "/pid";
    const auto t0 = std::chrono::steady_clock::now();
    try {
        s.exec("echo $$ > " + shell_quote(pidfile) + "; exec sleep 30", Millis(300));
        FAIL() << "no timeout";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(e.kind(), Kind::timeout);
        EXPECT_NE(std::string(e.what()).find("did not finish within 300 ms"), std::string::npos);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, Millis(3000));
    const std::string pid = s.exec("cat " + shell_quote(pidfile)).out;
    ASSERT_FALSE(pid.empty());
    EXPECT_TRUE(eventually([&] { return s.exec("kill -0 " + pid).exit_status != 0; }))
        << "sleep " << pid << " still runs";
}

TEST(RemoteProcess, StreamsLinesBothWaysAndEndsOnStdinEof) {
    Session s(node("node1-1"));
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
    Session s(node("node1-2"));
    auto p = s.start("echo one; echo two; printf three");
    EXPECT_EQ(p->wait(Millis(5000)), 0);
    EXPECT_EQ(p->read_line(Millis(100)), "one");
    EXPECT_EQ(p->read_line(Millis(100)), "two");
    EXPECT_EQ(p->read_line(Millis(100)), "three");
    EXPECT_EQ(p->read_line(Millis(100)), std::nullopt);
}

TEST(RemoteProcess, DroppingARunningProcessEndsItOnTheNode) {
    Session s(node("node1-1"));
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

TEST(RemoteUpload, LandsInAPrivateDirWithAVerifiedChecksumAndGoesWithIt) {
    std::string content(300 * 1024 + 7, '\0');
    std::mt19937 rng(42);
    for (auto& c : content) c = static_cast<char>(rng());
    const std::string local_path = scratch("upload.bin", content);

    Session s(node("node1-2"));
    std::string dir_path;
    {
        auto dir = s.make_temp_dir();
        dir_path = dir->path();
        EXPECT_EQ(dir_path.rfind("/tmp/np-explain.", 0), 0u) << dir_path;
        EXPECT_EQ(s.exec("stat -c %a " + shell_quote(dir_path)).out, "700\n");
        const std::string remote = s.upload(local_path, *dir, "np-probe", 0700);
        EXPECT_EQ(remote, dir_path + "/np-probe");
        EXPECT_EQ(s.exec("stat -c %a:%s " + shell_quote(remote)).out,
                  "700:" + std::to_string(content.size()) + "\n");
        EXPECT_EQ(s.exec("sha256sum < " + shell_quote(remote)).out.substr(0, 64),
                  np::remote::sha256_file_hex(local_path));
    }
    EXPECT_NE(s.exec("test -e " + shell_quote(dir_path)).exit_status, 0) << dir_path << " left";
}

TEST(RemoteUpload, AMissingLocalFileIsBadInput) {
    Session s(node("node1-2"));
    auto dir = s.make_temp_dir();
    EXPECT_THROW(s.upload(state_dir + "/no-such-file", *dir, "x"), np::InputError);
    EXPECT_THROW(s.upload(state_dir + "/ssh_config", *dir, "../x"), np::InputError);
}

TEST(RemoteHostKey, UnknownKeyIsRefusedWithItsFingerprintAndHowToAccept) {
    auto o = node("node1-1");
    o.known_hosts = scratch("known_hosts.empty", "");
    const auto e = environment_error(o);
    EXPECT_EQ(e.kind(), Kind::host_key);
    const std::string m = e.what();
    // The fingerprint OpenSSH shows for the node's key.
    const std::string fp =
        sh("ssh-keygen -lf " + state_dir + "/node1-1/ssh_host_ed25519_key.pub | cut -d' ' -f2").out;
    ASSERT_EQ(fp.rfind("SHA256:", 0), 0u) << fp;
    EXPECT_NE(m.find(fp.substr(0, fp.size() - 1)), std::string::npos) << m;
    EXPECT_NE(m.find("host key unknown"), std::string::npos) << m;
    EXPECT_NE(m.find("--accept-new-host-keys"), std::string::npos) << m;
    EXPECT_EQ(sh("cat " + o.known_hosts).out, "") << "strict mode wrote known_hosts";
}

TEST(RemoteHostKey, AcceptNewAddsTheKeyAndStrictModeThenConnects) {
    auto o = node("node1-2");
    o.known_hosts = scratch("known_hosts.accept", "");
    o.host_keys = HostKeyPolicy::accept_new;
    { Session s(o); }
    EXPECT_NE(sh("cat " + o.known_hosts).out.find("ssh-ed25519"), std::string::npos);
    o.host_keys = HostKeyPolicy::strict;
    Session s(o);
    EXPECT_EQ(s.exec("true").exit_status, 0);
}

TEST(RemoteHostKey, ChangedKeyIsRefusedEvenWhenAcceptingNewKeys) {
    // node1-2's key filed under node1-1's address: what a man in the middle looks like.
    const std::string other =
        sh("cut -d' ' -f1,2 " + state_dir + "/node1-2/ssh_host_ed25519_key.pub").out;
    auto o = node("node1-1");
    o.known_hosts = scratch("known_hosts.changed", "198.19.0.1 " + other);
    o.host_keys = HostKeyPolicy::accept_new;
    const auto e = environment_error(o);
    EXPECT_EQ(e.kind(), Kind::host_key);
    const std::string m = e.what();
    EXPECT_NE(m.find("HOST KEY MISMATCH"), std::string::npos) << m;
    EXPECT_NE(m.find("SHA256:"), std::string::npos) << m;
    EXPECT_NE(m.find("ssh-keygen -R '198.19.0.1' -f " + o.known_hosts), std::string::npos) << m;
}

TEST(RemoteConnect, UnreachableNodeIsAClearErrorWithinTheTimeout) {
    // 198.19.0.99 is on the testbed's control bridge but nobody has it: ARP goes unanswered.
    const std::string config =
        scratch("ssh_config.ghost", "Host ghost\n  HostName 198.19.0.99\n  User root\n");
    auto o = node("ghost");
    o.ssh_config = config;
    o.connect_timeout = Millis(1500);
    const auto t0 = std::chrono::steady_clock::now();
    const auto e = environment_error(o);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, Millis(6000));
    EXPECT_EQ(e.kind(), Kind::unreachable);
    EXPECT_NE(std::string(e.what()).find("ghost (198.19.0.99:22): cannot connect"),
              std::string::npos)
        << e.what();
}

TEST(RemoteConnect, RefusedPortIsAClearError) {
    const std::string config =
        scratch("ssh_config.port", "Host closed\n  HostName 198.19.0.1\n  Port 2222\n");
    auto o = node("closed");
    o.ssh_config = config;
    const auto e = environment_error(o);
    EXPECT_EQ(e.kind(), Kind::unreachable);
    EXPECT_NE(std::string(e.what()).find("198.19.0.1:2222"), std::string::npos) << e.what();
}

TEST(RemoteConnect, AKeyTheNodeDoesNotKnowIsAnAuthenticationError) {
    sh("rm -f " + state_dir + "/stranger_key*; ssh-keygen -q -t ed25519 -N '' -f " + state_dir +
       "/stranger_key");
    const std::string config = scratch("ssh_config.stranger",
                                       "Host stranger\n  HostName 198.19.0.1\n  User root\n"
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
    auto o = node("node1-1");
    o.ssh_config = state_dir + "/no-such-config";
    try {
        Session s(o);
        FAIL() << "connected";
    } catch (const np::InputError& e) {
        EXPECT_EQ(e.field(), "--ssh-config");
    }
}

TEST(RemoteSession, ACutSessionIsAClearErrorNotAHang) {
    Session s(node("node1-2"));
    auto p = s.start("cat");
    // Each connection is served by a child of the node's sshd: cutting it is the session
    // dropping under us.
    const std::string children = sh("pgrep -P " + sshd_pid("node1-2")).out;
    ASSERT_FALSE(children.empty());
    sh("kill -KILL " + children.substr(0, children.find_last_not_of('\n') + 1));
    const auto t0 = std::chrono::steady_clock::now();
    try {
        p->write_line("x");
        while (!p->eof() && !p->read_line(Millis(3000))) {
        }
        s.exec("true");
        FAIL() << "the session still works";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(e.kind(), Kind::unreachable) << e.what();
        EXPECT_NE(std::string(e.what()).find("node1-2"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, Millis(6000));
}

TEST(RemoteSession, NothingIsLeftOnTheNodeWhenSessionsClose) {
    {
        Session s(node("node1-1"));
        auto p = s.start("cat");
        p->write_line("x");
        auto dir = s.make_temp_dir();
        s.upload(state_dir + "/ssh_config", *dir, "f");
    }
    // Every connection is a child of the node's sshd; none may outlive its Session.
    const std::string pid = sshd_pid("node1-1");
    ASSERT_FALSE(pid.empty());
    EXPECT_TRUE(eventually([&] { return sh("pgrep -P " + pid).out.empty(); }))
        << sh("ps -o pid,args --ppid " + pid).out;
}

}  // namespace
