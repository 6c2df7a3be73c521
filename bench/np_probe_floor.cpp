// np-probe-floor: attaches empty programs where np-probe attaches (tc ingress/egress of an
// iface, tp_btf/kfree_skb) with BPF run-time statistics on, until stdin says "stop" or closes,
// then prints {"program": ns_per_run, ...} as JSON. bench/probe_overhead.sh subtracts these
// from np-probe's own figures. Uses np-probe's owners, so it cleans up the same way.
#include <bpf/bpf.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/errors.hpp"
#include "floor.skel.h"
#include "src/probe/host_facts.hpp"
#include "src/probe/kernel_objects.hpp"

namespace {

struct FloorSkeleton {
    floor_bpf* skel = floor_bpf__open_and_load();
    ~FloorSkeleton() { floor_bpf__destroy(skel); }
};

nlohmann::json cost(const bpf_program* prog) {
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len);
    return {{"run_cnt", info.run_cnt},
            {"run_time_ns", info.run_time_ns},
            {"ns_per_run", info.run_cnt ? double(info.run_time_ns) / double(info.run_cnt) : 0.0}};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: np-probe-floor IFACE  (stdin: 'stop' or EOF ends)\n");
        return 2;
    }
    try {
        using namespace np::probe;
        check_privileges();
        const uint32_t ifindex = iface_index(argv[1]);
        const RunTimeStats stats;
        FloorSkeleton f;
        if (!f.skel) throw np::EnvironmentError("cannot load the floor programs");
        const ClsactQdisc qdisc(ifindex, argv[1]);
        const TcFilter in(ifindex, BPF_TC_INGRESS, f.skel->progs.floor_tc_ingress);
        const TcFilter out(ifindex, BPF_TC_EGRESS, f.skel->progs.floor_tc_egress);
        const TracingLink kfree(f.skel->progs.floor_kfree_skb, "tp_btf/kfree_skb");
        std::fprintf(stderr, "np-probe-floor: attached to %s\n", argv[1]);
        for (std::string line; std::getline(std::cin, line) && line != "stop";) {
        }
        std::cout << nlohmann::json{{"floor_tc_ingress", cost(f.skel->progs.floor_tc_ingress)},
                                    {"floor_tc_egress", cost(f.skel->progs.floor_tc_egress)},
                                    {"floor_kfree_skb", cost(f.skel->progs.floor_kfree_skb)}}
                  << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "np-probe-floor: %s\n", e.what());
        return 3;
    }
}
