// `np-explain run` end to end on the local testbed (scripts/testbed.sh, profile 100M): the
// acceptance of issue 5. The real np-explain binary drives the testbed's real sshd, iperf3,
// ping and the BPF probe on both nodes' data NIC. Needs root.
//
// Under ctest the np_testbed fixture brings the testbed up (NP_TESTBED_STATE names its state
// dir); run directly, this binary brings one up itself and takes it down at the end.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>

#include "tests/run/run_helpers.hpp"
#include "tests/testbed/testbed_environment.hpp"

namespace {

using namespace np::testing;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The nodes of the testbed this test was given (its row: tests/testbed/testbed_environment.hpp).
std::string server() {
    return testbed().server();
}
std::string client() {
    return testbed().client();
}
const std::string kDataIface = "enp0s25";
const std::string kWrongIface = "enp3s0";
// The model at 100 Mbit/s, MTU 1500 (np-explain model --link 100M): TCP with timestamps
// 1448/1538, UDP 1448-byte datagrams 1448/1514.
constexpr double kTcpCeilingMbps = 94.148;
constexpr double kUdpCeilingMbps = 95.641;
constexpr double kTcpWirePerSegment = 1538, kTcpPayloadPerSegment = 1448;
constexpr double kUdpWirePerDatagram = 1514, kUdpPayloadPerDatagram = 1448;

const auto* const kTestbed = ::testing::AddGlobalTestEnvironment(
    new np::testing::TestbedEnvironment("/run/np-testbed-run-tests", NP_TESTBED_SLOW_SHELL));
const std::string& state_dir = np::testing::testbed_state_dir();

// How busy the machine's CPUs were between two points, in % (from /proc/stat): the 100M
// figures need the testbed's iperf3 to get the CPU when they ask for it, so a failure says
// what else was running.
class CpuBusy {
  public:
    CpuBusy() : start_(read()) {}
    double pct() const {
        const auto now = read();
        const double total = double(now.first - start_.first);
        return total > 0 ? 100.0 * (1.0 - double(now.second - start_.second) / total) : 0;
    }

  private:
    static std::pair<uint64_t, uint64_t> read() {  // total, idle + iowait jiffies
        std::istringstream in(read_file("/proc/stat"));
        std::string cpu;
        uint64_t v[8] = {};
        in >> cpu;
        for (auto& x : v) in >> x;
        uint64_t total = 0;
        for (auto x : v) total += x;
        return {total, v[3] + v[4]};
    }
    std::pair<uint64_t, uint64_t> start_;
};

// ------------------------------------------------------------------ reading a run dir

const json* phase(const json& trace, const std::string& name) {
    for (const auto& p : trace["phases"])
        if (p.value("name", "") == name) return &p;
    return nullptr;
}

double num(const json& j, const std::string& key) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

class RunTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char dir[] = "/tmp/np-run-dir-XXXXXX";
        run_dir_ = mkdtemp(dir);
        uploads_before_ = uploads();
    }
    void TearDown() override {
        if (HasFailure()) {
            std::cerr << "run dir kept: " << run_dir_ << "\n";
        } else {
            std::filesystem::remove_all(run_dir_);
        }
    }

    std::string ssh_config() const { return testbed().ssh_config(); }
    std::string params() const { return testbed().params(); }
    static std::set<std::string> uploads() {
        return upload_dirs({testbed().tmpdir(server()), testbed().tmpdir(client())});
    }

    // `run A B` with the testbed's ssh_config and params, then `extra`.
    std::vector<std::string> run_args(std::vector<std::string> extra) const {
        std::vector<std::string> args = {"run",          server(),     client(),
                                         "--ssh-config", ssh_config(), "--params",
                                         params(),       "--run-dir",  run_dir_};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    }

    json contract() const { return read_json(run_dir_ + "/np_contract_np-explain.json"); }

    // Waits until node B runs the iperf3 TCP client: the run is in its tcp phase.
    static bool wait_for_tcp_phase(BackgroundRun& run, seconds timeout) {
        return wait_until(
            [&] {
                return !run.running() || !programs(client(), "iperf3", [](const NodeProcess& p) {
                                              return is_iperf3_client(p) && !is_udp(p);
                                          }).empty();
            },
            timeout);
    }

    // A second into the run's tcp phase, the PID node A's process has in the run's `pidfile`
    // if it still runs `program`; 0 when the phase never came or the process is not that.
    static pid_t recorded_in_tcp_phase(BackgroundRun& run, const std::string& pidfile,
                                       const std::string& program) {
        if (!wait_for_tcp_phase(run, seconds(30)) || !run.running()) return 0;
        std::this_thread::sleep_for(milliseconds(1000));
        const pid_t pid = std::atoi(read_file(run_state_file(server(), pidfile)).c_str());
        const auto argv = pid > 1 ? cmdline(pid) : std::vector<std::string>{};
        return !argv.empty() && basename_of(argv[0]) == program ? pid : 0;
    }

    // What a run must leave on both nodes, whatever way it ended: no probe, no hook, no
    // iperf3 (the server at once; a client cut off from its session ends with its test within
    // `client_grace`), no uploaded file, no undo script; the data iface as the testbed made it.
    void expect_nodes_clean(seconds client_grace = seconds(0)) {
        for (const auto& node : {server(), client()}) {
            SCOPED_TRACE(node);
            EXPECT_EQ(join(programs(node, "np-probe")), "");
            EXPECT_EQ(join(programs(node, "iperf3", is_iperf3_server)), "");
            EXPECT_TRUE(wait_until([&] { return programs(node, "iperf3").empty(); },
                                   client_grace + seconds(1)))
                << join(programs(node, "iperf3"));
            EXPECT_EQ(ns_exec(node, "tc filter show dev " + kDataIface + " ingress"), "");
            EXPECT_EQ(ns_exec(node, "tc filter show dev " + kDataIface + " egress"), "");
            EXPECT_EQ(ns_exec(node, "tc qdisc show dev " + kDataIface).find("clsact"),
                      std::string::npos);
            EXPECT_EQ(join(run_state_files(node)), "");
            EXPECT_EQ(ns_exec(node, "ip -o addr show dev " + kDataIface).find(testbed().data_net()),
                      std::string::npos);
        }
        std::vector<std::string> left;
        for (const auto& d : uploads())
            if (!uploads_before_.count(d)) left.push_back(d);
        EXPECT_EQ(join(left), "") << "uploaded dirs left behind";
    }

    // A run stopped by a fault: a clear message on stderr, a non-zero exit, the contract
    // saved with RUN_INCOMPLETE saying why.
    void expect_partial_results(const CommandResult& r, const std::string& why) {
        std::cout << "exit " << r.exit_status << ", stderr:\n" << r.err;
        EXPECT_NE(r.exit_status, 0) << r.out << r.err;
        EXPECT_NE(r.exit_status, -2) << "np-explain did not end within the timeout";
        EXPECT_NE(r.err.find("the run stopped early"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("partial results saved in " + run_dir_), std::string::npos) << r.err;
        const json c = contract();
        ASSERT_TRUE(c.is_object()) << "no contract in " << run_dir_;
        const json* incomplete = finding(c, "RUN_INCOMPLETE");
        ASSERT_NE(incomplete, nullptr) << codes(c);
        EXPECT_EQ(incomplete->value("severity", ""), "error");
        EXPECT_NE(incomplete->value("detail", "").find(why), std::string::npos)
            << incomplete->dump(2);
        // The ping phase finished before every fault below: its figure is kept.
        EXPECT_TRUE(c["ping_rtt_ms"].is_number()) << c.dump(2);
        EXPECT_TRUE(std::filesystem::exists(run_dir_ + "/np-explain_ping.txt"));
    }

    std::string run_dir_;
    std::set<std::string> uploads_before_;
};

// ------------------------------------------------------------------ 1. the tutorial's run

// The run's own CPU_STOLEN for one test (time the hypervisor took while it ran), or none.
const json* stolen_for(const json& c, const std::string& test) {
    for (const auto& f : c["explain"]["findings"])
        if (f.value("code", "") == "CPU_STOLEN" && f.value("test", "") == test) return &f;
    return nullptr;
}

// The share of a test of `seconds` that what left the sender's NIC stood still, where the run's
// own explanation set that pause beside time the hypervisor took (CPU_STOLEN, its
// longest_pause_ms); 0 without one. A band held to the ceiling is widened by it, and only then.
double stolen_pause_share(const json& c, const std::string& test, double seconds) {
    const json* f = stolen_for(c, test);
    if (!f) return 0.0;
    std::cout << f->value("title", "") << ": " << f->value("detail", "") << "\n";
    return f->at("evidence").value("longest_pause_ms", 0) / (seconds * 1000);
}

