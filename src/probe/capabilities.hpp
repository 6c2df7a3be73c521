#pragma once
// What np-probe keeps of its privileges once everything is loaded and attached
// (docs/security.md, "The probe").
#include <functional>
#include <string>
#include <vector>

namespace np::probe {

// What the probe still does from the moment it has attached until it has exited, beyond what
// needs no privilege (reading /proc/net, ethtool statistics, a netlink qdisc dump): each is
// tried with the capability in question out of effect before it is kept.
struct NeedsAfterAttach {
    // Reads one of its maps through the fd it holds. Needs CAP_BPF (CAP_SYS_ADMIN before
    // Linux 5.8) only where every bpf() call does: kernels before 6.5 with unprivileged BPF
    // disabled.
    std::function<bool()> read_a_map;
    // The directories it creates, replaces or removes files in (--out, --pidfile, --control):
    // needs CAP_DAC_OVERRIDE only when one of them is not writable by root without it (a user's
    // directory that `sudo np-probe --out` writes into).
    std::vector<std::string> dirs;
};

// Lowers the effective, permitted and inheritable sets (and so the ambient set) to
// CAP_NET_ADMIN, which detaching the tc filters and destroying the clsact qdisc need at exit
// (netlink requests), plus what `needs` proves necessary; drops every other capability from
// the bounding set when CAP_SETPCAP allows it; sets no_new_privs. The probe is single-threaded,
// so the sets of its one thread are the process's. Returns the names of the capabilities
// kept. Throws EnvironmentError when the kernel refuses a step, or when the maps cannot be
// read with what was kept (the trace would be all zeros).
std::vector<std::string> drop_capabilities(const NeedsAfterAttach& needs);

}  // namespace np::probe
