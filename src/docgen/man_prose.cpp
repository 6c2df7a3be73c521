// The man pages' prose, in one place: summary, overview, exit status, environment, files,
// examples. Everything about options and commands comes from the CLI11 apps (cli_docs.cpp).
#include "src/docgen/man_prose.hpp"

namespace np::docgen {

ManProse np_explain_prose() {
    ManProse p;
    p.summary =
        "measure latency, TCP and UDP throughput between two Linux nodes and explain "
        "the numbers";
    p.overview = {
        {"",
         "The numbers are explained against a header-overhead model of the link (why TCP "
         "lands at 941 Mbit/s on 1 GbE and not 1000) and, in a run, against what BPF "
         "counters on both data NICs saw: where datagrams were lost, by the kernel's drop "
         "reason, and whether the traffic rode the data interface at all."},
        {"",
         "The first command to try is np-explain run --local (as root): it builds a "
         "two-node testbed on this machine (network namespaces with their own sshd, joined "
         "by a link shaped like a 100 Mbit/s Ethernet wire), runs ping, TCP and UDP over "
         "SSH with the probe on both data NICs, removes the testbed and prints the "
         "explanation. np-explain explain does the same for iperf3, iperf2 and ping output "
         "you already have, offline."},
        {"", "Every command takes --help."},
    };
    p.after = {
        {"EXIT STATUS",
         {
             {"0", "Nothing wrong: no finding at error severity (parity: every check passed)."},
             {"1",
              "A finding at error severity, e.g. the traffic rode another interface, no "
              "carrier, the run did not complete (parity: a check failed)."},
             {"2", "Bad usage or input; the message names the option, file or field."},
             {"3",
              "The environment: SSH unreachable or refused, no BPF, np-probe or the "
              "testbed script not found, the data link went down during a test, the run dir "
              "cannot be written."},
             {"128+N",
              "run was interrupted by signal N (e.g. 130 for Ctrl-C) after undoing "
              "what it had changed on the nodes."},
         }},
        {"ENVIRONMENT",
         {
             {"NETWORK_PERFORMANCE_RUN_DIR",
              "The run dir run writes and parity and report read; default "
              "/tmp/network-performance-$USER/."},
             {"USER", "Names the default run dir."},
             {"NP_PROBE",
              "The np-probe binary run uploads and probe runs, instead of the one "
              "installed beside np-explain."},
             {"NP_TESTBED_SCRIPT",
              "The testbed script run --local runs, instead of the installed one."},
             {"SSH_AUTH_SOCK",
              "The ssh-agent run and teardown authenticate with, besides the "
              "IdentityFiles of ssh_config."},
             {"SUDO_USER",
              "Who is behind root on a shared console: named, with the console's host and "
              "np-explain's PID, in the lock a run holds on each node (and run --local on the "
              "local testbed), so that a second run refused there says whose run it met."},
             {"NP_EXPLAIN_TEST_PAUSE_AT, NP_EXPLAIN_TEST_RESUME_FILE",
              "Test-only (the fault-matrix tests): run pauses at the named phase until the "
              "file exists or a signal arrives. Not for use."},
         }},
        {"FILES",
         {
             {"RUN_DIR/np_contract_MODE.json",
              "The result contract of the tutorial (mode, ping_rtt_ms, tcp_mbps, udp_mbps, "
              "udp_loss_pct, node1, node2) with np-explain's explain, traces, link_mbps and "
              "model. Beside it run writes MODE_ping.txt, MODE_tcp.json, MODE_udp.json (the "
              "tools' raw output), MODE_trace_NODE.json (np-trace/1), MODE_findings.json "
              "(np-findings/1), MODE_commands.log and report.html; MODE_phases.json "
              "(np-run-phases/1: the phases "
              "finished and the one in progress) and MODE_partial-trace_NODE.json (the phases a "
              "probe had closed, until its trace is saved). Each file is saved as soon as what it "
              "holds exists, replaced whole (temp file, then rename). Every JSON document records "
              "the np-explain or np-probe version that wrote it under \"generator\"."},
             {"network-performance_params.yml",
              "The tutorial's parameters, read from the current directory or "
              "network-performance/ when --params is not given."},
             {"~/.ssh/config, ~/.ssh/known_hosts",
              "How nodes are reached and their host keys (checked strictly)."},
             {"np-probe",
              "Installed beside np-explain (the build tree's src/probe/ when run "
              "from there)."},
             {"../share/np-explain/testbed.sh",
              "Relative to np-explain (/usr/share/np-explain/testbed.sh from the package): "
              "the script that builds and removes run --local's testbed; its state is in "
              "/run/np-explain-testbed, and /run/np-explain-testbed.lock holds it for one run."},
             {"/run/np-explain/ (on each node)",
              "net-NETNS.lock, the node's lock for one run at a time; NODE/RUN/, one run's undo "
              "scripts and PIDs, which teardown runs after a killed run."},
         }},
        {"EXAMPLES",
         {
             {"", "$ sudo np-explain run --local"},
             {"",
              "$ np-explain run node1-1 node1-2 --params "
              "network-performance/network-performance_params.yml"},
             {"", "$ np-explain model --link 10G --mtu 9000"},
             {"", "$ np-explain explain --link 1G iperf3_tcp.json iperf3_udp.json ping.txt"},
             {"", "$ np-explain report --format md"},
             {"", "$ np-explain teardown node1-1 node1-2"},
         }},
        {"SEE ALSO",
         {{"", "np-probe(1), iperf3(1), iperf(1), ping(8), ethtool(8), ssh_config(5)"}}},
    };
    return p;
}

ManProse np_probe_prose() {
    ManProse p;
    p.summary = "count what crosses a data interface with BPF and write an np-trace/1 document";
    p.overview = {
        {"",
         "np-explain run uploads np-probe to both nodes and runs it there; np-explain probe "
         "runs it on this machine. It is linked statically, so a node needs no libbpf."},
        {"",
         "Standard output starts with a \"ready\" line naming the attached programs; the "
         "np-trace/1 document at the end records the np-probe version that wrote it under "
         "\"generator\". SIGINT and SIGTERM stop it as \"stop\" does."},
        {"",
         "It needs root (CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN), the kernel's BTF "
         "(/sys/kernel/btf/vmlinux) and kfree_skb with drop reasons (Linux 5.17 or "
         "later). Once attached it keeps only CAP_NET_ADMIN, which detaching needs (and "
         "CAP_DAC_OVERRIDE when --out, --pidfile or --control lies in a directory root "
         "writes to only with it), and sets no_new_privs; the \"ready\" line lists what it "
         "kept. It detaches everything it attached when it exits."},
    };
    p.after = {
        {"EXIT STATUS",
         {
             {"0", "Stopped and wrote the trace."},
             {"1", "An unexpected error."},
             {"2", "A bad option; the message names it."},
             {"3",
              "The environment: not root, no BTF, no such interface, another np-probe "
              "counting on it, the BPF programs did not load or attach, or the interface "
              "disappeared while counting (the trace is written up to then)."},
         }},
        {"FILES",
         {
             {"/run/np-probe/",
              "Marks the clsact qdiscs np-probe created, so a probe that was killed leaves "
              "them for the next one to remove, and holds each counting probe's interface "
              "lock (iface-NETNS-IFINDEX.lock, its PID inside)."},
         }},
        {"EXAMPLES",
         {
             {"", "$ sudo np-probe --iface enp0s25 --duration 10 --out trace.json"},
         }},
        {"SEE ALSO", {{"", "np-explain(1), tc-bpf(8), bpftool(8)"}}},
    };
    return p;
}

}  // namespace np::docgen