// 4-s tests are enough: slow start over a sub-millisecond RTT is negligible, and the tbf's
// 16 kB burst is 1.3 ms of line rate. Measured here, 4-s runs: TCP 99.64-100.03 % of the
// ceiling (2-s runs: 99.81-100.06 %).
TEST_F(RunTest, Profile100MIsLineRateBoundAndTheDataNicCarriedWhatIperf3Moved) {
    BackgroundRun run(
        run_args({"--tcp-duration", "4", "--udp-duration", "4", "--ping-count", "3"}));
    const CpuBusy cpu;
    const CommandResult r = run.wait(seconds(60));
    const std::string busy = "machine CPU busy " + std::to_string(cpu.pct()) +
                             " % during the run (the testbed included)";
    std::cout << "run wall time " << run.seconds() << " s (tests 4 + 4 s, ping 3 x 1 s); " << busy
              << "\n";
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    // stdout is not a terminal: the explanation, no progress lines.
    EXPECT_NE(r.out.find("line-rate bound"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("elapsed"), std::string::npos) << r.out;
    const json c = contract();
    ASSERT_TRUE(c.is_object());
    EXPECT_EQ(c["mode"], "np-explain");
    EXPECT_EQ(c["node1"], server());
    EXPECT_EQ(c["node2"], client());
    EXPECT_DOUBLE_EQ(num(c, "link_mbps"), 100);

    // TCP within the engine's own line-rate band of the ceiling (1.5 %), and said to be
    // line-rate bound. A tighter bound fails on a busy machine for reasons that are not the
    // tool's: measured here at load 4, UDP reached 98.8 % when the sender lost the CPU for
    // ~50 ms of a 4-s test (the probes still accounted for every byte, below).
    // Where the hypervisor took the VM's CPUs, the explanation says so (CPU_STOLEN) with the
    // pause of what left the sender's NIC: a CI run's UDP reached 97.5 % with 100 ms of each CPU
    // stolen and nothing sent for 99 ms. The band is widened by that pause, and only then.
    const auto paused = [&](const std::string& test) { return stolen_pause_share(c, test, 4); };
    const double tcp = num(c, "tcp_mbps");
    std::cout << "TCP " << tcp << " Mbit/s = " << 100 * tcp / kTcpCeilingMbps << " % of "
              << kTcpCeilingMbps << "\n";
    const double tcp_paused = paused("iperf3 TCP");
    EXPECT_GE(tcp, kTcpCeilingMbps * (0.985 - tcp_paused)) << busy;
    EXPECT_LE(tcp, kTcpCeilingMbps * 1.01);
    const json* line_rate = finding(c, "LINE_RATE_BOUND");
    if (tcp_paused == 0) {
        ASSERT_NE(line_rate, nullptr) << codes(c);
        EXPECT_NE(line_rate->value("title", "").find("TCP"), std::string::npos)
            << line_rate->dump(2);
    }

    // UDP offered 1G (the params) on a 100M link: the ceiling (same band), nothing lost, the
    // sender held back by its own queue.
    const double udp = num(c, "udp_mbps");
    std::cout << "UDP " << udp << " Mbit/s = " << 100 * udp / kUdpCeilingMbps << " % of "
              << kUdpCeilingMbps << ", loss " << c["udp_loss_pct"] << " %\n";
    EXPECT_GE(udp, kUdpCeilingMbps * (0.985 - paused("iperf3 UDP"))) << busy;
    EXPECT_LE(udp, kUdpCeilingMbps * 1.01);
    const json* offered = finding(c, "OFFERED_ABOVE_CEILING");
    ASSERT_NE(offered, nullptr) << codes(c);
    EXPECT_EQ(offered->value("severity", ""), "info");
    EXPECT_NE(offered->value("detail", "").find("held back by its own queue ("), std::string::npos)
        << offered->dump(2);
    for (const auto& f : c["explain"]["findings"])
        EXPECT_NE(f.value("severity", ""), "error") << f.dump(2);
    // Ping beside the UDP test waited behind its datagrams in that queue (the profile's tbf,
    // 50 ms deep, full of what the UDP socket's send buffer holds): both probes' stamps of its
    // echoes place the round trip that grew there (5.5 ms against 0.044 idle on a 2-vCPU VM).
    const json* rtt = nullptr;
    for (const auto& f : c["explain"]["findings"])
        if (f.value("code", "") == "RTT_UNDER_LOAD" && f.value("test", "") == "iperf3 UDP")
            rtt = &f;
    ASSERT_NE(rtt, nullptr) << codes(c);
    std::cout << rtt->value("title", "") << "\n";
    EXPECT_EQ(rtt->at("evidence").value("stage", ""), "pinger_queue") << rtt->dump(2);
    EXPECT_EQ(rtt->at("evidence").value("pinger", ""), client()) << rtt->dump(2);
    EXPECT_GE(rtt->at("evidence").value("stage_share", 0.0), 0.9) << rtt->dump(2);
    EXPECT_GE(rtt->at("evidence").value("echoes_under_load", 0), 10) << rtt->dump(2);

    // The contract, both traces and the raw outputs are in the run dir.
    ASSERT_EQ(c["traces"].size(), 2u) << c.dump(2);
    json traces[2];
    for (int i = 0; i < 2; ++i) {
        traces[i] = read_json(run_dir_ + "/" + c["traces"][i].get<std::string>());
        ASSERT_EQ(traces[i].value("schema", ""), "np-trace/1");
        EXPECT_EQ(traces[i].value("iface", ""), kDataIface);
    }
    const json& server_trace = traces[0].value("role", "") == "server" ? traces[0] : traces[1];
    const json& client_trace = traces[0].value("role", "") == "client" ? traces[0] : traces[1];
    EXPECT_EQ(server_trace.value("node", ""), server());
    EXPECT_EQ(client_trace.value("node", ""), client());
    for (const char* f : {"np-explain_ping.txt", "np-explain_tcp.json", "np-explain_udp.json",
                          "np-explain_findings.json"})
        EXPECT_TRUE(std::filesystem::exists(run_dir_ + "/" + f)) << f;

    // The data NIC's wire bytes account for iperf3's bytes: take off each frame's overhead
    // in the model (TCP 1538 - 1448 = 90 B, UDP 1514 - 1448 = 66 B) and what is left is the
    // payload iperf3 moved, within 1 %. For TCP that is what the receiver got: the sender's
    // count also holds what was still in its socket buffer when the test ended (~0.5 MB at
    // 100 Mbit/s), which never reached the wire.
    const json tcp_out = read_json(run_dir_ + "/np-explain_tcp.json");
    const json udp_out = read_json(run_dir_ + "/np-explain_udp.json");
    const double tcp_sent = tcp_out["end"]["sum_sent"]["bytes"].get<double>();
    const double tcp_retransmits = tcp_out["end"]["sum_sent"].value("retransmits", 0.0);
    const double tcp_received = tcp_out["end"]["sum_received"]["bytes"].get<double>();
    const double udp_sent = udp_out["end"]["sum"]["bytes"].get<double>();

    // A clean run: nothing lost anywhere the probes look — but for the receiving iperf3 falling
    // behind for a moment on a shared VM (seen once in CI: 58 datagrams at its socket, the
    // machine 25 % busy, iperf3 at 8 % of a core). That loss is the host's and real; it is
    // accepted only as far as the kernel counted it at the receiving socket in the server's
    // raw trace, and only when the explanation names exactly that.
    uint64_t socket_drops = 0;
    for (const auto& p : server_trace["phases"])
        if (p.value("name", "") == "udp")
            for (const auto& d : p["drops"]["by_reason"])
                if (d.value("reason", "") == "SOCKET_RCVBUFF")
                    for (const auto& w : d["where"])
                        if (w.value("flow", "") == "iperf" && w.value("protocol", "") == "udp")
                            socket_drops += w.value("packets", uint64_t{0});
    const json& udp_end = udp_out["end"];
    const auto udp_lost =
        (udp_end.contains("sum_received") ? udp_end["sum_received"] : udp_end["sum"])
            .value("lost_packets", int64_t{-1});
    EXPECT_EQ(udp_lost, int64_t(socket_drops)) << "lost datagrams the receiver's kernel did not "
                                                  "count at its socket; "
                                               << busy;
    if (socket_drops > 0) {
        const json* at_socket = finding(c, "LOSS_AT_RECEIVER_SOCKET");
        ASSERT_NE(at_socket, nullptr) << codes(c);
        EXPECT_EQ(at_socket->at("evidence").value("lost_datagrams", uint64_t{0}), socket_drops)
            << at_socket->dump(2);
        std::cout << "UDP: " << socket_drops << " datagrams at the receiving socket, named\n";
    } else {
        EXPECT_EQ(c["udp_loss_pct"], 0.0) << busy;
    }
    for (const char* loss : {"UDP_LOSS", "LOSS_AT_SENDER_QDISC", "LOSS_ON_WIRE",
                             "LOSS_AT_RECEIVER_NIC", "LOSS_AT_RECEIVER_SOCKET"})
        if (socket_drops == 0 ||
            (std::string(loss) != "UDP_LOSS" && std::string(loss) != "LOSS_AT_RECEIVER_SOCKET")) {
            EXPECT_EQ(finding(c, loss), nullptr) << codes(c) << busy;
        }

    struct Check {
        const json& trace;
        const char* phase;
        const char* dir;
        const char* flow;
        double tool_bytes;
        double wire_per_unit, payload_per_unit;
    };
    const Check checks[] = {
        {client_trace, "tcp", "tx", "iperf_tcp", tcp_received, kTcpWirePerSegment,
         kTcpPayloadPerSegment},
        {server_trace, "tcp", "rx", "iperf_tcp", tcp_received, kTcpWirePerSegment,
         kTcpPayloadPerSegment},
        {client_trace, "udp", "tx", "iperf_udp", udp_sent, kUdpWirePerDatagram,
         kUdpPayloadPerDatagram},
        {server_trace, "udp", "rx", "iperf_udp", udp_sent, kUdpWirePerDatagram,
         kUdpPayloadPerDatagram},
    };
    for (const auto& k : checks) {
        SCOPED_TRACE(std::string(k.trace.value("node", "")) + " " + k.phase + " " + k.dir);
        const json* p = phase(k.trace, k.phase);
        ASSERT_NE(p, nullptr);
        const json& flow = (*p)[k.dir]["by_flow"][k.flow];
        const double wire = num(flow, "wire_bytes"), frames = num(flow, "wire_packets");
        const double payload = wire - frames * (k.wire_per_unit - k.payload_per_unit);
        std::cout << k.trace.value("node", "") << " " << k.phase << " " << k.dir << ": " << wire
                  << " wire bytes in " << frames << " frames -> payload " << payload
                  << " B, iperf3 " << k.tool_bytes << " B (" << 100 * payload / k.tool_bytes
                  << " %)\n";
        EXPECT_NEAR(payload / k.tool_bytes, 1.0, 0.01);
        // Every frame of the flow paid the model's wire cost: a full one is 1538/1514 B.
        EXPECT_LE(wire / frames, k.wire_per_unit + 0.5);
        // Nor more than the sender wrote and resent (+ 0.1 %: iperf3's UDP test opens with a
        // 4-byte datagram in a minimum-size frame, which the estimate counts as 18 bytes).
        const double written = k.wire_per_unit == kTcpWirePerSegment
                                   ? tcp_sent + tcp_retransmits * kTcpPayloadPerSegment
                                   : udp_sent;
        EXPECT_LE(payload, written * 1.001);
    }

    // The run wrote its report; it renders in a real browser, every chart with data.
    EXPECT_TRUE(std::filesystem::exists(run_dir_ + "/report.html"));
    const CommandResult browser = run_command(
        {"python3", NP_SOURCE_DIR "/tests/browser/report_renders.py", NP_EXPLAIN_BIN, run_dir_});
    if (browser.exit_status != 77) {  // 77: no chromium on this machine
        EXPECT_EQ(browser.exit_status, 0) << browser.out << browser.err;
    }
    expect_nodes_clean();
}

// ------------------------------------------------------------------ 2. wrong port

TEST_F(RunTest, WrongPortIsNamedInPreflightAndNothingIsLeftConfigured) {
    // The port's addresses as the run could change them: a link-local address of a testbed
    // just made may still finish duplicate address detection meanwhile ("tentative" goes), which
    // is the kernel's doing, not the run's.
    const auto addresses = [](const std::string& node) {
        json j = json::parse(ns_exec(node, "ip -j addr show dev " + kWrongIface), nullptr, false);
        if (j.is_array())
            for (auto& link : j)
                for (auto& a : link["addr_info"]) a.erase("tentative");
        return j.dump();
    };
    std::string before[2];
    const std::string nodes[2] = {server(), client()};
    for (int i = 0; i < 2; ++i) before[i] = addresses(nodes[i]);
    const CommandResult r = np_explain(run_args({"--iface", kWrongIface}));
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object());
    const json* problem = finding(c, "DIFFERENT_SEGMENT");
    if (!problem) problem = finding(c, "NO_CARRIER");
    ASSERT_NE(problem, nullptr) << codes(c);
    EXPECT_EQ(problem->value("severity", ""), "error");
    EXPECT_NE(problem->dump().find(kWrongIface), std::string::npos) << problem->dump(2);
    EXPECT_NE(r.out.find(problem->value("code", "")), std::string::npos) << r.out;
    // Stopped before measuring.
    EXPECT_TRUE(c["tcp_mbps"].is_null());
    EXPECT_TRUE(c["udp_mbps"].is_null());
    EXPECT_TRUE(c["traces"].empty());
    for (int i = 0; i < 2; ++i) {
        SCOPED_TRACE(nodes[i]);
        const std::string after = addresses(nodes[i]);
        EXPECT_EQ(after.find(testbed().data_net()), std::string::npos) << after;
        EXPECT_EQ(after, before[i]);
    }
    expect_nodes_clean();
}

