// The ground-truth fault suite: each scenario injects one known fault into the local testbed
// with standard tools (tbf limits, a tc or XDP drop program, nftables, MTU, routes, the 1G
// profile whose hosts cannot keep up, the params), runs the real `np-explain run` end to end
// over SSH with both probes, and holds the explanation to the truth: the codes that must appear
// appear, and nothing at warn or error severity outside those and the ones the same cause may
// also produce is blamed. The table of scenario × expected × got is printed at the end.
//
// Needs root and the np_testbed fixture (tests/remote/CMakeLists.txt; label testbed).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "analysis/explanation/format.hpp"
#include "analysis/explanation/ledger.hpp"
#include "common/trace.hpp"
#include "tests/faults/tables.hpp"
#include "tests/run/run_helpers.hpp"
#include "tests/testbed/testbed_environment.hpp"

namespace {

using namespace np::testing;
using nlohmann::json;

const auto* const kTestbed =
    ::testing::AddGlobalTestEnvironment(new TestbedEnvironment("/run/np-testbed-fault-tests", "0"));
const std::string& state_dir = testbed_state_dir();
// The nodes of the testbed this scenario was given (tests/testbed/testbed_environment.hpp).
std::string server() {
    return testbed().server();
}
std::string client() {
    return testbed().client();
}

// The address family of the data plane the scenarios run over: 4, or 6 with NP_FAULT_FAMILY=6
// (docs/testbed.md, "The fault suite in both families") or inside an InFamily (the suite's
// representative part). A scenario of one family's own mechanism (ARP, duplicate address
// detection) says so and runs in that family only.
int& family_override() {
    static int family = 0;
    return family;
}
int fault_family() {
    if (family_override()) return family_override();
    const char* env = std::getenv("NP_FAULT_FAMILY");
    const std::string f = env && *env ? env : "4";
    if (f != "4" && f != "6")
        throw std::invalid_argument("NP_FAULT_FAMILY: '" + f + "' is not 4 (IPv4) or 6 (IPv6)");
    return f == "6" ? 6 : 4;
}
// The scenarios built and run inside its scope are in `family`.
struct InFamily {
    explicit InFamily(int family) { family_override() = family; }
    ~InFamily() { family_override() = 0; }
    InFamily(const InFamily&) = delete;
    InFamily& operator=(const InFamily&) = delete;
};
// Node i's data address in the scenario's family, and the prefix length of the data segment.
std::string data_ip(int i) {
    return fault_family() == 6 ? testbed().data_ip6(i) : testbed().data_ip(i);
}
std::string data_prefix() {
    return fault_family() == 6 ? "/64" : "/24";
}

// What the testbed's 100M profile puts on both data ends (scripts/testbed.sh), to restore.
const std::string kShaper100M =
    "tc qdisc replace dev enp0s25 root handle 1: stab overhead 24 linklayer ethernet tbf rate "
    "100mbit burst 16kb latency 50ms";
const std::string kShaper1G =
    "tc qdisc replace dev enp0s25 root handle 1: stab overhead 24 linklayer ethernet tbf rate "
    "1gbit burst 128kb latency 50ms";

// `command` in `node`'s namespaces, or on the machine itself where node is "".
bool on(const std::string& node, const std::string& command) {
    const auto r = sh(node.empty() ? command : "ip netns exec " + node + " " + command);
    if (r.status != 0) std::cerr << node << ": " << command << ": " << r.out;
    return r.status == 0;
}

struct Scenario {
    std::string name{};
    std::string fault{};                                         // what is injected, for the table
    std::vector<std::pair<std::string, std::string>> inject{};   // node ("": machine), command
    std::vector<std::pair<std::string, std::string>> restore{};  // run whatever happened
    std::vector<std::string> args{};              // for `run`, after the testbed's own
    std::map<std::string, std::string> params{};  // params.yml keys to set ("" removes)
    std::set<std::string> expect{};               // must appear
    std::set<std::string> expect_any{};           // at least one of these must appear
    std::set<std::string> allow{};  // may also appear at warn/error: the same cause's other faces
    std::string detail_mentions{};  // a phrase some expected finding's detail must hold (the
                                    // full tier's: it names kernel reasons)
    // The probe tier to run at (empty: NP_FAULT_TIER, else full), and the lowest tier whose
    // evidence still names this fault's cause. Below that the expected codes may be missing —
    // "not measured at this tier" — but nothing false may be named either way.
    std::string tier{};
    std::string named_down_to{"kernel-counters"};
    // A fault that depends on the machine (hosts too slow for the link) may not happen on a
    // faster one: when every code here appears, that is what happened, and the answer for it
    // replaces expect_any and detail_mentions (nothing may be blamed either way).
    std::set<std::string> if_not_reproduced{};
    // The same from the raw traces, where the fault is a load the machine may not reach: given
    // the run dir, why the fault did not happen (empty: it did). Then no finding may say
    // detail_mentions, which it would only of the fault.
    std::function<std::string(const std::string& dir)> not_reproduced_in_traces{};
    // Each of the TCP and UDP tests' length (--tcp-duration, --udp-duration): every fault here
    // shows within the first second; a fault timed inside a test needs the room it takes.
    std::string test_seconds{"2"};
    // 4 or 6: a fault of that family's own mechanism, run in it alone; 0: fault_family()'s.
    int family = 0;
    std::string why_one_family{};
};

std::vector<ScenarioRow>& table() {  // this process's scenarios
    static std::vector<ScenarioRow> rows;
    return rows;
}

// Where the running test stands among this binary's tests, in the order they are defined.
int test_order() {
    const auto* unit = ::testing::UnitTest::GetInstance();
    const auto* current = unit->current_test_info();
    int order = 0;
    for (int i = 0; i < unit->total_test_suite_count(); ++i) {
        const auto* suite = unit->GetTestSuite(i);
        for (int j = 0; j < suite->total_test_count(); ++j, ++order)
            if (suite->GetTestInfo(j) == current) return order;
    }
    return order;
}

// At the end of the process: under ctest each scenario's row is saved for np_fault_tables;
// run directly, the truth table of every scenario it ran is printed.
class TruthTable : public ::testing::Environment {
  public:
    void TearDown() override {
        if (table().empty()) return;
        std::vector<json> rows;
        for (const auto& r : table()) rows.push_back(to_json(r));
        if (!save_table_rows("faults", rows)) print_truth_table(table());
    }
};
const auto* const kTable = ::testing::AddGlobalTestEnvironment(new TruthTable);

std::string joined(const std::set<std::string>& codes) {
    std::string s;
    for (const auto& c : codes) s += (s.empty() ? "" : ", ") + c;
    return s;
}

// The testbed's params.yml with `changes` applied, written into `dir`.
std::string params_with(const std::map<std::string, std::string>& changes, const std::string& dir) {
    std::ifstream in(state_dir + "/params.yml");
    std::string out, line;
    std::set<std::string> done;
    while (std::getline(in, line)) {
        const std::string key = line.substr(0, line.find(':'));
        if (const auto it = changes.find(key); it != changes.end()) {
            done.insert(key);
            if (!it->second.empty()) out += key + ": " + it->second + "\n";
            continue;
        }
        out += line + "\n";
    }
    for (const auto& [k, v] : changes)
        if (!done.count(k) && !v.empty()) out += k + ": " + v + "\n";
    const std::string path = dir + "/params.yml";
    std::ofstream(path) << out;
    return path;
}

// A node's raw trace, or none where it cannot be read.
std::optional<np::Trace> read_trace(const std::string& trace_path) {
    try {
        return np::parse_trace_text(read_file(trace_path));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// The iperf UDP flow's drops at the receiving socket in a trace's udp phase, as the probe wrote
// them: SOCKET_RCVBUFF, or freed in a socket-stage function (drops-without-reasons); at tiers
// that count no drops, the kernel's UdpRcvbufErrors.
uint64_t udp_socket_drops(const std::string& trace_path) {
    const auto t = read_trace(trace_path);
    if (!t) return 0;
    const np::PhaseTrace* p = t->find_phase("udp");
    if (!p) return 0;
    if (!np::measures(t->tier).drops) {
        const auto it = p->nstat.find("UdpRcvbufErrors");
        return it != p->nstat.end() && it->second > 0 ? uint64_t(it->second) : 0;
    }
    uint64_t n = 0;
    for (const auto& [label, count] : np::flow_drops(*p, "udp"))
        if (label == "SOCKET_RCVBUFF" ||
            (label.starts_with("freed in ") &&
             np::stage_of_function(label.substr(9), false) == np::Stage::receiver_socket))
            n += count;
    return n;
}

// The most time the hypervisor took from one CPU of a node in any phase of its trace (steal),
// read from the raw trace: 0 where it cannot be read.
int64_t most_stolen_ms(const std::string& trace_path) {
    const auto t = read_trace(trace_path);
    int64_t most = 0;
    if (t)
        for (const auto& p : t->phases)
            for (const auto& c : p.cpus) most = std::max(most, c.steal_ms);
    return most;
}

// The probe tier a scenario runs at: its own, else NP_FAULT_TIER (docs/testbed.md, "The fault
// suite at each probe tier"), else full.
np::ProbeTier scenario_tier(const Scenario& s) {
    const char* env = std::getenv("NP_FAULT_TIER");
    const std::string name = !s.tier.empty() ? s.tier : env && *env ? env : "full";
    const auto tier = np::parse_tier(name);
    if (!tier) throw std::invalid_argument("NP_FAULT_TIER: '" + name + "' is not a probe tier");
    return *tier;
}

// What a tier that cannot locate the limit says instead, honestly: the tool's own evidence,
// "not located", loss in a stage its probe does not watch, or (drops named by the function that
// freed them) drops in a function of several stages.
std::set<std::string> not_located_codes(np::ProbeTier tier) {
    std::set<std::string> codes = {"BELOW_CEILING", "BELOW_CEILING_NEEDS_TRACE",
                                   "LIMIT_NOT_LOCATED", "LOSS_NOT_LOCATED"};
    if (tier == np::ProbeTier::drops_without_reasons) codes.insert("LOSS_UNATTRIBUTED");
    return codes;
}

// The testbed's data addresses over IPv6, for a scenario's params.
std::map<std::string, std::string> ipv6_params() {
    return {{"np_server_ip", "\"" + testbed().data_ip6(1) + "\""},
            {"np_client_ip", "\"" + testbed().data_ip6(2) + "\""},
            {"np_prefix_len", "64"}};
}

void run_scenario(Scenario s) {
    if (s.family && std::getenv("NP_FAULT_FAMILY") && *std::getenv("NP_FAULT_FAMILY") &&
        fault_family() != s.family)
        GTEST_SKIP() << s.name << " is IPv" << s.family << "'s alone: " << s.why_one_family;
    const int family = s.family ? s.family : fault_family();
    if (family == 6) {
        for (const auto& [key, value] : ipv6_params()) s.params.emplace(key, value);
        if (!s.family) s.name += " over IPv6";
    }
    const np::ProbeTier tier = scenario_tier(s);
    const bool full = tier == np::ProbeTier::full;
    // Below the tier that names the cause its codes are not required; below full the tier is
    // said (PROBE_TIER) and what it cannot locate may be said so.
    const bool named = np::at_least(tier, *np::parse_tier(s.named_down_to));
    if (!full) {
        for (const auto& code : not_located_codes(tier)) s.allow.insert(code);
        if (!named) {
            s.allow.insert(s.expect.begin(), s.expect.end());
            s.allow.insert(s.expect_any.begin(), s.expect_any.end());
            s.expect.clear();
            s.expect_any.clear();
        }
        s.detail_mentions.clear();
    }
    char tmp[] = "/tmp/np-fault-XXXXXX";
    const std::string dir = mkdtemp(tmp);
    ScenarioRow row{
        test_order(),
        s.name,
        s.fault,
        named ? joined(s.expect) + (s.expect_any.empty()
                                        ? ""
                                        : std::string(s.expect.empty() ? "" : " + ") + "one of " +
                                              joined(s.expect_any))
              : "not measured at this tier (named down to " + s.named_down_to + "): no false cause",
        "",
        false,
        np::to_string(tier)};
    struct Restore {
        const Scenario& s;
        ~Restore() {
            for (const auto& [node, command] : s.restore) on(node, command);
        }
    } restore{s};
    // What the run sets for itself on the nodes is set back: IPv6's keep_addr_on_down.
    const auto keep_addr = [] {
        std::string values;
        for (const auto& node : {server(), client()})
            values += sh("ip netns exec " + node +
                         " cat /proc/sys/net/ipv6/conf/enp0s25/keep_addr_on_down")
                          .out;
        return values;
    };
    const std::string keep_addr_before = keep_addr();
    for (const auto& [node, command] : s.inject) ASSERT_TRUE(on(node, command)) << command;

    std::vector<std::string> args = {
        "run", server(), client(), "--ssh-config", state_dir + "/ssh_config", "--run-dir", dir};
    args.insert(args.end(), {"--params", params_with(s.params, dir), "--ping-count", "1"});
    args.insert(args.end(), {"--tcp-duration", s.test_seconds, "--udp-duration", s.test_seconds});
    args.insert(args.end(), s.args.begin(), s.args.end());
    if (!full) args.insert(args.end(), {"--probe-tier", np::to_string(tier)});
    BackgroundRun run(args);
    const CommandResult r = run.wait(std::chrono::seconds(150));
    ASSERT_NE(r.exit_status, -2) << "np-explain run did not end in time";
    EXPECT_EQ(keep_addr(), keep_addr_before) << "keep_addr_on_down not set back";
    const json c = read_json(dir + "/np_contract_np-explain.json");
    ASSERT_TRUE(c.is_object()) << r.out << r.err;

    // Every run that traced below full says so (a run stopped in preflight traced nothing).
    if (!full && c.contains("traces") && !c["traces"].empty()) s.expect.insert("PROBE_TIER");
    std::set<std::string> blamed, informed, all;
    bool mentioned = s.detail_mentions.empty();
    for (const auto& f : c["explain"]["findings"]) {
        const std::string code = f.value("code", "");
        all.insert(code);
        (f.value("severity", "") == "info" ? informed : blamed).insert(code);
        if ((s.expect.count(code) || s.expect_any.count(code)) &&
            f.value("detail", "").find(s.detail_mentions) != std::string::npos)
            mentioned = true;
    }
    for (const auto& code : informed)
        if (blamed.count(code)) informed.erase(code);
    row.got = joined(blamed) + (informed.empty() ? "" : " | " + joined(informed));
    if (!s.if_not_reproduced.empty() &&
        std::all_of(s.if_not_reproduced.begin(), s.if_not_reproduced.end(),
                    [&](const std::string& code) { return all.count(code); })) {
        row.got += " (not reproduced on this machine: " + joined(s.if_not_reproduced) + ")";
        s.expect_any.clear();
        mentioned = true;
    }
    if (const std::string why =
            s.not_reproduced_in_traces ? s.not_reproduced_in_traces(dir) : std::string();
        !why.empty()) {
        row.got += " (not reproduced on this machine: " + why + ")";
        std::cout << s.name << ": not reproduced on this machine: " << why << "\n";
        for (const auto& f : c["explain"]["findings"])
            EXPECT_EQ(f.value("detail", "").find(s.detail_mentions), std::string::npos)
                << s.name << ": " << f.value("code", "") << " says '" << s.detail_mentions
                << "', but " << why;
        mentioned = true;
    }
    bool pass = true;
    for (const auto& code : s.expect) {
        EXPECT_TRUE(all.count(code)) << s.name << ": expected " << code << "; got " << row.got;
        pass = pass && all.count(code);
    }
    // The receiving iperf3 can fall behind on a busy machine in any scenario: loss at its socket
    // is then a second, real cause. It is accepted only as far as the kernel itself counted it
    // in the receiver's raw trace (read here, not from the findings).
    std::set<std::string> incidental;
    const uint64_t socket_drops = udp_socket_drops(dir + "/np-explain_trace_" + server() + ".json");
    if (socket_drops > 0 && !s.expect.count("LOSS_AT_RECEIVER_SOCKET")) {
        for (const auto& f : c["explain"]["findings"])
            if (f.value("code", "") == "LOSS_AT_RECEIVER_SOCKET")
                for (const auto& e : f["evidence"].items())
                    if (e.key() == "lost_datagrams" && e.value() == socket_drops)
                        incidental = {"LOSS_AT_RECEIVER_SOCKET", "UDP_LOSS"};
        if (!incidental.empty())
            row.got += fmt::format(" (incidental: {} SOCKET_RCVBUFF in {}'s trace)", socket_drops,
                                   server());
    }
    // So can the hypervisor take the VM's CPUs (CPU_STOLEN): accepted only where a node's raw
    // trace counted steal as long as the finding's least (20 ms).
    const int64_t stolen =
        std::max(most_stolen_ms(dir + "/np-explain_trace_" + server() + ".json"),
                 most_stolen_ms(dir + "/np-explain_trace_" + client() + ".json"));
    if (stolen >= 20 && blamed.count("CPU_STOLEN")) {
        incidental.insert("CPU_STOLEN");
        row.got += fmt::format(" (incidental: {} ms of a CPU stolen)", stolen);
    }
    for (const auto& code : blamed) {
        const bool ok = s.expect.count(code) || s.expect_any.count(code) || s.allow.count(code) ||
                        incidental.count(code);
        EXPECT_TRUE(ok) << s.name << ": blamed " << code << ", which this fault does not explain";
        pass = pass && ok;
    }
    if (!s.expect_any.empty()) {
        const bool any = std::any_of(s.expect_any.begin(), s.expect_any.end(),
                                     [&](const std::string& code) { return all.count(code); });
        EXPECT_TRUE(any) << s.name << ": expected one of " << joined(s.expect_any) << "; got "
                         << row.got;
        pass = pass && any;
    }
    EXPECT_TRUE(mentioned) << s.name << ": no expected finding says '" << s.detail_mentions << "'";
    pass = pass && mentioned;
    row.pass = pass;
    table().push_back(row);
    if (!pass) {
        std::cerr << "run dir kept: " << dir << "\n" << r.out << r.err;
    } else {
        std::filesystem::remove_all(dir);
    }
}

std::string drop_object() {
    return NP_FAULT_DROP_OBJECT;
}

// The 1G profile on both data ends, modelled as 1 Gbit/s: the 2-core machine's hosts cannot
// keep up one frame at a time.
Scenario one_gig(Scenario s) {
    s.inject.insert(s.inject.begin(), {{server(), kShaper1G}, {client(), kShaper1G}});
    s.restore.push_back({server(), kShaper100M});
    s.restore.push_back({client(), kShaper100M});
    s.params["np_link_rate"] = "1G";
    return s;
}

// `rule` in the `hook` chain (input, output) of an nftables table of the scenario's own on
// `node`, removed after.
Scenario with_nft_rule(Scenario s, const std::string& node, const std::string& hook,
                       const std::string& rule) {
    s.inject.insert(s.inject.begin(),
                    {{node, "nft add table inet npfault"},
                     {node, "nft add chain inet npfault " + hook + " '{ type filter hook " + hook +
                                " priority 0; }'"},
                     {node, "nft add rule inet npfault " + hook + " " + rule}});
    s.restore.push_back({node, "nft delete table inet npfault"});
    return s;
}

Scenario with_server_input_rule(Scenario s, const std::string& rule) {
    return with_nft_rule(std::move(s), server(), "input", rule);
}

// Over IPv6 the addresses wait out duplicate address detection, the path is checked by
// neighbour discovery, and the tests are held to the IPv6 ceilings (92.85 and 94.32 Mbit/s on
// this link, the model's 40-byte header) with nothing else said.
Scenario clean_run() {
    return {.name = "clean run",
            .fault = "none (UDP at 50M)",
            .args = {"--udp-bandwidth", "50M"},
            .expect = {"LINE_RATE_BOUND", "OFFERED_RATE_REACHED"},
            .detail_mentions = fault_family() == 6 ? "40 IPv6, 20 TCP" : "20 IP, 20 TCP"};
}

TEST(Faults, CleanRunHasOnlyInfoFindings) {
    run_scenario(clean_run());
}

TEST(Faults, OfferedLoadAboveTheCeilingIsHeldBackAtTheSender) {
    run_scenario({.name = "offered load above the ceiling",
                  .fault = "UDP -b 1G on the 100M path",
                  .args = {"--udp-bandwidth", "1G"},
                  .expect = {"OFFERED_ABOVE_CEILING", "LINE_RATE_BOUND"},
                  .detail_mentions = "held back by its own queue ("});
}

Scenario sender_queue_loss() {
    return {.name = "loss at the sender's queue",
            .fault = "client tbf limit 3100 B, UDP -b 1G",
            .inject = {{client(),
                        "tc qdisc replace dev enp0s25 root handle 1: stab overhead 24 "
                        "linklayer ethernet tbf rate 100mbit burst 16kb limit 3100"}},
            .restore = {{client(), kShaper100M}},
            .args = {"--udp-bandwidth", "1G"},
            .expect = {"LOSS_AT_SENDER_QDISC", "UDP_LOSS", "OFFERED_ABOVE_CEILING"},
            // TCP meets the same short queue: its segments are dropped there too.
            .allow = {"BELOW_CEILING", "RETRANSMITS_CONFIRMED"},
            .detail_mentions = "QDISC_DROP on " + client()};
}

TEST(Faults, LossAtTheSendersQueue) {
    run_scenario(sender_queue_loss());
}

Scenario receiver_filter_loss() {
    return {.name = "loss at the receiver's ingress",
            .fault = "tc ingress BPF on node A drops 1 in 20 UDP datagrams",
            .inject = {{server(), "tc qdisc add dev enp0s25 clsact"},
                       {server(), "tc filter add dev enp0s25 ingress prio 2 bpf da obj " +
                                      drop_object() + " sec tc"}},
            .restore = {{server(), "tc qdisc del dev enp0s25 clsact"}},
            .args = {"--udp-bandwidth", "50M"},
            .expect = {"LOSS_AT_RECEIVER_FILTER", "UDP_LOSS"},
            .detail_mentions = "TC_INGRESS on " + server(),
            // Freed in __netif_receive_skb_core, which drops for several stages.
            .named_down_to = "full"};
}

TEST(Faults, LossAtTheReceiversIngressFilter) {
    run_scenario(receiver_filter_loss());
}

Scenario receiver_nic_loss() {
    return {
        .name = "loss at the receiver's NIC",
        .fault = "XDP on node A drops 1 in 20 UDP datagrams",
        .inject = {{server(), "ip link set dev enp0s25 xdpdrv obj " + drop_object() + " sec xdp"}},
        .restore = {{server(), "ip link set dev enp0s25 xdpdrv off"}},
        .args = {"--udp-bandwidth", "50M"},
        .expect = {"LOSS_AT_RECEIVER_NIC", "UDP_LOSS"},
        .detail_mentions = "xdp_drops"};
}

TEST(Faults, LossAtTheReceiversNicBeforeAnyHook) {
    run_scenario(receiver_nic_loss());
}

TEST(FaultsOfCpuBoundHosts, ReceiverSocketOverflow) {
    run_scenario(
        one_gig({.name = "receiver socket overflow",
                 .fault = "1G profile, UDP -b 2G: the receiving iperf3 falls behind",
                 .args = {"--udp-bandwidth", "2G"},
                 .expect = {"LOSS_AT_RECEIVER_SOCKET", "UDP_LOSS", "OFFERED_ABOVE_CEILING"},
                 // The same slow receiving host: TCP host-limited, its backlog full.
                 .allow = {"HOST_LIMITED", "LIMIT_NOT_LOCATED", "LOSS_AT_RECEIVER_NIC"},
                 .detail_mentions = "SOCKET_RCVBUFF"}));
}

// Two hosts that cannot fill the link one frame at a time — yet on this machine kind neither
// CPU is saturated (both ~78 % busy during a 3-s test at ~710 Mbit/s, measured by the probes)
// and nothing is lost: no stage shows its signature, and the verdict must say so rather than
// blame "the hosts" by elimination.
TEST(FaultsOfCpuBoundHosts, SlowHostsWithoutASaturatedCoreAreNotBlamedByElimination) {
    run_scenario(one_gig({.name = "slow hosts, spurious retransmits",
                          .fault = "1G profile: two hosts that cannot fill the link",
                          .args = {"--udp-bandwidth", "100M"},
                          // Where a core does reach 95 %, the host is named instead.
                          .expect_any = {"LIMIT_NOT_LOCATED", "HOST_LIMITED"},
                          .detail_mentions = "Nothing of the flow was lost on the path",
                          // Telling spurious retransmits from real ones takes both ends' drops.
                          .named_down_to = "drops-without-reasons",
                          // A machine whose hosts do fill the link: its TCP is line-rate bound.
                          .if_not_reproduced = {"LINE_RATE_BOUND"}}));
}

// Whether the receiving iperf3's core had room in the UDP test, by the server's raw trace: the
// CPU its process ran on most (the probe's account) busy under 95 % of iperf3's own duration of
// the test (busy as ticked plus what no tick counted, less niced work). Why, or empty.
std::string receiving_core_had_room(const std::string& dir) {
    const auto t = read_trace(dir + "/np-explain_trace_" + server() + ".json");
    const json udp = read_json(dir + "/np-explain_udp.json");
    const np::PhaseTrace* p = t ? t->find_phase("udp") : nullptr;
    if (!p || !udp.is_object()) return {};
    const double test_ms = udp.value(json::json_pointer("/end/sum/seconds"), 0.0) * 1000;
    const np::CpuTime* tool = nullptr;
    for (const auto& c : p->cpus)
        if (c.account && c.account->tool_us > 0 &&
            (!tool || c.account->tool_us > tool->account->tool_us))
            tool = &c;
    if (!tool || test_ms <= 0) return {};
    const double busy = double(tool->working_ms() - tool->niced_ms) / test_ms;
    if (busy >= 0.95) return {};
    return fmt::format("{}'s CPU {} busy {:.0f} % of the test by its raw trace", server(),
                       tool->cpu, 100 * busy);
}

// The receiver's network work on the receiving iperf3's own core: unshaped, the server pinned to
// CPU 1 (-A 0,1: the client on CPU 0) and its data port's receive work steered to CPU 1 (RPS, as
// a NIC queue's IRQ affinity would put it on a real host). CPU 1 cannot both receive the flow
// and read it: the socket overflows, and the probe's account of that core says why — NET_RX's
// share of it beside the tool's — with the step that moves the network's work off it.
TEST(FaultsOfCpuBoundHosts, AReceiversNicWorkOnItsToolsCoreIsNamedByThatCore) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
    const std::string rps = "/sys/class/net/enp0s25/queues/rx-0/rps_cpus";
    run_scenario({.name = "receiver's NIC work on its tool's core",
                  .fault = "unshaped, iperf3 -A 0,1 and node A's receive work on CPU 1 (RPS)",
                  .inject = {{server(), "tc qdisc del dev enp0s25 root"},
                             {client(), "tc qdisc del dev enp0s25 root"},
                             {server(), "sh -c 'echo 2 > " + rps + "'"}},
                  .restore = {{server(), "sh -c 'echo 0 > " + rps + "'"},
                              {server(), kShaper100M},
                              {client(), kShaper100M}},
                  .args = {"--udp-bandwidth", "5G", "-A", "0,1"},
                  .params = {{"np_link_rate", "100G"}},
                  .expect = {"LOSS_AT_RECEIVER_SOCKET", "UDP_LOSS"},
                  // The sender's one core cannot offer 5G either; TCP has no link to fill.
                  .allow = {"SENDER_LIMITED", "HOST_LIMITED", "LIMIT_NOT_LOCATED"},
                  .detail_mentions = "CPU 1, where its process ran, busy",
                  // The account is the tracing tiers'.
                  .named_down_to = "full",
                  // The sender's one core sets how much reaches CPU 1, and the two cost about the
                  // same per datagram: some runs leave CPU 1 idle a tenth of the test though its
                  // socket overflows (its reader late for a burst).
                  .not_reproduced_in_traces = receiving_core_had_room});
}

// "Both CPUs were at 100 % — so the hosts were the limit?" — another tenant's batch job keeps
// every CPU of the machine busy (scripts/testbed.sh other-work: a busy loop on each CPU at the
// default priority, in a cgroup at the least CPU weight, so /proc/stat counts it busy while it
// yields to the nodes' work), the profile unshaped so that nothing on the path sets the rate.
// Saturated CPUs are not the test's limit by this evidence: the test's own work (by the
// probe's account of each CPU) took a fraction of them. The limit is not located, and the other
// work is said as not ruled out, with how long the test's processes waited for a CPU (it slowed
// TCP from ~16.4 to ~13 Gbit/s here, the processes waiting 32-45 % of the time they were ready to
// run); no host may be named for it.
TEST(FaultsOfCpuBoundHosts, CpusSaturatedByAnotherTenantsWorkDoNotNameAHost) {
    const std::string other_work = "bash " NP_SOURCE_DIR "/scripts/testbed.sh other-work --state " +
                                   state_dir + " --other-work ";
    run_scenario(
        {.name = "CPUs saturated by another tenant's work",
         .fault = "unshaped, a busy loop on every CPU at the least CPU weight",
         .inject = {{server(), "tc qdisc del dev enp0s25 root"},
                    {client(), "tc qdisc del dev enp0s25 root"},
                    {"", other_work + "on"}},
         .restore = {{"", other_work + "off"}, {server(), kShaper100M}, {client(), kShaper100M}},
         .args = {"--udp-bandwidth", "200M"},
         .params = {{"np_link_rate", "100G"}},
         .expect = {"LIMIT_NOT_LOCATED"},
         // Said as other work than the test's, with how long the test's process waited for a
         // CPU (its threads' run delay): never ruled out with every CPU saturated by it.
         .detail_mentions = "% of it; the threads of the test's process",
         // A host is named or not only with loss ruled out: a tier that counts drops.
         .named_down_to = "drops-without-reasons"});
}

TEST(Faults, WrongPortIsNamedBeforeAnythingRuns) {
    run_scenario({.name = "wrong port",
                  .fault = "--iface enp3s0 (another segment)",
                  .args = {"--iface", "enp3s0"},
                  .expect = {"DIFFERENT_SEGMENT", "RUN_INCOMPLETE"}});
}

// A host route sends the test to the server's data address over ctl0, from the client's control
// address, which the server reaches over ctl0 again; ping, bound to the data port, still crosses
// it. Over IPv6 the control ports get addresses of a /64 of their own (the testbed's control
// network is IPv4), and the client holds the server's data address on ctl0 as a static
// neighbour: a node answers neighbour discovery only for its own link's addresses.
Scenario control_network() {
    const bool v6 = fault_family() == 6;
    const std::string a = data_ip(1), b = data_ip(2), prefix = data_prefix();
    const std::string host = v6 ? "/128" : "/32", nodad = v6 ? " nodad" : "";
    Scenario s{.name = "traffic over the control network",
               .fault = host + " route sends iperf3 over ctl0",
               .inject = {{server(), "ip addr add " + a + prefix + " dev enp0s25" + nodad},
                          {client(), "ip addr add " + b + prefix + " dev enp0s25" + nodad}},
               .args = {"--udp-bandwidth", "50M"},
               .expect = {"WRONG_INTERFACE"},
               // The control network is not shaped: more than the data link could carry.
               .allow = {"ABOVE_CEILING"}};
    if (v6) {
        const std::string ctl = "2001:2:0:" + std::to_string(200 + testbed().row) + "::";
        for (const auto& [node, i] : {std::pair{server(), 1}, std::pair{client(), 2}}) {
            s.inject.push_back(
                {node, "ip addr add " + ctl + std::to_string(i) + "/64 dev ctl0 nodad"});
            s.restore.push_back({node, "ip addr del " + ctl + std::to_string(i) + "/64 dev ctl0"});
        }
        // The server's answers to the client's control address from its data address, as over
        // IPv4 (a UDP test's replies from another source would not reach the client's socket).
        s.inject.push_back({server(), "ip route add " + ctl + "2/128 dev ctl0 src " + a});
        s.restore.push_back({server(), "ip route del " + ctl + "2/128 dev ctl0"});
        s.inject.push_back({client(), "ip route add " + a + "/128 dev ctl0"});
        s.inject.push_back({"", "sh -c 'ip -n " + client() + " neigh replace " + a +
                                    " lladdr $(ip netns exec " + server() +
                                    " cat /sys/class/net/ctl0/address) dev ctl0 nud permanent'"});
        s.restore.push_back({client(), "ip neigh del " + a + " dev ctl0"});
        s.restore.push_back({client(), "ip route del " + a + "/128 dev ctl0"});
    } else {
        const std::string b_ctl = testbed().ctl_ip(2);
        s.inject.push_back({server(), "ip route add " + b_ctl + "/32 dev ctl0 src " + a});
        s.inject.push_back({client(), "ip route add " + a + "/32 dev ctl0"});
        s.restore = {{client(), "ip route del " + a + "/32 dev ctl0"},
                     {server(), "ip route del " + b_ctl + "/32 dev ctl0"}};
    }
    s.restore.push_back({client(), "ip addr del " + b + prefix + " dev enp0s25"});
    s.restore.push_back({server(), "ip addr del " + a + prefix + " dev enp0s25"});
    return s;
}

TEST(Faults, TrafficOverTheControlNetworkIsTheWrongInterface) {
    run_scenario(control_network());
}

TEST(Faults, AFailedToolIsExplainedByWhatItsPacketsMet) {
    run_scenario(with_server_input_rule({.name = "failed tool run",
                                         .fault = "nftables on node A rejects UDP to 5201",
                                         .args = {"--udp-bandwidth", "50M"},
                                         .expect = {"TOOL_ERROR"},
                                         .detail_mentions = "NETFILTER_DROP"},
                                        "udp dport 5201 reject"));
}

TEST(Faults, MtuMismatchIsSaidAndCostsNothing) {
    run_scenario({.name = "MTU mismatch",
                  .fault = "client MTU 9000, server 1500",
                  .inject = {{client(), "ip link set dev enp0s25 mtu 9000"}},
                  .restore = {{client(), "ip link set dev enp0s25 mtu 1500"}},
                  .args = {"--udp-bandwidth", "50M"},
                  .expect = {"MTU_MISMATCH"}});
}

TEST(Faults, APathSlowerThanTheNicIsNamedWithItsHop) {
    run_scenario({.name = "path slower than the NIC",
                  .fault = "no np_link_rate: the veths report 10G, the tbf carries 100M",
                  .args = {"--udp-bandwidth", "1G"},
                  .params = {{"np_link_rate", ""}},
                  .expect = {"PATH_SLOWER_THAN_LINK", "LINE_RATE_BOUND", "OFFERED_ABOVE_CEILING"},
                  .detail_mentions = "the sender's own qdisc shapes it"});
}

// ---------------------------------------------------------------- faults the rules were not built
// around (issue 21): each asks the question a user asked, and the answer must come from the
// stage's own evidence, never by elimination.

// "Why does iperf3 get only 58 Mbit/s on my 100M link?" — someone else's 40 Mbit/s UDP flow
// shares it for the whole run (a second iperf3 on another port and another address pair), and
// UDP asks for 80M, which the link alone could carry.
Scenario shared_link() {
    // A subnet of its own on the same data link: an address in the test's subnet added before
    // `run` configures its own would be the primary one, the source of the server's UDP replies.
    const int subnet = 100 + testbed().row;
    const bool v6 = fault_family() == 6;
    const std::string net =
        v6 ? "2001:2:0:" + std::to_string(subnet) + "::" : "198.18." + std::to_string(subnet) + ".";
    const std::string a = net + "1", b = net + "2", prefix = data_prefix() + (v6 ? " nodad" : "");
    const std::string pids = "/tmp/np-fault-shared-" + std::to_string(testbed().row);
    return {
        .name = "shared link",
        .fault = "a 40 Mbit/s UDP flow on port 5301 beside the test, UDP -b 80M",
        .inject = {{server(), "ip addr add " + a + prefix + " dev enp0s25"},
                   {client(), "ip addr add " + b + prefix + " dev enp0s25"},
                   {server(), "iperf3 -s -D -1 -p 5301 -B " + a + " --pidfile " + pids + "-s.pid"},
                   {client(), "sh -c 'sleep 0.5; iperf3 -c " + a + " -B " + b +
                                  " -p 5301 -u -b 40M -t 120 </dev/null >/dev/null 2>&1 & "
                                  "echo $! > " +
                                  pids + "-c.pid'"}},
        .restore = {{client(), "sh -c 'kill $(cat " + pids + "-c.pid); rm -f " + pids + "-c.pid'"},
                    {server(), "sh -c 'kill $(cat " + pids + "-s.pid) 2>/dev/null; rm -f " + pids +
                                   "-s.pid'"},
                    {client(), "ip addr del " + b + data_prefix() + " dev enp0s25"},
                    {server(), "ip addr del " + a + data_prefix() + " dev enp0s25"}},
        .args = {"--udp-bandwidth", "80M"},
        .expect = {"LINK_SHARED"},
        // The full link's own consequences: the sender's queue overflows, TCP resends.
        .allow = {"LOSS_AT_SENDER_QDISC", "UDP_LOSS", "RETRANSMITS_CONFIRMED"},
        .detail_mentions = "of other traffic"};
}

TEST(Faults, ALinkSharedWithOtherTrafficIsNamedWithItsShare) {
    run_scenario(shared_link());
}

// "TCP gets a third of the link, UDP is fine" — the server's egress, which carries only the
// ACKs, is shaped to 1 Mbit/s; the data direction is the 100M profile.
Scenario choked_ack_path() {
    return {.name = "choked ACK path",
            .fault = "server egress tbf 1 Mbit/s, data direction 100M",
            .inject = {{server(),
                        "tc qdisc replace dev enp0s25 root handle 1: stab overhead 24 "
                        "linklayer ethernet tbf rate 1mbit burst 4kb latency 50ms"}},
            .restore = {{server(), kShaper100M}},
            .args = {"--udp-bandwidth", "50M"},
            .expect = {"REVERSE_PATH_LIMITED", "OFFERED_RATE_REACHED"},
            .allow = {"SPURIOUS_RETRANSMITS"},
            .detail_mentions = "shapes to 1 Mbit/s"};
}

TEST(Faults, AChokedAckPathIsTheReversePath) {
    run_scenario(choked_ack_path());
}

// "iperf3 gets 80 Mbit/s on my 100M link and nothing is lost" — one node's iperf3 runs in a
// cgroup whose CPU limit is a few percent of a core (a limited slice, a container's quota): the
// node's own tool could not keep up, and the verdict must name that node and its limit, not "the
// hosts". Nothing else of the node is limited (scripts/testbed.sh node-cpu).
Scenario starved(const std::string& name, const std::string& node, const std::string& side,
                 const std::string& percent, const std::string& udp_rate) {
    const std::string testbed_sh = "bash " NP_SOURCE_DIR "/scripts/testbed.sh node-cpu --state " +
                                   state_dir + " --node " + node + " --cpu-limit ";
    return {.name = name,
            .fault = "iperf3 on the " + side + " limited to " + percent +
                     " % of a core (cgroup), UDP -b " + udp_rate,
            .inject = {{"", testbed_sh + "0.0" + percent}},  // percent: one digit
            .restore = {{"", testbed_sh + "off"}},
            .args = {"--udp-bandwidth", udp_rate},
            .detail_mentions = "was held back by the CPU limit of its cgroup",
            // Over a 2-s test the receiving socket's buffer took what the starved receiver did
            // not read, and TCP reached the line rate (1 run in 5); over 3 s the limit shows.
            .test_seconds = "3"};
}

// TCP's receiver reads too slowly: its window closes, nothing is lost (UDP asks for only 1M,
// which it still reads; where its socket overflows, the ledger places that loss there with
// this limit as its why — rules_ledger.cpp).
TEST(Faults, AStarvedReceiverIsNamedWithItsCgroupsLimit) {
    // 2 % of a core: at 5 % the receiving iperf3, which reads 100 Mbit/s of TCP for ~3 % of a
    // core, was throttled in only 3 of 30 periods once (TCP at 98.8 %: then rightly line-rate
    // bound, and the fault had not bitten).
    Scenario s = starved("starved receiver", server(), "receiver", "2", "1M");
    s.expect = {"HOST_LIMITED"};
    // A host is named only with loss ruled out, which takes a tier that counts drops (below it:
    // BELOW_CEILING_NEEDS_TRACE, "the probes' tiers count no drops").
    s.named_down_to = "drops-without-reasons";
    run_scenario(s);
}

// The sender writes too slowly: UDP sends less than the 90M asked for, named with the limit;
// TCP, cheaper per byte, may still fill the link, else it is host-limited by the same cause —
// or, held back in only a few of its periods (seen: 6 of 31, TCP at 92 % of the ceiling, since
// the tool is in its cgroup from its start), not located, which names no cause.
// With run --find-udp-ceiling (one run for both, the suite's time being what it is): at the
// model's ceiling the starved sender sends a fraction and loses nothing, which once read as "the
// path carried the model's ceiling". Its own count now stops the search on the sender, and no
// load it could not send is called carried.
// 1 % of a core, the kernel's least: a starved UDP sender's cost per datagram has two steady
// states. Behind its schedule and throttled, it is charged ~5.2 us a datagram (the qdisc's and
// the veth's work done while it runs); once ahead, it sleeps on its socket's buffer and pays
// ~2.4 us. At 2 % 63 of 70 tests sent 32-57 Mbit/s, but 7 sent 66-96, one of them the whole
// ceiling of 95.6 (throttled in 2 of 22 periods), rightly "carried". At 1 % the cheap state
// needs 40 ms of CPU for the ceiling's 2 s where the limit gives 23-28 (an Intel Xeon VM; 20 of
// 20 2-3 s tests sent 21-27 Mbit/s of 90M or the ceiling, docs/testbed.md).
TEST(Faults, AStarvedSenderIsNamedWithItsCgroupsLimitAndStopsTheUdpCeilingSearch) {
    Scenario s = starved("starved sender", client(), "sender", "1", "90M");
    s.fault += ", run --find-udp-ceiling";
    s.args.push_back("--find-udp-ceiling");
    s.expect = {"SENDER_LIMITED", "UDP_CEILING_FOUND"};
    s.allow = {"HOST_LIMITED", "LIMIT_NOT_LOCATED"};
    s.detail_mentions = "the sending host set that rate, and the load never reached the path";
    run_scenario(s);
}

// "UDP loses a third of its datagrams, TCP crawls — is the link bad?" — a firewall polices the
// test's port: nftables on the server drops what exceeds 3,000 packets/s (UDP at 50M is ~4,200
// datagrams/s). The loss is the filter's, on the receiver, by the kernel's own reason.
TEST(Faults, APolicerOnTheServerIsTheReceiversFilter) {
    run_scenario(with_server_input_rule(
        {.name = "policer on the server",
         .fault = "nftables on node A drops port 5201's data packets beyond 3,000/s, UDP -b 50M",
         .args = {"--udp-bandwidth", "50M"},
         .expect = {"LOSS_AT_RECEIVER_FILTER", "UDP_LOSS"},
         // TCP meets the same policer: its segments are dropped there and resent.
         // At the close the receiver frees a few segment-sized skbs without a reason or a
         // device (seen: 4 of 1,448 B): the ledger cannot show they were not lost, so it
         // leaves them unplaced.
         .allow = {"BELOW_CEILING", "RETRANSMITS_CONFIRMED", "LOSS_UNATTRIBUTED"},
         .detail_mentions = "NETFILTER_DROP on " + server(),
         // Netfilter drops are freed in a function of several stages without their reason.
         .named_down_to = "full"},
        // Data-sized packets only: a policer that also takes iperf3's 4-byte UDP hello (seen
        // once in CI) fails the test before it starts — a TOOL_ERROR, not this question.
        "meta l4proto { tcp, udp } th dport 5201 meta length gt 1000 limit rate over 3000/second "
        "drop"));
}

// The suite's representative part of the tier matrix (the whole of it: docs/testbed.md, "The
// fault suite at each probe tier"): each tier below full forced on this kernel, on faults whose
// evidence differs by tier — a drop named by the function that freed it, NIC and qdisc counters
// without BPF, a link's load from the NIC's own counters.
Scenario at_tier(Scenario s, const char* tier, const char* named_down_to = "kernel-counters") {
    s.tier = tier;
    s.named_down_to = named_down_to;
    return s;
}

TEST(FaultsAtTiers, LossAtTheSendersQueueByTheFunctionThatFreedIt) {
    run_scenario(at_tier(sender_queue_loss(), "drops-without-reasons"));
}

TEST(FaultsAtTiers, LossAtTheReceiversNicFromTcCountersAndItsNicCounters) {
    run_scenario(at_tier(receiver_nic_loss(), "tc-counters"));
}

TEST(FaultsAtTiers, ASharedLinkFromTheNicsOwnCountersWithoutBpf) {
    run_scenario(at_tier(shared_link(), "kernel-counters"));
}

TEST(FaultsAtTiers, AChokedAckPathFromTheNicsOwnCountersWithoutBpf) {
    run_scenario(at_tier(choked_ack_path(), "kernel-counters"));
}

// "Jumbo frames: is 99 Mbit/s UDP above the line rate?" — both NICs at MTU 9000, the datagrams
// iperf3 sizes from the MSS travel one per frame.
TEST(Faults, JumboFramesEndToEndAreModelledFromTheNics) {
    run_scenario({.name = "jumbo frames",
                  .fault = "both data NICs at MTU 9000, UDP -b 100M",
                  .inject = {{server(), "ip link set dev enp0s25 mtu 9000"},
                             {client(), "ip link set dev enp0s25 mtu 9000"}},
                  .restore = {{client(), "ip link set dev enp0s25 mtu 1500"},
                              {server(), "ip link set dev enp0s25 mtu 1500"}},
                  .args = {"--udp-bandwidth", "100M"},
                  .expect = {"LINE_RATE_BOUND", "OFFERED_ABOVE_CEILING"},
                  // The MSS of MTU 9000 with timestamps: less IPv6's larger header.
                  .detail_mentions = fault_family() == 6 ? "8928" : "8948"});
}

// "ping says the host is unreachable but iperf3 works" — the server drops ICMP echo requests;
// the data path is fine and the run must not fail for it.
Scenario filtered_icmp() {
    return with_server_input_rule(
        {.name = "ICMP echo filtered",
         .fault = "nftables on node A drops echo requests",
         .args = {"--udp-bandwidth", "50M"},
         .expect = {"DATA_PATH_NO_ECHO", "PING_NO_REPLY", "LINE_RATE_BOUND"},
         .detail_mentions = fault_family() == 6 ? "only ICMPv6 echo went unanswered"
                                                : "only ICMP echo went unanswered"},
        fault_family() == 6 ? "icmpv6 type echo-request drop" : "icmp type echo-request drop");
}

TEST(Faults, FilteredIcmpDoesNotCondemnTheDataPath) {
    run_scenario(filtered_icmp());
}

// "iperf3 dropped to a third for one run and I changed nothing" — the data link went down for
// 1.5 s in the middle of the TCP test (the server's end taken down and up, as a cable pulled and
// put back). The outage is the kernel's own carrier count; what it cost must not be read as a
// queue or a host that could not keep up.
Scenario link_flap() {
    const std::string pid = "/tmp/np-fault-flap-" + std::to_string(testbed().row) + ".pid";
    // Once the TCP test's data connection is up beside its control connection (two established
    // on port 5201; UDP's test has one), a second into it.
    const std::string flap =
        "sh -c '( i=0; while [ $(ss -Htn state established \"( sport = :5201 )\" | wc -l) -lt 2 "
        "] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; sleep 1; ip link set dev enp0s25 "
        "down; sleep 1.5; ip link set dev enp0s25 up ) </dev/null >/dev/null 2>&1 & echo $! > " +
        pid + "'";
    return {.name = "link flap",
            .fault = "the server's data NIC down for 1.5 s during the TCP test",
            .inject = {{server(), flap}},
            .restore = {{server(), "sh -c 'kill $(cat " + pid + ") 2>/dev/null; rm -f " + pid +
                                       "; ip link set dev enp0s25 up'"}},
            .args = {"--udp-bandwidth", "50M"},
            // The outage by the kernel's carrier count, and the verdict from it and the
            // tool's intervals (stalled while it lasted, at the ceiling otherwise).
            .expect = {"LINK_WENT_DOWN", "BELOW_CEILING"},
            // What it cost, placed where the kernel dropped it — read as the link not
            // up, never as a queue or a NIC too slow (rules_ledger.cpp).
            // (the sender's queue purged, the veth freeing what its peer could not
            // take: on the link, by the function that freed it; what waited for its
            // neighbour entry, invalidated with the link, in neigh_invalidate).
            .allow = {"LOSS_AT_SENDER_QDISC", "LOSS_AT_RECEIVER_NIC", "LOSS_ON_WIRE",
                      "LOSS_AT_SENDER_STACK"},
            .detail_mentions = "Held below the ceiling by the data link going down",
            // Down a second into TCP's test for 1.5 s, and up again before it ends.
            .test_seconds = "3"};
}

TEST(Faults, ALinkFlapIsNamedByTheCarrierCount) {
    run_scenario(link_flap());
}

// Another host on the data segment holds the server's address: a macvlan in a namespace of its
// own on the server's segment, holding node A's address before the run configures it.
// The commands that put that other host on `node`'s data port: a macvlan moved into namespace
// `ns` (removed with it), holding node A's address in the scenario's family (over IPv6 without
// duplicate address detection of its own: it holds the address at once).
std::vector<std::pair<std::string, std::string>> another_host(const std::string& ns,
                                                              const std::string& node) {
    return {{"", "ip netns add " + ns},
            {node, "ip link add link enp0s25 name npdup0 type macvlan mode bridge"},
            {node, "ip link set npdup0 netns " + ns},
            {"", "ip -n " + ns + " addr add " + data_ip(1) + data_prefix() + " dev npdup0" +
                     (fault_family() == 6 ? " nodad" : "")},
            {"", "ip -n " + ns + " link set npdup0 up"}};
}

Scenario address_conflict(const std::string& name, const std::string& fault, const std::string& ns,
                          const std::string& mentions) {
    auto inject = another_host(ns, server());
    // The client has not talked to the server lately: it asks ARP afresh.
    inject.push_back({client(), "ip neigh flush dev enp0s25"});
    return {.name = name,
            .fault = fault,
            .inject = inject,
            .restore = {{"", "ip netns del " + ns}},
            .args = {"--udp-bandwidth", "50M"},
            .expect = {"ADDRESS_CONFLICT", "RUN_INCOMPLETE"},
            .detail_mentions = mentions};
}

// "It works most of the time, and sometimes iperf3 says the server is not running" — another
// host holds the server's address, and the server wins ARP (it answers first: the macvlan's
// broadcast delivery is deferred). Nothing is wrong yet, so only the check made before the
// server takes its address finds it.
Scenario address_held() {
    return address_conflict(
        "address held by another host", "a second host on the segment holds node A's address",
        "npfault-dup" + std::to_string(testbed().row), "Before " + server() + " took");
}

TEST(Faults, AnotherHostOnTheServersAddressIsFoundBeforeTheServerTakesIt) {
    run_scenario(address_held());
}

// "iperf3 says the server is not running, but it is" — the same, and the other host wins ARP
// (the server's own ARP replies dropped on its data port, so it always does). It answers
// ping; the run must name the conflict, not a tool error or a wrong interface. (The check before
// the server took its address finds it first; the MAC the client's traffic goes to would.)
TEST(Faults, AnotherHostWinningArpForTheServersAddressIsAnAddressConflict) {
    Scenario s = address_conflict(
        "two hosts on one address, the other wins ARP",
        "a second host on the segment holds node A's address and wins ARP",
        "npfault-dup" + std::to_string(testbed().row), "another host on the segment holds");
    s.family = 4;
    s.why_one_family =
        "ARP's own; over IPv6 the server's duplicate address detection finds the other host "
        "(AnIpv6AddressAnotherHostHoldsFailsDuplicateAddressDetection)";
    s.inject.insert(s.inject.end(),
                    {{server(), "nft add table arp npfault"},
                     {server(),
                      "nft add chain arp npfault output '{ type filter hook output "
                      "priority 0; }'"},
                     {server(),
                      "nft add rule arp npfault output oifname enp0s25 arp operation "
                      "reply drop"}});
    s.restore.insert(s.restore.begin(), {server(), "nft delete table arp npfault"});
    run_scenario(s);
}

// "Sometimes the IPv6 server answers, sometimes not" — another host holds node A's IPv6
// address: a macvlan on node B's data port, whose own traffic never reaches it (a macvlan hears
// the wire, not its parent), so the client's check before the server takes the address hears
// nothing, and the server's own duplicate address detection finds it: the kernel marks the
// address dadfailed, named as the conflict it is.
TEST(Faults, AnIpv6AddressAnotherHostHoldsFailsDuplicateAddressDetection) {
    const std::string ns = "npfault-dad" + std::to_string(testbed().row);
    InFamily six(6);
    run_scenario({.name = "IPv6 address held by another host",
                  .fault = "a second host on the segment holds node A's IPv6 address",
                  .inject = another_host(ns, client()),
                  .restore = {{"", "ip netns del " + ns}},
                  .args = {"--udp-bandwidth", "50M"},
                  .expect = {"ADDRESS_CONFLICT", "RUN_INCOMPLETE"},
                  .detail_mentions = "duplicate address detection failed",
                  .family = 6,
                  .why_one_family = "duplicate address detection is IPv6's"});
}

// "The IPv6 run fails with 'RTNETLINK answers: Permission denied'" — the image disables IPv6 on
// the data port (net.ipv6.conf.IFACE.disable_ipv6 = 1): said in preflight, before anything is
// changed on either node, with what to do.
TEST(Faults, Ipv6DisabledOnTheServersPortIsSaidBeforeAnythingChanges) {
    run_scenario({.name = "IPv6 disabled on the server's port",
                  .fault = "net.ipv6.conf.enp0s25.disable_ipv6 = 1 on node A",
                  .inject = {{server(), "sysctl -qw net.ipv6.conf.enp0s25.disable_ipv6=1"}},
                  .restore = {{server(), "sysctl -qw net.ipv6.conf.enp0s25.disable_ipv6=0"}},
                  .args = {"--udp-bandwidth", "50M"},
                  .expect = {"IPV6_DISABLED", "RUN_INCOMPLETE"},
                  .detail_mentions = "disable_ipv6 = 1",
                  .family = 6,
                  .why_one_family = "IPv6's own switch"});
}

// ---------------------------------------------------------------- faults on a hop between the
// nodes: a row of three nodes on a switch (the root namespace's bridge, scripts/testbed.sh
// --nodes 3), whose port towards a node is a link neither node's probe sees. Brought up for the
// scenario on a free row and taken down after, also on failure; while it lives, testbed() is it.
class SwitchedTestbed {
  public:
    SwitchedTestbed()
        : saved_(testbed()), state_("/run/np-fault-switch-" + std::to_string(getpid())) {
        const auto up = run_command({"bash", NP_SOURCE_DIR "/scripts/testbed.sh", "up", "--row",
                                     "auto", "--nodes", "3", "--state", state_});
        up_ = up.exit_status == 0;
        if (!up_) {
            std::cerr << up.out << up.err;
            return;
        }
        testbed() = {state_, testbed_row(state_)};
    }
    ~SwitchedTestbed() {
        testbed() = saved_;
        run_command({"bash", NP_SOURCE_DIR "/scripts/testbed.sh", "down", "--state", state_});
    }
    SwitchedTestbed(const SwitchedTestbed&) = delete;
    SwitchedTestbed& operator=(const SwitchedTestbed&) = delete;
    bool up() const { return up_ && testbed().row != 0; }
    // The switch's port towards node i (1: the server, 2: the client): its egress carries what
    // reaches that node.
    std::string port(int i) const {
        return (testbed().row == 1 ? std::string("nptb") : "nptb" + std::to_string(testbed().row)) +
               "-d" + std::to_string(i);
    }

  private:
    Testbed saved_;
    std::string state_;
    bool up_ = false;
};

// "TCP gets half the link, UDP is fine, and neither host is busy" — the ACKs are choked on the
// way back, on the switch's port towards the client (1 Mbit/s): beyond both NICs, where no
// probe sees the queue or its counters. Nothing is lost and no node's queue is full, so no stage
// can be named — but the round trip under load is the queue's own signature, and the verdict must
// say so rather than blame the hosts.
TEST(Faults, AChokedAckPathBeyondTheNodesIsAQueueNoProbeSees) {
    SwitchedTestbed hop;
    ASSERT_TRUE(hop.up());
    run_scenario({.name = "choked ACK path beyond the nodes",
                  .fault = "tbf 1 Mbit/s on the switch's port towards the client",
                  .inject = {{"", "tc qdisc add dev " + hop.port(2) +
                                      " root tbf rate 1mbit burst 4kb latency 50ms"}},
                  .args = {"--udp-bandwidth", "50M"},
                  .expect = {"LIMIT_NOT_LOCATED", "OFFERED_RATE_REACHED"},
                  .allow = {"SPURIOUS_RETRANSMITS"},
                  // "a queue no probe sees", which ping's echoes beside the test, stamped on
                  // both nodes, place between the NICs by the time they spent there.
                  .detail_mentions = "the queue is between the NICs",
                  // "Not located" needs loss ruled out, which takes a tier that counts drops;
                  // below it the verdict is BELOW_CEILING, as honest and less precise.
                  .named_down_to = "drops-without-reasons"});
}

// "-b 30M loses most of its datagrams at the router, though 30 Mbit/s fits its 50" — iperf3
// sends its UDP in bursts of 100 datagrams (-b 30M/100), which leave the client at its link's
// 100 Mbit/s and meet a hop (the switch's port towards the server: 50 Mbit/s, a queue of ~20
// datagrams) that drops what each burst brings beyond it. The 1 ms bins on both nodes show the
// bursts and the rate the hop drains at, so the loss on the wire is named the bursts'.
TEST(Faults, BurstsAboveAHopsRateAreTheLoss) {
    SwitchedTestbed hop;
    ASSERT_TRUE(hop.up());
    run_scenario({.name = "UDP bursts through a slower hop",
                  .fault = "tbf 50 Mbit/s, 30 kB queue, on the switch's port towards node A; "
                           "UDP -b 30M/100",
                  .inject = {{"", "tc qdisc add dev " + hop.port(1) +
                                      " root tbf rate 50mbit burst 3kb limit 30kb"}},
                  .args = {"--udp-bandwidth", "30M/100"},
                  .expect = {"LOSS_ON_WIRE", "UDP_LOSS", "LOSS_IN_BURSTS"},
                  // TCP meets the 50 Mbit/s hop too: below the 100 Mbit/s link's ceiling, with
                  // what it lost there; what it then delivers out of order the receiver's TCP
                  // may drop, by its own count (seen once: 1 TCP_OFO_DROP beside 67 lost at the
                  // hop).
                  .allow = {"BELOW_CEILING", "PATH_SLOWER_THAN_LINK", "LIMIT_NOT_LOCATED",
                            "LOSS_AT_RECEIVER_TCP"},
                  .detail_mentions = "a queue on the path shorter than a burst",
                  // The bins are the tracing tiers' (kept where the flow's packets are counted
                  // at the driver handoff, which the tc tier has not).
                  .named_down_to = "drops-without-reasons"});
}

// "iperf3 loses 1 % of UDP and TCP crawls — where?" — a hop between the nodes drops about one
// in a hundred of the test's data packets at random (a tc program on the switch's port towards
// the server). No kernel of either node sees those drops: what left the client's NIC and never
// reached the server's is the path's, and nothing else may be blamed beside it.
Scenario random_hop_loss(const std::string& port) {
    return {.name = "random loss on a middle hop",
            .fault =
                "1 in 100 of the test's data packets dropped on the switch's port "
                "towards node A, UDP -b 50M",
            .inject = {{"", "tc qdisc add dev " + port + " clsact"},
                       {"", "tc filter add dev " + port + " egress bpf da obj " + drop_object() +
                                " sec classifier/hop"}},
            .args = {"--udp-bandwidth", "50M"},
            .expect = {"LOSS_ON_WIRE", "UDP_LOSS"},
            // TCP meets the same loss; at 100 Mbit/s it resends and mostly still fills
            // the link, else it is held below its ceiling by that loss.
            .allow = {"BELOW_CEILING"},
            .detail_mentions = "lost between the NICs",
            // The wire's loss is what left one NIC and did not reach the other, counted
            // per flow: the NICs' own counters (kernel-counters) count all traffic.
            .named_down_to = "tc-counters"};
}

TEST(Faults, RandomLossOnAHopBetweenTheNodesIsTheWires) {
    SwitchedTestbed hop;
    ASSERT_TRUE(hop.up());
    run_scenario(random_hop_loss(hop.port(1)));
}

// "iperf3 shows lost datagrams in some intervals and then none, and TCP retransmits on a clean
// path" — a hop between the nodes reorders: on the switch's port towards the server one in fifty
// of the test's data packets overtakes the others, which queue in an htb class the client's
// bursts fill (the reorder program of drop.bpf.c). Nothing is lost: the out-of-order count the
// server's report carries (--get-server-output) is named as reordering, and no loss is blamed.
TEST(Faults, AReorderingHopIsNotLoss) {
    SwitchedTestbed hop;
    ASSERT_TRUE(hop.up());
    const std::string port = hop.port(1);
    run_scenario({.name = "reordering on a middle hop",
                  .fault = "1 in 50 of the test's data packets overtakes a queue on the switch's "
                           "port towards node A, UDP -b 50M",
                  .inject = {{"", "tc qdisc add dev " + port + " root handle 1: htb"},
                             {"", "tc class add dev " + port +
                                      " parent 1: classid 1:10 htb rate 100mbit burst 1600 "
                                      "cburst 1600 quantum 1514"},
                             {"", "tc class add dev " + port +
                                      " parent 1: classid 1:20 htb rate 10gbit quantum 1514"},
                             {"", "tc filter add dev " + port + " parent 1: bpf da obj " +
                                      drop_object() + " sec classifier/reorder classid 1:1"}},
                  .args = {"--udp-bandwidth", "50M"},
                  .expect = {"REORDERED_NOT_LOST"},
                  // TCP through the same hop resends what reordering made look lost and cuts its
                  // window each time: now and then (2 clean clones of 16: 91.9 %, 82.3 % of the
                  // ceiling) that costs it the line rate, with nothing lost and no stage of its
                  // own to name — then "not located" is the true answer, not a blame.
                  .allow = {"LIMIT_NOT_LOCATED"},
                  .detail_mentions = "not in its loss figure",
                  // Told by iperf3's own report, whatever the probes measure.
                  .named_down_to = "kernel-counters"});
}

// "Both NICs say 100 Mbit/s, iperf3 says 9.4" — a hop between the nodes is a 10 Mbit/s link (a
// tbf on the switch's port towards the server, its queue 50 ms deep): the path behaves like
// 10 Mbit/s beyond the sender's NIC, and what UDP offers beyond that is lost there, between the
// NICs (TCP's overflow of that queue too).
TEST(Faults, ASlowerHopBeyondTheNicsIsThePathsRate) {
    SwitchedTestbed hop;
    ASSERT_TRUE(hop.up());
    run_scenario(
        {.name = "slower hop beyond the NICs",
         .fault = "tbf 10 Mbit/s on the switch's port towards node A, UDP -b 50M",
         // Counting each frame's preamble, FCS and gap, as a 10 Mbit/s link does.
         .inject = {{"", "tc qdisc add dev " + hop.port(1) +
                             " root stab overhead 24 linklayer ethernet tbf rate 10mbit "
                             "burst 16kb latency 50ms"}},
         .args = {"--udp-bandwidth", "50M"},
         .expect = {"PATH_SLOWER_THAN_LINK", "OFFERED_ABOVE_CEILING", "LOSS_ON_WIRE", "UDP_LOSS"},
         .detail_mentions = "beyond node",
         // Its loss between the NICs is counted per flow (as the random loss above).
         .named_down_to = "tc-counters",
         // The hop's bucket (16 kB) and queue let a burst through at the start: over 2 s that
         // is 0.6 % above the 10 Mbit/s ceiling (TCP 9.47 against 9.41), which no path of a
         // standard rate explains; over 3 s it is within the model's slack.
         .test_seconds = "3"});
}

// ---------------------------------------------------------------- the representative part of
// the family matrix (the whole of it: docs/testbed.md, "The fault suite in both families"): the
// same faults over an IPv6 data plane, where what differs is IPv6's own — drops classified from
// IPv6 headers, neighbour discovery instead of ARP, host routes and neighbours, addresses that
// outlive a link flap only when kept, a hop's program reading IPv6, ICMPv6 echo filtered. (The
// clean run's 40-byte header is tutorial.ipv6's to check, in all three modes.)

TEST(FaultsOverIpv6, LossAtTheReceiversIngressFilter) {
    InFamily six(6);
    run_scenario(receiver_filter_loss());
}

TEST(FaultsOverIpv6, AnotherHostOnTheServersAddressIsFoundBeforeTheServerTakesIt) {
    InFamily six(6);
    run_scenario(address_held());
}

TEST(FaultsOverIpv6, TrafficOverTheControlNetworkIsTheWrongInterface) {
    InFamily six(6);
    run_scenario(control_network());
}

TEST(FaultsOverIpv6, FilteredIcmpv6DoesNotCondemnTheDataPath) {
    InFamily six(6);
    run_scenario(filtered_icmp());
}

TEST(FaultsOverIpv6, ALinkFlapKeepsTheRunsAddress) {
    InFamily six(6);
    run_scenario(link_flap());
}

TEST(FaultsOverIpv6, RandomLossOnAHopBetweenTheNodesIsTheWires) {
    InFamily six(6);
    SwitchedTestbed hop;
    ASSERT_TRUE(hop.up());
    run_scenario(random_hop_loss(hop.port(1)));
}
}  // namespace
