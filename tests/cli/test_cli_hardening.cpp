// Issue 12 tried as a careless or hostile user would, against the real binary: huge, deep,
// endless and out-of-range inputs are refused with exit 2 naming the file, in bounded time;
// contracts cannot name files outside their run dir; nothing is written through what is
// planted at a destination; text from files reaches the terminal escaped; names are checked
// before anything starts.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_command.hpp"

namespace np::testing {
namespace {

namespace fs = std::filesystem;

class CliHardening : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/np-hardening-test-XXXXXX";
        dir_ = mkdtemp(tmpl);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path write(const std::string& name, const std::string& text) const {
        std::ofstream(dir_ / name, std::ios::binary) << text;
        return dir_ / name;
    }
    static std::string fixture(const std::string& f) {
        return (fs::path(NP_FIXTURES_DIR) / f).string();
    }
    fs::path dir_;
};

// Refused at the 65th level, not by a stack that overflowed (which would end in a signal).
TEST_F(CliHardening, AContractNested100000DeepIsRefusedNamingTheFile) {
    const auto c =
        write("np_contract_m.json", "{\"mode\": \"m\", \"a\": " + std::string(100000, '[') +
                                        std::string(100000, ']') + "}");
    const std::string before = read_file(c);
    const auto r = np_explain({"attach", c.string()});
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_NE(r.err.find(c.string() + ": a: nested deeper than 64 levels"), std::string::npos)
        << r.err;
    EXPECT_EQ(read_file(c), before);
}

TEST_F(CliHardening, AContractHolding1e400IsBadInputNamingFileAndField) {
    const auto c = write("np_contract_m.json", R"({"mode": "m", "tcp_mbps": 1e400})");
    const auto r = np_explain({"attach", c.string()});
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_NE(r.err.find(c.string() + ": tcp_mbps: a number out of range"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
}

// The file's last access time, in ns.
int64_t accessed_ns(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return -1;
    return int64_t{st.st_atim.tv_sec} * 1'000'000'000 + st.st_atim.tv_nsec;
}

TEST_F(CliHardening, A2GiBPingFileIsRefusedFromItsSizeUnread) {
    const auto p = dir_ / "ping.txt";
    std::ofstream(p) << "PING";
    fs::resize_file(p, int64_t{2} << 30);  // sparse: costs no disk
    // Its access time an hour before its change: the first read of it moves the access time
    // (relatime), so the file shows whether np-explain read any of it, however long it ran.
    const timespec times[2] = {{::time(nullptr) - 3600, 0}, {0, UTIME_OMIT}};
    ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
    const int64_t before = accessed_ns(p);
    const auto r = np_explain({"explain", "--ping", p.string()});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find(p.string() + ": 2048 MiB"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("refused unread"), std::string::npos) << r.err;
    EXPECT_EQ(accessed_ns(p), before) << "np-explain read the file";
    // A read of it here moves the time, or this file system keeps none to tell by.
    char c = 0;
    std::ifstream(p).read(&c, 1);
    if (accessed_ns(p) == before) GTEST_SKIP() << "no access times on " << dir_;
}

TEST_F(CliHardening, NestedArraysAsATraceAreRefusedInBoundedMemory) {
    {
        std::ofstream t(dir_ / "trace.json");
        const std::string block(1 << 20, '[');
        for (int i = 0; i < 200; ++i) t << block;  // 200 MiB
    }
    // Peak RSS of np-explain explaining the same iperf3 output with and without that trace.
    const auto peak_kb = [&](std::vector<std::string> args, int want_status) {
        args.insert(args.begin(), {"/usr/bin/time", "-f", "maxrss_kb=%M", NP_EXPLAIN_BIN, "explain",
                                   "--iperf3", fixture("iperf3/tcp-100m.json")});
        const auto r = run_command(args);
        EXPECT_EQ(r.exit_status, want_status) << r.err;
        const auto at = r.err.find("maxrss_kb=");
        EXPECT_NE(at, std::string::npos) << r.err;
        return std::make_pair(at == std::string::npos ? -1L : std::stol(r.err.substr(at + 10)),
                              r.err);
    };
    const long floor_kb = peak_kb({}, 0).first;
    const auto [kb, err] = peak_kb({"--trace", (dir_ / "trace.json").string()}, 2);
    EXPECT_NE(err.find("trace.json: nested deeper than 64 levels"), std::string::npos) << err;
    // Refused after reading a bounded prefix: ~2 MB above np-explain's own floor (~10 MB, ~140 MB
    // under ASan), far below the 200 MiB text read whole (and the 7 GB before).
    EXPECT_LT(kb - floor_kb, 32 * 1024) << "floor " << floor_kb << " kB\n" << err;
}

TEST_F(CliHardening, FifosAreRefusedAtOpenAsInputsTracesAndContractsNamingThem) {
    ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
    const std::string fifo = (dir_ / "fifo").string();
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"explain", fifo},
          {"explain", "--iperf3", fixture("iperf3/tcp-100m.json"), "--trace", fifo},
          {"attach", fifo}}) {
        const auto r = np_explain(args);
        EXPECT_EQ(r.exit_status, 2) << args[1];
        EXPECT_NE(r.err.find(fifo + ": is a FIFO"), std::string::npos) << r.err;
    }
    // A contract whose traces name a FIFO in its run dir: report refuses it, never hangs.
    write("np_contract_m.json", R"({"mode": "m", "tcp_mbps": 94, "traces": ["fifo"]})");
    const auto r = np_explain({"report", dir_.string(), "--out", (dir_ / "r.html").string()});
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(r.err.find("is a FIFO"), std::string::npos) << r.err;
}