// A node that booted the PXE stage image (no image marker): said, with the omf fix, and
// nothing is touched on either node.
TEST_F(RunTest, ImageNotBootedIsNamedWithTheFixAndNothingIsConfigured) {
    const std::string missing_marker = run_dir_ + "/no-such-marker";
    const std::string file = run_dir_ + "/params.yml";
    std::ofstream(file) << read_file(params()) << "np_image_marker: " << missing_marker << "\n";
    const std::vector<std::string> args = {"run",          server(),     client(),
                                           "--ssh-config", ssh_config(), "--params",
                                           file,           "--run-dir",  run_dir_};
    const CommandResult r = np_explain(args);
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object());
    size_t not_booted = 0;
    for (const auto& f : c["explain"]["findings"]) {
        if (f.value("code", "") != "IMAGE_NOT_BOOTED") continue;
        ++not_booted;
        EXPECT_EQ(f.value("severity", ""), "error");
        EXPECT_NE(f.value("detail", "").find(missing_marker), std::string::npos) << f.dump(2);
        EXPECT_NE(f.value("next_step", "").find("omf tell offh"), std::string::npos) << f.dump(2);
    }
    EXPECT_EQ(not_booted, 2u) << "one per node: " << codes(c);
    EXPECT_TRUE(c["traces"].empty());
    expect_nodes_clean();
}

// A data iface the nodes do not have: said, with the ports they do have.
TEST_F(RunTest, MissingDataIfaceIsNamedWithThePortsTheNodeHas) {
    const CommandResult r = np_explain(run_args({"--iface", "eth9"}));
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object());
    const json* missing = finding(c, "DATA_IFACE_MISSING");
    ASSERT_NE(missing, nullptr) << codes(c);
    EXPECT_EQ(missing->value("severity", ""), "error");
    const std::string ifaces = missing->at("evidence").value("ifaces", "");
    EXPECT_NE(ifaces.find(kDataIface), std::string::npos) << missing->dump(2);
    EXPECT_NE(ifaces.find(kWrongIface), std::string::npos) << missing->dump(2);
    expect_nodes_clean();
}

// ------------------------------------------------------------------ 3. wrong interface

// The data ifaces configured (as an operator might have left them), but each node reaches the
// other's data address over the control network: /32 routes on ctl0, the server answering
// from its data address so iperf3's UDP replies match. iperf3's traffic never crosses
// enp0s25, while ping (-I enp0s25) and the preflight still use the data port.
class ControlNetworkRoutes {
  public:
    ControlNetworkRoutes() {
        ok_ = run(server(), "ip addr add " + a_ + "/24 dev " + kDataIface) &&
              run(client(), "ip addr add " + b_ + "/24 dev " + kDataIface) &&
              run(server(), "ip route add " + b_ctl_ + "/32 dev ctl0 src " + a_) &&
              run(client(), "ip route add " + a_ + "/32 dev ctl0");
    }
    ~ControlNetworkRoutes() {
        run(client(), "ip route del " + a_ + "/32 dev ctl0");
        run(server(), "ip route del " + b_ctl_ + "/32 dev ctl0");
        run(client(), "ip addr del " + b_ + "/24 dev " + kDataIface);
        run(server(), "ip addr del " + a_ + "/24 dev " + kDataIface);
    }
    bool ok() const { return ok_; }

  private:
    static bool run(const std::string& node, const std::string& command) {
        return sh("ip netns exec " + node + " " + command).status == 0;
    }
    const std::string a_ = testbed().data_ip(1), b_ = testbed().data_ip(2);
    const std::string b_ctl_ = testbed().ctl_ip(2);
    bool ok_ = false;
};

TEST_F(RunTest, TrafficRoutedOverTheControlNetworkIsAWrongInterfaceError) {
    {
        ControlNetworkRoutes routes;
        ASSERT_TRUE(routes.ok());
        const CommandResult r = np_explain(
            run_args({"--tcp-duration", "2", "--udp-duration", "2", "--ping-count", "2"}));
        EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
        const json c = contract();
        ASSERT_TRUE(c.is_object());
        std::vector<const json*> wrong;
        for (const auto& f : c["explain"]["findings"])
            if (f.value("code", "") == "WRONG_INTERFACE") wrong.push_back(&f);
        ASSERT_EQ(wrong.size(), 2u) << "one per test (TCP, UDP): " << codes(c);
        for (const json* w : wrong) {
            SCOPED_TRACE(w->value("title", ""));
            EXPECT_EQ(w->value("severity", ""), "error");
            EXPECT_EQ(w->at("evidence").value("data_nic", ""), kDataIface) << w->dump(2);
            // From the probe's counts: the tool moved megabytes, the data NIC almost nothing.
            const double nic = w->at("evidence").value("data_nic_flow_bytes", -1.0);
            const double tool = w->at("evidence").value("tool_bytes", -1.0);
            EXPECT_GT(tool, 1e6) << w->dump(2);
            EXPECT_GE(nic, 0);
            EXPECT_LT(nic, 0.01 * tool) << w->dump(2);
        }
        EXPECT_EQ(finding(c, "RUN_INCOMPLETE"), nullptr) << codes(c);
        EXPECT_EQ(finding(c, "TOOL_ERROR"), nullptr) << codes(c);
        // The addresses were there before the run: it leaves them.
        EXPECT_NE(ns_exec(client(), "ip -o addr show dev " + kDataIface)
                      .find(testbed().data_ip(2) + "/24"),
                  std::string::npos);
    }
    expect_nodes_clean();
}

// ------------------------------------------------------------------ 4. offered load

// On the 100M profile the sender's tbf never drops: the socket's send buffer fills first and
// blocks the sender, so twice the ceiling is held back at the sender, not lost.
// (Loss located at the receiver: test_run_local.cpp, profile 1G.)
TEST_F(RunTest, UdpAtTwiceTheCeilingIsOfferedAboveCeilingAndHeldBackAtTheSender) {
    const CommandResult r =
        np_explain(run_args({"--tcp-duration", "1", "--udp-duration", "4", "--ping-count", "1",
                             "--udp-bandwidth", "200M", "--json"}));
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object());
    // --json prints the contract and nothing else.
    EXPECT_EQ(json::parse(r.out, nullptr, false), c) << r.out;
    const json* offered = finding(c, "OFFERED_ABOVE_CEILING");
    ASSERT_NE(offered, nullptr) << codes(c);
    EXPECT_EQ(offered->at("evidence").value("offered_mbps", 0.0), 200.0) << offered->dump(2);
    EXPECT_NE(offered->value("detail", "").find("held back by its own queue ("), std::string::npos)
        << offered->dump(2);
    // Nothing lost on the path: the sender's own queue held the excess back. The receiver's
    // socket can still overflow where its reader was kept from a CPU: by the hypervisor (the
    // run's own CPU_STOLEN; seen: 2.2 % with 120 ms of one CPU stolen, as the fault suite
    // accepts it) or, briefly, by the suite's other tests on the same 2 CPUs (seen: 0.03 %).
    // Either loss must be the one the probes placed at that socket; without stolen time, a
    // small one.
    const bool udp_stolen = stolen_for(c, "iperf3 UDP") != nullptr;
    const double loss_pct = num(c, "udp_loss_pct");
    if (loss_pct > 0) {
        EXPECT_NE(finding(c, "LOSS_AT_RECEIVER_SOCKET"), nullptr) << codes(c);
        if (!udp_stolen) {
            EXPECT_LE(loss_pct, 0.5);
        }
    } else {
        EXPECT_EQ(finding(c, "UDP_LOSS"), nullptr) << codes(c);
        EXPECT_EQ(finding(c, "LOSS_AT_RECEIVER_SOCKET"), nullptr) << codes(c);
    }
    for (const char* loss : {"LOSS_AT_SENDER_QDISC", "LOSS_ON_WIRE", "LOSS_AT_RECEIVER_NIC"})
        EXPECT_EQ(finding(c, loss), nullptr) << codes(c);
    // Widened only by a pause the run's own explanation set beside stolen CPU time (seen in the
    // suite: 93.27 Mbit/s, 98.5 %, with 100-110 ms of each CPU stolen and 100 ms sent nothing),
    // and by the loss just allowed.
    EXPECT_GE(num(c, "udp_mbps"),
              kUdpCeilingMbps * (0.99 - stolen_pause_share(c, "iperf3 UDP", 4) - loss_pct / 100));
    expect_nodes_clean();
}