TEST_F(CliHardening, AModeOrTraceClimbingOutOfTheRunDirIsRefused) {
    fs::create_directories(dir_ / "outside");
    write("outside/secret_ping.txt", read_file(fixture("ping/iputils-ok.txt")));
    fs::create_directories(dir_ / "run");
    write("run/np_contract_x.json", R"({"mode": "../outside/secret", "tcp_mbps": 94})");
    auto r = np_explain({"report", (dir_ / "run").string(), "--format", "md"});
    EXPECT_EQ(r.exit_status, 2) << r.out;
    EXPECT_NE(r.err.find("np_contract_x.json: mode"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("secret"), std::string::npos) << r.out;

    for (const std::string& ref : {std::string("/etc/passwd"), std::string("../outside/t.json")}) {
        write("run/np_contract_x.json",
              nlohmann::json{{"mode", "x"}, {"tcp_mbps", 94}, {"traces", {ref}}}.dump());
        r = np_explain({"report", (dir_ / "run").string(), "--format", "md"});
        EXPECT_EQ(r.exit_status, 2) << ref;
        EXPECT_NE(r.err.find("traces"), std::string::npos) << r.err;
        r = np_explain({"attach", (dir_ / "run" / "np_contract_x.json").string()});
        EXPECT_EQ(r.exit_status, 2) << ref;
    }
    // attach never writes a reference to a file outside the contract's directory.
    write("run/np_contract_x.json", R"({"mode": "x", "tcp_mbps": 94})");
    r = np_explain({"attach", (dir_ / "run" / "np_contract_x.json").string(), "--trace",
                    fixture("run-100m/np-explain_trace_node1-1.json")});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("is outside the contract's directory"), std::string::npos) << r.err;
}

TEST_F(CliHardening, OutRefusesADeviceAFifoAndALinkAndLeavesThemAsTheyWere) {
    write("np_contract_m.json", R"({"mode": "m", "tcp_mbps": 94})");
    ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
    fs::create_symlink(dir_ / "victim", dir_ / "link.html");
    write("victim", "precious");
    std::vector<std::string> outs = {(dir_ / "fifo").string(), (dir_ / "link.html").string()};
    // A private copy of /dev/full (char 1:7), so a failure cannot damage the real one.
    if (geteuid() == 0 && mknod((dir_ / "full").c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0)
        outs.push_back((dir_ / "full").string());
    for (const auto& out : outs) {
        const auto r = np_explain({"report", dir_.string(), "--out", out});
        EXPECT_EQ(r.exit_status, 2) << out << ": " << r.err;
        EXPECT_NE(r.err.find(out + ": exists and is"), std::string::npos) << r.err;
    }
    EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
    EXPECT_TRUE(fs::is_symlink(dir_ / "link.html"));
    EXPECT_EQ(read_file(dir_ / "victim"), "precious");
    if (outs.size() == 3) {
        EXPECT_TRUE(fs::is_character_file(dir_ / "full"));
    }
}

TEST_F(CliHardening, TextFromFilesReachesTheTerminalEscaped) {
    auto doc = nlohmann::json::parse(read_file(fixture("iperf3/tcp-100m.json")));
    doc["error"] = "boom \x1b]0;pwned\x07\x1b[2J";
    const auto f = write("esc\x1b[31m.json", doc.dump());
    const auto r = np_explain({"explain", "--iperf3", f.string()});
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("boom \\x1b]0;pwned\\x07\\x1b[2J"), std::string::npos) << r.out;

    // A contract's hostile host names, in parity's table and in an error message.
    write("np_contract_m.json",
          R"({"mode": "m", "tcp_mbps": 94, "node1": "a\u001b[2Jb", "node2": "c\u0007"})");
    const auto p = np_explain({"parity", dir_.string()});
    EXPECT_EQ(p.out.find('\x1b'), std::string::npos) << p.out;
    EXPECT_EQ(p.out.find('\x07'), std::string::npos) << p.out;
    const auto e = np_explain({"explain", (dir_ / "no\x1b[2Jsuch").string()});
    EXPECT_EQ(e.exit_status, 2);
    EXPECT_EQ(e.err.find('\x1b'), std::string::npos) << e.err;
}

TEST_F(CliHardening, TheHtmlReportEscapesHostileStrings) {
    write("np_contract_m.json", R"({"mode": "m", "tcp_mbps": 94, "link_mbps": 100,
        "node1": "<script>alert(1)</script>\u001b[31mred", "node2": "\"><img src=x onerror=alert(2)>"})");
    auto doc = nlohmann::json::parse(read_file(fixture("iperf3/tcp-100m.json")));
    doc["error"] = "</script><script>alert(3)</script><!--";
    write("m_tcp.json", doc.dump());
    const auto r = np_explain({"report", dir_.string(), "--out", (dir_ / "r.html").string()});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const std::string html = read_file(dir_ / "r.html");
    for (const char* raw : {"<script>alert", "<img src=x", "</script><script>alert(3)"})
        EXPECT_EQ(html.find(raw), std::string::npos) << raw;
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    // A terminal's escape sequences from a file are never written raw, in the page or in the
    // Markdown summary: shown as U+FFFD.
    const auto md =
        np_explain({"report", dir_.string(), "--format", "md", "--out", (dir_ / "r.md").string()});
    ASSERT_EQ(md.exit_status, 0) << md.err;
    for (const auto& [name, text] :
         {std::pair{"html", html}, std::pair{"md", read_file(dir_ / "r.md")}}) {
        EXPECT_EQ(text.find('\x1b'), std::string::npos) << name;
        EXPECT_NE(text.find("[31mred"), std::string::npos) << name << ": the error is not shown";
    }
}