// ------------------------------------------------------------------ iperf3's own options

// The ledger of a test by its label, and the count at one of its points.
const json* ledger_of(const json& c, const std::string& test) {
    for (const auto& l : c["explain"]["ledgers"])
        if (l.value("test", "") == test) return &l;
    return nullptr;
}
int64_t point(const json& ledger, std::string_view label_start) {
    for (const auto& p : ledger["points"])
        if (p.value("label", "").rfind(label_start, 0) == 0)
            return p["count"].is_null() ? -1 : p["count"].get<int64_t>();
    return -1;
}

// What iperf3 users type, through run's flags: two streams both ways at once, a 1200-byte
// datagram, a 512 KiB socket buffer, reno, zero-copy. iperf3 ran them as typed (its own JSON says
// so), and the probes hold a ledger per direction, each from its own sender, whose ends are
// iperf3's own counts.
TEST_F(RunTest, IperfsOwnOptionsRunAsTypedWithALedgerPerDirection) {
    const CommandResult r = np_explain(run_args(
        {"--tcp-duration", "2", "--udp-duration", "2", "--ping-count", "1", "--udp-bandwidth",
         "20M", "-P", "2", "--bidir", "-l", "1200", "-w", "512K", "-C", "reno", "-Z"}));
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = contract();
    const json tcp_out = read_json(run_dir_ + "/np-explain_tcp.json");
    const json udp_out = read_json(run_dir_ + "/np-explain_udp.json");
    EXPECT_EQ(tcp_out["start"]["test_start"]["num_streams"], 2);
    EXPECT_EQ(tcp_out["start"]["sock_bufsize"], 512 * 1024);
    EXPECT_EQ(tcp_out["end"]["sender_tcp_congestion"], "reno");
    EXPECT_EQ(udp_out["start"]["test_start"]["blksize"], 1200);
    ASSERT_TRUE(udp_out["end"].contains("sum_sent_bidir_reverse")) << "not --bidir";

    // The UDP tests' ceiling follows the datagram: 1200 bytes of payload in 1266 on the wire.
    for (const auto& v : c["explain"]["verdicts"]) {
        if (v.value("test", "").starts_with("iperf3 UDP")) {
            EXPECT_NEAR(v.value("ceiling_mbps", 0.0), 100 * 1200.0 / 1266, 0.01) << v.dump();
        }
    }
    struct Direction {
        std::string test;
        std::string sender, receiver;
        const char* sent_key;
        const char* received_key;
    };
    const Direction directions[] = {
        {"iperf3 UDP --bidir -P 2", client(), server(), "sum_sent", "sum_received"},
        {"iperf3 UDP --bidir reverse -P 2", server(), client(), "sum_sent_bidir_reverse",
         "sum_received_bidir_reverse"}};
    for (const auto& d : directions) {
        SCOPED_TRACE(d.test);
        const json* l = ledger_of(c, d.test);
        ASSERT_NE(l, nullptr) << codes(c);
        EXPECT_EQ((*l)["sender_node"], d.sender);
        EXPECT_EQ((*l)["receiver_node"], d.receiver);
        const json& sent = udp_out["end"][d.sent_key];
        const json& received = udp_out["end"][d.received_key];
        // The ledger's ends are iperf3's counts; in between, the probes saw each datagram
        // (and iperf3's one-per-stream start datagrams) leave and arrive.
        EXPECT_EQ(point(*l, "sent by the application"), sent["packets"].get<int64_t>());
        EXPECT_EQ(point(*l, "delivered to the application"),
                  received["packets"].get<int64_t>() - received["lost_packets"].get<int64_t>());
        const int64_t left = point(*l, "left the sender's NIC");
        EXPECT_GE(left, sent["packets"].get<int64_t>());
        EXPECT_LE(left, sent["packets"].get<int64_t>() + 8);
        EXPECT_EQ(point(*l, "arrived"), left);
        // And each of the direction's two streams has its own ledger, named by its client port,
        // whose ends sum to the direction's. (The receiving end's count of each stream is in
        // the server's output only: a client that received prints its sum alone.)
        ASSERT_EQ((*l)["streams"].size(), 2u);
        int64_t stream_sent = 0, stream_delivered = 0;
        for (const auto& st : (*l)["streams"]) {
            bool connected = false;
            for (const auto& conn : udp_out["start"]["connected"])
                connected = connected || conn["local_port"] == st["stream_port"];
            EXPECT_TRUE(connected) << st["stream_port"];
            stream_sent += point(st, "sent by the application");
            stream_delivered += point(st, "delivered to the application");
            if (d.sender != client()) {
                EXPECT_EQ(point(st, "delivered to the application"), -1) << "not measured";
            }
        }
        EXPECT_EQ(stream_sent, point(*l, "sent by the application"));
        if (d.sender == client()) {
            EXPECT_EQ(stream_delivered, point(*l, "delivered to the application"));
        }
    }
    for (const auto& [test, sender] :
         {std::pair{std::string("iperf3 TCP --bidir -P 2"), client()},
          std::pair{std::string("iperf3 TCP --bidir reverse -P 2"), server()}}) {
        const json* l = ledger_of(c, test);
        ASSERT_NE(l, nullptr) << test << " " << codes(c);
        EXPECT_EQ((*l)["sender_node"], sender) << test;
        EXPECT_GT(point(*l, "arrived"), 0) << test;
        ASSERT_EQ((*l)["streams"].size(), 2u) << test;
        for (const auto& st : (*l)["streams"]) EXPECT_GT(point(st, "arrived"), 0) << test;
    }
    for (const auto& f : c["explain"]["findings"])
        EXPECT_NE(f.value("severity", ""), "error") << f.dump(2);
    expect_nodes_clean();
}

// --fq-rate caps each stream's socket, which TCP's own account names as the test's limit, not
// the path. (iperf3 3.12 does not hand --fq-rate to the server: with -R nothing is capped, and
// the explanation, which reads the cap from the sender's socket, says line-rate bound then.)
TEST_F(RunTest, ATestAtItsPacingCapIsNamedAsAskedFor) {
    const CommandResult r =
        np_explain(run_args({"--tcp-duration", "3", "--udp-duration", "1", "--ping-count", "1",
                             "--udp-bandwidth", "10M", "-P", "2", "--fq-rate", "30M"}));
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = contract();
    const json* paced = finding(c, "PACING_LIMITED");
    ASSERT_NE(paced, nullptr) << codes(c);
    EXPECT_EQ(paced->value("test", ""), "iperf3 TCP -P 2");
    EXPECT_EQ(paced->at("evidence").value(client() + ".tcp_max_pacing_rate_mbps", 0.0), 30.0)
        << paced->dump(2);
    EXPECT_EQ(paced->at("evidence").value("streams", 0), 2);
    EXPECT_LE(num(c, "tcp_mbps"), 60.5);
    EXPECT_EQ(finding(c, "LIMIT_NOT_LOCATED"), nullptr) << codes(c);
    expect_nodes_clean();
}

// Jumbo frames for the run (--mtu 9000): set on both nodes' data port while it runs, the model
// following it (TCP's ceiling 99.00 Mbit/s: 8948 of every 9038 bytes), set back after.
TEST_F(RunTest, TheRunsMtuIsSetOnBothNodesAndSetBack) {
    BackgroundRun run(run_args(
        {"--tcp-duration", "3", "--udp-duration", "1", "--ping-count", "1", "--mtu", "9000"}));
    const auto mtu = [](const std::string& node) {
        return ns_exec(node, "cat /sys/class/net/" + kDataIface + "/mtu");
    };
    ASSERT_TRUE(wait_for_tcp_phase(run, seconds(60)));
    EXPECT_EQ(mtu(server()), "9000\n");
    EXPECT_EQ(mtu(client()), "9000\n");
    const CommandResult r = run.wait(seconds(60));
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = contract();
    for (const auto& v : c["explain"]["verdicts"]) {
        if (v.value("test", "") == "iperf3 TCP") {
            EXPECT_NEAR(v.value("ceiling_mbps", 0.0), 100 * 8948.0 / 9038, 0.01) << v.dump();
        }
    }
    EXPECT_EQ(mtu(server()), "1500\n");
    EXPECT_EQ(mtu(client()), "1500\n");
    expect_nodes_clean();
}

// --repeat 2: the tests twice, the second time in phases of their own, and each test's
// repetitions held side by side from each one's own explanation.
TEST_F(RunTest, RepeatedTestsAreEachExplainedAndHeldSideBySide) {
    const CommandResult r = np_explain(run_args(
        {"--tcp-duration", "1", "--udp-duration", "1", "--ping-count", "1", "--repeat", "2"}));
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = contract();
    for (const char* test : {"iperf3 TCP", "iperf3 UDP"}) {
        const json* f = nullptr;
        for (const auto& x : c["explain"]["findings"])
            if (x.value("test", "") == test &&
                (x.value("code", "") == "REPEAT_SPREAD" || x.value("code", "") == "VERDICT_FLIPS"))
                f = &x;
        ASSERT_NE(f, nullptr) << test << " " << codes(c);
        const json& runs = f->at("evidence").at("runs_mbps");
        ASSERT_EQ(runs.size(), 2u) << f->dump(2);
        EXPECT_TRUE(runs[0].is_number() && runs[1].is_number()) << f->dump(2);
        // The first repetition's is the contract's figure.
        EXPECT_NEAR(runs[0].get<double>(),
                    num(c, std::string(test) == "iperf3 TCP" ? "tcp_mbps" : "udp_mbps"), 0.01);
    }
    for (const char* file : {"np-explain_tcp-2.json", "np-explain_udp-2.json"})
        EXPECT_TRUE(std::filesystem::exists(run_dir_ + "/" + file)) << file;
    const json trace = read_json(run_dir_ + "/" + c["traces"][0].get<std::string>());
    for (const char* name : {"tcp-2", "udp-2"}) EXPECT_NE(phase(trace, name), nullptr) << name;
    expect_nodes_clean();
}

// -C with a congestion control neither node has stops in preflight: no test runs, exit 1, and
// nothing is left configured.
TEST_F(RunTest, ACongestionControlTheNodesLackIsRefusedBeforeAnyTest) {
    const CommandResult r = np_explain(run_args({"-C", "nosuchcc", "--ping-count", "1"}));
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    const json c = contract();
    const json* f = finding(c, "CONGESTION_CONTROL_MISSING");
    ASSERT_NE(f, nullptr) << codes(c);
    EXPECT_NE(f->value("detail", "").find("-C nosuchcc"), std::string::npos) << f->dump(2);
    EXPECT_FALSE(std::filesystem::exists(run_dir_ + "/np-explain_tcp.json"));
    expect_nodes_clean();
}

// run --find-udp-ceiling on the 100M link: the model's ceiling is carried without loss (the
// sender's queue holds back what the shaper cannot take), so the first step finds it.
// At the ceiling the link has no room for a sender to catch up: a CI run's first step sent
// 91.01 of 95.64 Mbit/s, and the search bisected down to 94.89. Only where that step's own
// findings set the hypervisor's steal beside it (CPU_STOLEN) may the search take more steps.
TEST_F(RunTest, TheUdpCeilingSearchFindsTheModelsCeilingOnAShapedLink) {
    const CommandResult r = np_explain(run_args(
        {"--tcp-duration", "1", "--udp-duration", "1", "--ping-count", "1", "--find-udp-ceiling"}));
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = contract();
    const json* found = finding(c, "UDP_CEILING_FOUND");
    ASSERT_NE(found, nullptr) << codes(c);
    const json& e = found->at("evidence");
    const json step_codes = e.value("step_codes", json::array());
    const bool stolen =
        e.value("stopped_at", "") == "sender" &&
        std::find(step_codes.begin(), step_codes.end(), "CPU_STOLEN") != step_codes.end();
    if (stolen) {
        // The steal explains the sender's count, not loss: every step was carried within the
        // threshold (the sender's queue holds back what the shaper cannot take), and the step
        // the search stopped at gives the steal's next step.
        std::cout << found->value("detail", "") << "\n";
        for (const auto& loss : e.at("step_loss_pct"))
            EXPECT_LE(loss.get<double>(), e.value("max_loss_pct", 0.0)) << found->dump(2);
        EXPECT_NE(found->value("next_step", "").find("virtual CPUs are not shared"),
                  std::string::npos)
            << found->dump(2);
    } else {
        EXPECT_NEAR(e.value("found_mbps", 0.0), kUdpCeilingMbps, kUdpCeilingMbps * 0.01)
            << found->dump(2);
        // The receiving iperf3 can fall behind at the model's ceiling beside the suite's other
        // tests (seen: 122 datagrams dropped SOCKET_RCVBUFF at the first step, 0.75 %): the
        // search then bisects to the highest load it carried, still within 1 % of the model
        // (94.89 of 95.64 Mbit/s, 8 steps). Only that stop, placed at the receiver's socket by
        // its kernel's own count, may take more than the one step at the ceiling.
        if (e.value("stopped_at", "") == "receiver_socket")
            EXPECT_LE(e.value("steps", 0), 8) << found->dump(2);
        else
            EXPECT_EQ(e.value("steps", 0), 1) << found->dump(2);
    }
    EXPECT_TRUE(std::filesystem::exists(run_dir_ + "/np-explain_udp-ceiling-1.json"));
    expect_nodes_clean();
}

// A receiver whose socket buffer (-w 4K) cannot hold what arrives at high loads: the search
// bisects down, and the ledger of the lowest load that lost names the receiving socket.
TEST_F(RunTest, TheUdpCeilingSearchNamesTheStageThatStoppedIt) {
    const CommandResult r =
        np_explain(run_args({"--tcp-duration", "1", "--udp-duration", "1", "--ping-count", "1",
                             "--find-udp-ceiling", "-w", "4K"}));
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = contract();
    const json* f = finding(c, "UDP_CEILING_FOUND");
    if (!f) f = finding(c, "UDP_CEILING_NOT_FOUND");
    ASSERT_NE(f, nullptr) << codes(c);
    std::cout << f->value("title", "") << "\n" << f->value("detail", "") << "\n";
    const json& e = f->at("evidence");
    EXPECT_GT(e.value("steps", 0), 1);
    EXPECT_LE(e.value("steps", 0), 8);
    EXPECT_LT(e.value("found_mbps", 0.0), kUdpCeilingMbps);
    EXPECT_EQ(e.value("stopped_at", ""), "receiver_socket") << f->dump(2);
    expect_nodes_clean();
}

// A node whose root cannot load BPF programs (its sshd restarted with CAP_BPF, CAP_PERFMON and
// CAP_SYS_ADMIN out of its bounding set, as an image may forbid them) costs no number: every test
// is measured and explained, that node's probe counts at the kernel-counters tier and the
// explanation says what that cannot tell, the other node's at full; nothing false is concluded
// from what the lower tier did not count. --require-tier full stops before any test, exit 3.
TEST_F(RunTest, ANodeThatCannotLoadBpfIsMeasuredAtItsTierAndEveryTestStillRuns) {
    const auto node_bpf = [](const std::string& on_off) {
        return run_command({"bash", NP_SOURCE_DIR "/scripts/testbed.sh", "node-bpf", "--state",
                            testbed_state_dir(), "--node", server(), "--bpf", on_off});
    };
    struct Restore {
        std::function<CommandResult(const std::string&)> set;
        ~Restore() { EXPECT_EQ(set("on").exit_status, 0); }
    };
    ASSERT_EQ(node_bpf("off").exit_status, 0);
    const Restore restore{node_bpf};

    const CommandResult r =
        np_explain(run_args({"--tcp-duration", "2", "--udp-duration", "2", "--ping-count", "2"}));
    std::cout << r.out << r.err;
    EXPECT_TRUE(r.exit_status == 0 || r.exit_status == 1) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object());
    EXPECT_TRUE(c["ping_rtt_ms"].is_number()) << c.dump(2);
    // A 2-s TCP test can end below the ceiling (this test is not held to a rate: other testbed
    // tests run beside it). One that met a loss in slow start (seen: 86.4 Mbit/s, 3 retransmits)
    // is explained from its retransmits; one slowed without a retransmit (seen: 85.50 Mbit/s on a
    // busy machine) has no evidence of a cause at all. Either way the limit is said to be not
    // located, because the receiver's tier counts no drops; it is never left unexplained and never
    // pinned on a cause by elimination.
    if (num(c, "tcp_mbps") < kTcpCeilingMbps * 0.95) {
        const json* below = finding(c, "BELOW_CEILING");
        const json* unlocated = finding(c, "BELOW_CEILING_NEEDS_TRACE");
        ASSERT_TRUE(below || unlocated) << codes(c);
        const std::string detail = (below ? below : unlocated)->value("detail", "");
        if (below)
            EXPECT_NE(detail.find("retransmits"), std::string::npos) << below->dump(2);
        else
            EXPECT_NE(detail.find("no retransmits"), std::string::npos) << unlocated->dump(2);
        EXPECT_NE(detail.find("count no drops"), std::string::npos) << detail;
        EXPECT_NE(detail.find(server() + " at kernel-counters"), std::string::npos) << detail;
        for (const char* blamed : {"HOST_LIMITED", "LINK_SHARED", "REVERSE_PATH_LIMITED",
                                   "SENDER_LIMITED", "RECEIVE_WINDOW_LIMITED"})
            EXPECT_EQ(finding(c, blamed), nullptr) << codes(c);
    }
    EXPECT_GE(num(c, "udp_mbps"), kUdpCeilingMbps * 0.95);
    const json* tier = finding(c, "PROBE_TIER");
    ASSERT_NE(tier, nullptr) << codes(c);
    EXPECT_NE(tier->value("title", "").find(server() + "'s probe counted at the kernel-counters"),
              std::string::npos)
        << tier->dump(2);
    EXPECT_NE(tier->value("detail", "").find("CAP_BPF"), std::string::npos) << tier->dump(2);
    EXPECT_EQ(finding(c, "PROBE_NOT_STARTED"), nullptr) << codes(c);
    for (const char* false_cause :
         {"WRONG_INTERFACE", "LOSS_ON_WIRE", "LINK_SHARED", "TRACE_MISSING", "RUN_INCOMPLETE"})
        EXPECT_EQ(finding(c, false_cause), nullptr) << codes(c);
    // The receiving iperf3 can fall behind beside the tests on the other slots (seen: 14 of
    // 16,434 datagrams): that loss is real, and it may be named — at the server's socket, exactly
    // from what its kernel counted (UdpRcvbufErrors, which this tier still reads).
    if (finding(c, "UDP_LOSS")) {
        const json server_trace = read_json(run_dir_ + "/np-explain_trace_" + server() + ".json");
        int64_t rcvbuf_errors = 0;
        for (const auto& p : server_trace["phases"])
            if (p.value("name", "") == "udp")
                rcvbuf_errors = p["kernel_counters"]["nstat"].value("UdpRcvbufErrors", int64_t{0});
        const json* socket = finding(c, "LOSS_AT_RECEIVER_SOCKET");
        ASSERT_NE(socket, nullptr) << codes(c);
        // The ledger takes from that node-wide count as many as the datagrams that went missing.
        const int64_t at_socket =
            socket->value("evidence", json::object()).value("lost_datagrams", int64_t{-1});
        EXPECT_GT(at_socket, 0) << socket->dump(2);
        EXPECT_LE(at_socket, rcvbuf_errors) << socket->dump(2);
    }
    ASSERT_EQ(c["traces"].size(), 2u) << c.dump(2);
    for (const auto& name : c["traces"]) {
        const json t = read_json(run_dir_ + "/" + name.get<std::string>());
        EXPECT_EQ(t.value("tier", ""), t.value("node", "") == server() ? "kernel-counters" : "full")
            << name;
    }
    expect_nodes_clean();

    const CommandResult strict =
        np_explain(run_args({"--tcp-duration", "1", "--udp-duration", "1", "--ping-count", "1",
                             "--require-tier", "full"}));
    EXPECT_EQ(strict.exit_status, 3) << strict.out << strict.err;
    EXPECT_NE(strict.err.find("--require-tier full: this node allows only kernel-counters"),
              std::string::npos)
        << strict.err;
    expect_nodes_clean();
}