TEST_F(CliHardening, HostileNodeNamesModesAndRunDirsAreRefusedBeforeAnythingStarts) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"run", "a;rm -rf /", "b"},
                                                 {"run", "a", "host name"},
                                                 {"run", "a", "b", "--mode", "../../x"},
                                                 {"teardown", "$(id)", "b"}}) {
        const auto r = np_explain(args);
        EXPECT_EQ(r.exit_status, 2) << args[1] << " " << args[2] << ": " << r.err;
        EXPECT_TRUE(r.err.find("is not a node name") != std::string::npos ||
                    r.err.find("is not a mode name") != std::string::npos)
            << r.err;
    }
    const fs::path open = dir_ / "open";
    fs::create_directory(open);
    fs::permissions(open, fs::perms(0777));
    const auto r = run_command(
        {"env", "NP_PROBE=/bin/true", NP_EXPLAIN_BIN, "run", "a", "b", "--run-dir", open.string()});
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_NE(r.err.find(open.string() + ": is writable by everyone"), std::string::npos) << r.err;
}

// The local testbed's profile and IP version, the probe's tiers, --link and the nodes named
// are checked before the testbed's lock is taken or anything comes up.
TEST_F(CliHardening, ALocalTestbedOfUnknownProfileOrFamilyIsRefusedNamingTheOption) {
    for (const auto& [args, option] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"run", "--local", "--family", "5"}, "--family"},
             {{"run", "--local", "--family", "ipv6"}, "--family"},
             {{"run", "--local", "--profile", "10G"}, "--profile"},
             {{"run", "--local", "--probe-tier", "bogus"}, "--probe-tier"},
             {{"run", "--local", "--no-probe", "--require-tier", "full"}, "--no-probe"},
             {{"run", "--local", "--link", "7Q"}, "--link"},
             {{"run", "--local", "node1-1", "node1-2"}, "--local"},
             {{"teardown", "node1-1"}, "NODE_A NODE_B"}}) {
        const auto r = np_explain(args);
        EXPECT_EQ(r.exit_status, 2) << r.err;
        EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("testbed up"), std::string::npos) << r.err;
    }
}

// np-explain installed without np-probe beside it: `run` and `probe` say where they looked and
// exit 3, and `run --local` says so before it brings up a testbed.
TEST_F(CliHardening, WithoutNpProbeRunAndProbeSaySoBeforeAnythingComesUp) {
    const fs::path lone = dir_ / "bin" / "np-explain";
    fs::create_directories(lone.parent_path());
    fs::copy_file(NP_EXPLAIN_BIN, lone);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"run", "--local"}, {"probe", "--iface", "lo"}}) {
        std::vector<std::string> argv = {"env", "-u", "NP_PROBE", lone.string()};
        argv.insert(argv.end(), args.begin(), args.end());
        const auto r = run_command(argv);
        EXPECT_EQ(r.exit_status, 3) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("np-probe not found"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("testbed up"), std::string::npos) << r.err;
    }
}

}  // namespace
}  // namespace np::testing