// The data iface is left as the run found it: down stays down (and unaddressed).
// (With --mode: the run dir's files are named after it, as the tutorial's contracts are.)
TEST_F(RunTest, ADataIfaceThatWasDownIsLeftDown) {
    struct UpAtEnd {  // the testbed's state, whatever the test's outcome
        ~UpAtEnd() { ns_exec(client(), "ip link set dev " + kDataIface + " up"); }
    } up_at_end;
    ns_exec(client(), "ip link set dev " + kDataIface + " down");
    const CommandResult r = np_explain(run_args(
        {"--tcp-duration", "1", "--udp-duration", "1", "--ping-count", "1", "--mode", "row-1"}));
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = read_json(run_dir_ + "/np_contract_row-1.json");
    ASSERT_TRUE(c.is_object());
    EXPECT_EQ(c["mode"], "row-1");
    for (const std::string& f : {std::string("row-1_tcp.json"), std::string("row-1_udp.json"),
                                 std::string("row-1_ping.txt"), "row-1_trace_" + server() + ".json",
                                 "row-1_trace_" + client() + ".json"})
        EXPECT_TRUE(std::filesystem::exists(run_dir_ + "/" + f)) << f;
    const json link = json::parse(ns_exec(client(), "ip -j link show dev " + kDataIface));
    ASSERT_TRUE(link.is_array() && !link.empty());
    for (const auto& flag : link[0]["flags"]) EXPECT_NE(flag, "UP") << link.dump();
    const json server_link = json::parse(ns_exec(server(), "ip -j link show dev " + kDataIface));
    bool server_up = false;
    for (const auto& flag : server_link[0]["flags"]) server_up = server_up || flag == "UP";
    EXPECT_TRUE(server_up) << "node A's port was up before the run";
    expect_nodes_clean();
}

// On a terminal the run shows its phase, the time left and the live wire rate from the probe.
TEST_F(RunTest, ProgressOnATerminalShowsThePhaseAndTheLiveRate) {
    std::string command = NP_EXPLAIN_BIN;
    for (const auto& a :
         run_args({"--tcp-duration", "2", "--udp-duration", "1", "--ping-count", "1"}))
        command += " " + shell_quote(a);
    // script(1) gives the run a pseudo-terminal as stdout.
    const Shell r = sh("script -qec " + shell_quote(command) + " /dev/null");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("[tcp] "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" s left, "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Mbit/s on the wire"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[udp] "), std::string::npos) << r.out;
    expect_nodes_clean();
}

// ------------------------------------------------------------------ 5. faults

// Runs with a TCP phase long enough to break something in it.
std::vector<std::string> long_tcp() {
    return {"--tcp-duration", "8", "--udp-duration", "2", "--ping-count", "2"};
}

// A second run on the same nodes while the first is in its TCP test, on another port (what the
// "port in use" message advises), and a teardown meanwhile: each is refused with the first
// run's name, and changes nothing — the first completes as if alone, and its own teardown
// leaves both nodes clean.
TEST_F(RunTest, ASecondRunOrTeardownOnBusyNodesIsRefusedAndTheFirstCompletesUndisturbed) {
    BackgroundRun first(run_args(long_tcp()));
    ASSERT_TRUE(wait_for_tcp_phase(first, seconds(30)));
    ASSERT_TRUE(first.running());
    const std::string holder = "(np-explain pid " + std::to_string(first.pid()) + ")";
    const std::string second_dir = run_dir_ + "/second";
    std::vector<std::string> second_args = run_args(long_tcp());
    second_args.at(8) = second_dir;  // --run-dir
    second_args.insert(second_args.end(), {"--port", "5202"});
    const CommandResult second = np_explain(second_args);
    EXPECT_EQ(second.exit_status, 3) << second.out << second.err;
    const json c2 = read_json(second_dir + "/np_contract_np-explain.json");
    ASSERT_TRUE(c2.is_object()) << second.out << second.err;
    // The nodes are locked one after the other in the order of their names: the first one
    // (node A's here) is refused, naming the first run, and the other is not asked.
    const std::string first_node = std::min(server(), client());
    const json* busy = finding(c2, "NODE_IN_USE");
    ASSERT_NE(busy, nullptr) << codes(c2);
    EXPECT_TRUE(busy->value("title", "").starts_with(first_node)) << busy->dump(2);
    EXPECT_NE(busy->value("detail", "").find(holder), std::string::npos) << busy->dump(2);
    // Refused before its preflight: nothing measured, nothing changed.
    EXPECT_TRUE(c2["ping_rtt_ms"].is_null()) << c2.dump(2);
    // teardown with the first run's own arguments undoes nothing while it runs.
    std::vector<std::string> td_args = run_args(long_tcp());
    td_args.front() = "teardown";
    const CommandResult td = np_explain(td_args);
    EXPECT_EQ(td.exit_status, 3) << td.out << td.err;
    EXPECT_NE(td.out.find(server() + ": nothing undone"), std::string::npos) << td.out;
    EXPECT_NE(td.out.find(holder), std::string::npos) << td.out;
    EXPECT_FALSE(run_state_files(server()).empty()) << "teardown undid the live run's steps";
    // The first run, undisturbed: every test measured, nothing lost or misplaced.
    const CommandResult r = first.wait(seconds(90));
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object()) << r.out << r.err;
    EXPECT_EQ(finding(c, "RUN_INCOMPLETE"), nullptr) << codes(c);
    EXPECT_EQ(finding(c, "WRONG_INTERFACE"), nullptr) << codes(c);
    EXPECT_EQ(finding(c, "LOSS_ON_WIRE"), nullptr) << codes(c);
    EXPECT_EQ(finding(c, "LOSS_UNATTRIBUTED"), nullptr) << codes(c);
    EXPECT_EQ(c["traces"].size(), 2u) << c.dump(2);
    expect_nodes_clean();
}

// node B's iperf3 prints without end when it is the client: the run stops it at the bound, the
// TCP test is a tool error naming the command and what it exceeded, nothing of the flood is
// saved, the console's memory stays flat, and both nodes are left clean.
TEST_F(RunTest, AClientThatPrintsWithoutEndIsStoppedAtTheBoundAsAToolError) {
    const Iperf3Replaced flood(state_dir, client(), kFloodingIperf3);
    ASSERT_TRUE(flood.ok());
    const CommandResult r = np_explain(run_args({"--tcp-duration", "2", "--ping-count", "1"}));
    rusage children{};
    getrusage(RUSAGE_CHILDREN, &children);
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object()) << r.out << r.err;
    const json* f = finding(c, "TOOL_ERROR");
    ASSERT_NE(f, nullptr) << codes(c);
    EXPECT_NE(f->value("detail", "").find("printed more than 16 MiB on stdout: stopped"),
              std::string::npos)
        << f->dump(2);
    EXPECT_NE(f->value("detail", "").find("iperf3 -c"), std::string::npos) << f->dump(2);
    EXPECT_NE(finding(c, "RUN_INCOMPLETE"), nullptr) << codes(c);
    EXPECT_FALSE(std::filesystem::exists(run_dir_ + "/np-explain_tcp.json"));
    // Peak memory of np-explain (and any other child of this test): the bound, not the flood
    // (the console reached 6.2 GB on a node printing 2 GB before outputs were bounded).
    std::cout << "np-explain's peak RSS: " << children.ru_maxrss / 1024 << " MiB\n";
    EXPECT_LT(children.ru_maxrss / 1024, 400) << "MiB at peak";
    EXPECT_EQ(join(programs(client(), "yes")), "");
    expect_nodes_clean();
}

// node B's iperf3 prints its whole JSON result and then dies by SIGSEGV; asked for UDP, it runs
// a TCP test instead. Neither output is taken as its test's result: each is a tool error that
// says why, and the run exits 1.
TEST_F(RunTest, AToolThatDiedOrRanAnotherTestIsAToolErrorWhateverItPrinted) {
    const Iperf3Replaced broken(state_dir, client(),
                                "#!/bin/sh\n"
                                "case \" $* \" in\n"
                                "*\" -u \"*) ip=$(echo \"$*\" | sed 's/.*-c \\([^ ]*\\).*/\\1/')\n"
                                "  port=$(echo \"$*\" | sed 's/.*-p \\([^ ]*\\).*/\\1/')\n"
                                "  exec REAL -c \"$ip\" -p \"$port\" -t 1 -J ;;\n"
                                "*\" -c \"*) REAL \"$@\"; kill -SEGV $$ ;;\n"
                                "esac\n"
                                "exec REAL \"$@\"\n");
    ASSERT_TRUE(broken.ok());
    const CommandResult r =
        np_explain(run_args({"--tcp-duration", "1", "--udp-duration", "1", "--ping-count", "1"}));
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object()) << r.out << r.err;
    std::vector<std::string> titles;
    for (const auto& f : c["explain"]["findings"])
        if (f.value("code", "") == "TOOL_ERROR") titles.push_back(f.value("title", ""));
    EXPECT_EQ(join(titles),
              join({"iperf3 was killed by SIGSEGV: its output is not taken as a result",
                    "the UDP test's output is a TCP result: its output is not taken as a result"}))
        << codes(c);
    // The tests' raw outputs are kept; no throughput is reported from them.
    EXPECT_TRUE(std::filesystem::exists(run_dir_ + "/np-explain_tcp.json"));
    EXPECT_TRUE(c["tcp_mbps"].is_null()) << c.dump(2);
    EXPECT_TRUE(c["udp_mbps"].is_null()) << c.dump(2);
    expect_nodes_clean();
}

// node A's iperf3 is a wrapper that does not exec (the server np-explain recorded is the
// wrapper's shell, the listening iperf3 its child): the run measures as usual, and its
// teardown stops the server's whole process group, so nothing is left listening.
TEST_F(RunTest, AServerBehindAWrapperThatDoesNotExecIsStoppedWithItsGroup) {
    const Iperf3Replaced wrapper(state_dir, server(), kWrappedIperf3);
    ASSERT_TRUE(wrapper.ok());
    const CommandResult r =
        np_explain(run_args({"--tcp-duration", "1", "--udp-duration", "1", "--ping-count", "1"}));
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    EXPECT_EQ(join(programs(server(), "iperf3.real")), "");
    EXPECT_EQ(ns_exec(server(), "ss -Htln 'sport = :5201'"), "");
    expect_nodes_clean();
}

// Two runs started at the same moment on the same nodes (the second names them the other way
// round, on another port): exactly one gets both nodes and completes; the other is refused,
// naming it, and changes nothing.
TEST_F(RunTest, TwoRunsStartedAtOnceOnTheSameNodesOneCompletesTheOtherIsRefused) {
    const std::vector<std::string> quick = {"--tcp-duration", "2", "--udp-duration", "1",
                                            "--ping-count",   "1"};
    std::vector<std::string> second = run_args(quick);
    std::swap(second.at(1), second.at(2));  // client first, server second
    second.at(8) = run_dir_ + "/second";
    second.insert(second.end(), {"--port", "5202"});
    BackgroundRun one(run_args(quick));
    BackgroundRun two(second);
    const CommandResult r1 = one.wait(seconds(120));
    const CommandResult r2 = two.wait(seconds(120));
    const bool first_won = r1.exit_status == 0;
    const CommandResult& won = first_won ? r1 : r2;
    const CommandResult& lost = first_won ? r2 : r1;
    const pid_t winner = first_won ? one.pid() : two.pid();
    EXPECT_EQ(won.exit_status, 0) << won.out << won.err;
    EXPECT_EQ(lost.exit_status, 3) << lost.out << lost.err;
    EXPECT_NE(lost.out.find("is in use by another run"), std::string::npos) << lost.out;
    EXPECT_NE(lost.out.find("(np-explain pid " + std::to_string(winner) + ")"), std::string::npos)
        << lost.out;
    expect_nodes_clean();
}

TEST_F(RunTest, CtrlCDuringTcpStopsSavesWhatWasMeasuredAndCleansBothNodes) {
    BackgroundRun run(run_args(long_tcp()));
    ASSERT_TRUE(wait_for_tcp_phase(run, seconds(30)));
    ASSERT_TRUE(run.running());
    std::this_thread::sleep_for(milliseconds(1000));
    run.signal(SIGINT);
    const CommandResult r = run.wait(seconds(40));
    EXPECT_EQ(r.exit_status, 128 + SIGINT) << r.out << r.err;
    expect_partial_results(r, "interrupted by SIGINT during the tcp phase");
    // Both probes handed over their traces, with the tcp phase cut where it stopped.
    EXPECT_EQ(contract()["traces"].size(), 2u) << contract().dump(2);
    expect_nodes_clean();
}

TEST_F(RunTest, IperfServerKilledMidRunIsReportedAndBothNodesCleaned) {
    BackgroundRun run(run_args(long_tcp()));
    const pid_t pid = recorded_in_tcp_phase(run, "iperf3.pid", "iperf3");
    ASSERT_GT(pid, 1) << "no iperf3 server recorded in the tcp phase";
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    const CommandResult r = run.wait(seconds(60));
    expect_partial_results(r, "iperf3 server on " + server());
    EXPECT_EQ(contract()["traces"].size(), 2u) << contract().dump(2);
    expect_nodes_clean();
}

// The iperf3 server stopped with SIGSTOP mid-test (a user's Ctrl-Z, a debugger): it still
// listens and holds the connection, so the client would wait until the phase's deadline. The
// run names it — the server stopped, its state — stops (exit 3), and its teardown ends it.
TEST_F(RunTest, AServerStoppedMidTestIsNamedAndEndedByTeardown) {
    BackgroundRun run(run_args(long_tcp()));
    const pid_t pid = recorded_in_tcp_phase(run, "iperf3.pid", "iperf3");
    ASSERT_GT(pid, 1) << "no iperf3 server recorded in the tcp phase";
    ASSERT_EQ(kill(pid, SIGSTOP), 0);
    const CommandResult r = run.wait(seconds(90));
    EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
    expect_partial_results(r, "is stopped (process " + std::to_string(pid) + " T");
    EXPECT_EQ(r.err.find("did not finish within"), std::string::npos) << r.err;
    expect_nodes_clean();
}

// The probe on node A killed mid-run (OOM, a user): its tc filters outlive it, attached to the
// qdisc; the run still ends with none left, and says the server's trace is missing.
TEST_F(RunTest, ProbeKilledMidRunLeavesNoHookBehind) {
    BackgroundRun run(
        run_args({"--tcp-duration", "3", "--udp-duration", "1", "--ping-count", "1"}));
    const pid_t pid = recorded_in_tcp_phase(run, "probe.pid", "np-probe");
    ASSERT_GT(pid, 1) << "no np-probe recorded in the tcp phase";
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    const CommandResult r = run.wait(seconds(60));
    EXPECT_NE(r.exit_status, -2) << "np-explain did not end within the timeout";
    const json c = contract();
    ASSERT_TRUE(c.is_object());
    const json* missing = finding(c, "TRACE_MISSING");
    ASSERT_NE(missing, nullptr) << codes(c);
    EXPECT_NE(missing->value("title", "").find(server()), std::string::npos) << missing->dump(2);
    expect_nodes_clean();
}

TEST_F(RunTest, SshSessionToTheClientCutMidRunIsReportedAndBothNodesCleaned) {
    BackgroundRun run(run_args(long_tcp()));
    ASSERT_TRUE(wait_for_tcp_phase(run, seconds(30)));
    std::this_thread::sleep_for(milliseconds(1000));
    const auto sshds = session_sshds(state_dir, client());
    ASSERT_FALSE(sshds.empty());
    for (const pid_t pid : sshds) kill(pid, SIGKILL);
    const CommandResult r = run.wait(seconds(60));
    expect_partial_results(r, client());
    // The other node's probe still handed over its trace; the cut one is said to be missing.
    const json c = contract();
    ASSERT_EQ(c["traces"].size(), 1u) << c.dump(2);
    EXPECT_NE(c["traces"][0].get<std::string>().find(server()), std::string::npos);
    const json* missing = finding(c, "TRACE_MISSING");
    ASSERT_NE(missing, nullptr) << codes(c);
    EXPECT_NE(missing->value("title", "").find(client()), std::string::npos);
    // The run's own sweep cleaned the node from a fresh session: no advice to run teardown.
    EXPECT_EQ(r.err.find("teardown"), std::string::npos) << r.err;
    // The iperf3 client lost its session; it ends with its test (8 s at most).
    expect_nodes_clean(seconds(8));
}

TEST_F(RunTest, SshSessionToTheServerCutMidRunIsReportedAndBothNodesCleaned) {
    BackgroundRun run(run_args(long_tcp()));
    ASSERT_TRUE(wait_for_tcp_phase(run, seconds(30)));
    std::this_thread::sleep_for(milliseconds(1000));
    const auto sshds = session_sshds(state_dir, server());
    ASSERT_FALSE(sshds.empty());
    for (const pid_t pid : sshds) kill(pid, SIGKILL);
    const CommandResult r = run.wait(seconds(60));
    expect_partial_results(r, server());
    // The other node's probe still handed over its trace; the cut one is said to be missing.
    const json c = contract();
    ASSERT_EQ(c["traces"].size(), 1u) << c.dump(2);
    EXPECT_NE(c["traces"][0].get<std::string>().find(client()), std::string::npos);
    const json* missing = finding(c, "TRACE_MISSING");
    ASSERT_NE(missing, nullptr) << codes(c);
    EXPECT_NE(missing->value("title", "").find(server()), std::string::npos);
    // The run's own sweep cleaned the node from a fresh session: no advice to run teardown.
    EXPECT_EQ(r.err.find("teardown"), std::string::npos) << r.err;
    expect_nodes_clean(seconds(8));
}

TEST_F(RunTest, TeardownAfterARunKilledWithSigkillUndoesEverything) {
    BackgroundRun run(run_args(long_tcp()));
    ASSERT_TRUE(wait_for_tcp_phase(run, seconds(30)));
    run.signal(SIGKILL);
    run.wait(seconds(10));
    // What it had measured is in the run dir, each file whole: the ping it finished (saved as
    // soon as it ended), the phases finished so far, and each node's phases the probes had
    // closed (default, ping) as a partial trace.
    const std::string ping = read_file(run_dir_ + "/np-explain_ping.txt");
    EXPECT_NE(ping.find("packets transmitted"), std::string::npos) << ping;
    const json phases = read_json(run_dir_ + "/np-explain_phases.json");
    ASSERT_TRUE(phases.is_object());
    EXPECT_EQ(phases.value("state", ""), "running");
    EXPECT_EQ(phases.value("current", ""), "tcp");
    EXPECT_EQ(phases["finished"], json({"preflight", "configure", "upload", "probe start", "ping"}))
        << phases.dump();
    for (const auto& node : {server(), client()}) {
        const json partial = read_json(run_dir_ + "/np-explain_partial-trace_" + node + ".json");
        ASSERT_TRUE(partial.is_object()) << node;
        EXPECT_EQ(partial.value("schema", ""), "np-partial-trace/1");
        ASSERT_EQ(partial["phases"].size(), 2u) << partial.dump();
        EXPECT_EQ(partial["phases"][1].value("name", ""), "ping") << partial.dump();
    }
    EXPECT_FALSE(std::filesystem::exists(run_dir_ + "/np-explain_tcp.json"));
    // What the killed run left: its undo scripts and the iperf3 server (its own session).
    EXPECT_FALSE(run_state_files(server()).empty());
    EXPECT_FALSE(run_state_files(client()).empty());
    EXPECT_FALSE(programs(server(), "iperf3", is_iperf3_server).empty());
    // The run's own command line with 'teardown' for 'run'.
    std::vector<std::string> args = run_args(long_tcp());
    args.front() = "teardown";
    const CommandResult td = np_explain(args);
    EXPECT_EQ(td.exit_status, 0) << td.out << td.err;
    // The client it left mid-test is stopped first, by the PID it recorded: it does not linger
    // past its test writing to a server and an address that are gone.
    for (const char* step : {"05-client", "20-server", "40-iface"})
        EXPECT_TRUE(std::regex_search(
            td.out, std::regex(std::string("undone: run [0-9TZ]+-[0-9]+: ") + step)))
            << step << "\n"
            << td.out;
    expect_nodes_clean();
    // A second teardown finds nothing to do.
    const CommandResult again = np_explain(args);
    EXPECT_EQ(again.exit_status, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("nothing to undo"), std::string::npos) << again.out;
}

// ------------------------------------------------------------------ 6. bad input

// sshd logs every login; a run refused before it connects adds none.
size_t logins(const std::string& node) {
    const std::string log = read_file(state_dir + "/" + node + "/sshd.log");
    size_t n = 0;
    for (size_t at = log.find("Accepted publickey"); at != std::string::npos;
         at = log.find("Accepted publickey", at + 1))
        ++n;
    return n;
}

TEST_F(RunTest, UnknownNodeIsAClearError) {
    const CommandResult r = np_explain({"run", server(), "node9-9", "--ssh-config", ssh_config(),
                                        "--params", params(), "--run-dir", run_dir_});
    EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("node9-9"), std::string::npos) << r.out << r.err;
    const json c = contract();
    ASSERT_TRUE(c.is_object());
    const json* unreachable = finding(c, "NODE_UNREACHABLE");
    ASSERT_NE(unreachable, nullptr) << codes(c);
    EXPECT_NE(unreachable->dump().find("node9-9"), std::string::npos);
    expect_nodes_clean();
}

TEST_F(RunTest, AModeThatIsNotAFileNameIsExit2BeforeConnecting) {
    const size_t before[2] = {logins(server()), logins(client())};
    const CommandResult r = np_explain(run_args({"--mode", "../../etc/x"}));
    EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--mode"), std::string::npos) << r.err;
    EXPECT_EQ(logins(server()), before[0]);
    EXPECT_EQ(logins(client()), before[1]);
}

TEST_F(RunTest, UnreadableParamsFileIsExit2NamingTheFile) {
    const std::string missing = run_dir_ + "/no-such-params.yml";
    const CommandResult r =
        np_explain({"run", server(), client(), "--ssh-config", ssh_config(), "--params", missing});
    EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
}

TEST_F(RunTest, MalformedParamsAreExit2NamingTheKey) {
    const std::string bad_value = run_dir_ + "/bad-port.yml";
    std::ofstream(bad_value) << read_file(params()) << "np_port: seventy\n";
    CommandResult r = np_explain(
        {"run", server(), client(), "--ssh-config", ssh_config(), "--params", bad_value});
    EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("np_port"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(bad_value), std::string::npos) << r.err;

    const std::string not_yaml = run_dir_ + "/not-yaml.yml";
    std::ofstream(not_yaml) << "np_data_iface: [enp0s25\nnp_port: 5201\n";
    r = np_explain({"run", server(), client(), "--ssh-config", ssh_config(), "--params", not_yaml});
    EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(not_yaml), std::string::npos) << r.err;
}

TEST_F(RunTest, IfaceWithShellMetacharactersIsRejectedBeforeAnythingIsSent) {
    const size_t before[2] = {logins(server()), logins(client())};
    const CommandResult r = np_explain(run_args({"--iface", "enp0s25;reboot"}));
    EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--iface"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("enp0s25;reboot"), std::string::npos) << r.err;
    EXPECT_EQ(logins(server()), before[0]);
    EXPECT_EQ(logins(client()), before[1]);
    EXPECT_FALSE(std::filesystem::exists(run_dir_ + "/np_contract_np-explain.json"));
}

// A copy of the testbed's ssh_config whose known_hosts pins node A to `server_line` (none
// when empty) and keeps node B's; returns the ssh_config's path.
std::string ssh_config_with_known_server(const std::string& dir, const std::string& server_line) {
    const std::string known = dir + "/known_hosts";
    const std::string config = dir + "/ssh_config";
    {
        std::ofstream k(known);
        if (!server_line.empty()) k << server_line << "\n";
        std::istringstream orig(read_file(state_dir + "/known_hosts"));
        for (std::string line; std::getline(orig, line);)
            if (!line.starts_with(server() + ",")) k << line << "\n";
    }
    std::ofstream cfg(config);
    std::istringstream orig(read_file(state_dir + "/ssh_config"));
    for (std::string line; std::getline(orig, line);) {
        if (line.find("UserKnownHostsFile") != std::string::npos)
            line = "    UserKnownHostsFile " + known;
        cfg << line << "\n";
    }
    return config;
}

// SHA256:... of the node's real host key, as ssh-keygen -l prints it.
std::string host_key_fingerprint(const std::string& node) {
    const std::string out =
        sh("ssh-keygen -lf " + shell_quote(state_dir + "/" + node + "/ssh_host_ed25519_key.pub"))
            .out;
    const auto at = out.find("SHA256:");
    return at == std::string::npos ? "SHA256:?" : out.substr(at, out.find(' ', at) - at);
}

TEST_F(RunTest, HostKeyMismatchIsRefusedWithTheFingerprint) {
    // Node A pinned to another key (node B's).
    std::istringstream other(read_file(state_dir + "/" + client() + "/ssh_host_ed25519_key.pub"));
    std::string type, key;
    other >> type >> key;
    const std::string config = ssh_config_with_known_server(
        run_dir_, server() + "," + testbed().ctl_ip(1) + " " + type + " " + key);
    const std::string fingerprint = host_key_fingerprint(server());
    const std::vector<std::string> args = {"run",          server(),    client(),
                                           "--ssh-config", config,      "--params",
                                           params(),       "--run-dir", run_dir_};
    const CommandResult r = np_explain(args);
    EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("HOST KEY MISMATCH"), std::string::npos) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(fingerprint), std::string::npos)
        << "the node's fingerprint " << fingerprint << " in:\n"
        << r.out << r.err;
    // A changed key is refused even when new keys may be accepted.
    std::vector<std::string> accept = args;
    accept.push_back("--accept-new-host-keys");
    const CommandResult again = np_explain(accept);
    EXPECT_EQ(again.exit_status, 3) << again.out << again.err;
    EXPECT_NE((again.out + again.err).find("HOST KEY MISMATCH"), std::string::npos);
    EXPECT_EQ(read_file(run_dir_ + "/known_hosts").find(fingerprint), std::string::npos);
    expect_nodes_clean();
}

TEST_F(RunTest, UnknownHostKeyIsRefusedWithTheFingerprintUnlessNewKeysAreAccepted) {
    const std::string config = ssh_config_with_known_server(run_dir_, "");
    const std::string fingerprint = host_key_fingerprint(server());
    const std::vector<std::string> args = {"run",    server(),         client(), "--ssh-config",
                                           config,   "--params",       params(), "--run-dir",
                                           run_dir_, "--tcp-duration", "1",      "--udp-duration",
                                           "1",      "--ping-count",   "1"};
    const CommandResult r = np_explain(args);
    EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
    const std::string all = r.out + r.err;
    EXPECT_NE(all.find("host key unknown"), std::string::npos) << all;
    EXPECT_NE(all.find(fingerprint), std::string::npos) << fingerprint << " in:\n" << all;
    EXPECT_NE(all.find("--accept-new-host-keys"), std::string::npos) << all;
    const std::string known_before = read_file(run_dir_ + "/known_hosts");
    expect_nodes_clean();

    std::vector<std::string> accept = args;
    accept.push_back("--accept-new-host-keys");
    const CommandResult ok = np_explain(accept);
    EXPECT_EQ(ok.exit_status, 0) << ok.out << ok.err;
    const std::string known_after = read_file(run_dir_ + "/known_hosts");
    EXPECT_GT(known_after.size(), known_before.size());
    EXPECT_NE(
        sh("ssh-keygen -F " + testbed().ctl_ip(1) + " -f " + shell_quote(run_dir_ + "/known_hosts"))
            .out,
        "")
        << known_after;
    expect_nodes_clean();
}

// Something else listens on the iperf3 port on node A: the run says so and leaves it alone
// (np-explain stops only what it started, by PID).
TEST_F(RunTest, ForeignServerOnThePortIsReportedAndLeftRunning) {
    const std::string pidfile = run_dir_ + "/foreign-iperf3.pid";
    ASSERT_EQ(sh("ip netns exec " + server() + " iperf3 -s -p 5201 -D -I " + pidfile).status, 0);
    // iperf3 -D creates the pidfile before it writes the PID into it: wait for the PID.
    pid_t foreign = 0;
    ASSERT_TRUE(wait_until([&] { return (foreign = std::atoi(read_file(pidfile).c_str())) > 1; },
                           seconds(10)))
        << "no PID in " << pidfile;
    struct StopAtEnd {  // whatever the test's outcome
        pid_t pid;
        ~StopAtEnd() { kill(pid, SIGTERM); }
    } stop_at_end{foreign};
    const CommandResult r = np_explain(run_args({"--ping-count", "1"}));
    EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("port 5201 is already in use"), std::string::npos)
        << r.out << r.err;
    EXPECT_EQ(kill(foreign, 0), 0) << "the foreign iperf3 was stopped";
    EXPECT_EQ(basename_of(cmdline(foreign).at(0)), "iperf3");
    kill(foreign, SIGTERM);
    EXPECT_TRUE(wait_until([&] { return programs(server(), "iperf3").empty(); }, seconds(3)));
    expect_nodes_clean();
}

TEST_F(RunTest, TeardownOfAnUnreachableNodeSaysSoAndExits3) {
    const CommandResult r =
        np_explain({"teardown", server(), "node9-9", "--ssh-config", ssh_config()});
    EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
    EXPECT_NE(r.out.find("node9-9: not reached"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(server() + ":"), std::string::npos) << r.out;
}

}  // namespace
