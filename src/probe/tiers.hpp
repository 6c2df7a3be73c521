#pragma once
// Which tier a node's probe counts at (docs/commands.md, "Probe tiers"): chosen by probing what
// the kernel has (BTF, the tracepoints' signatures in it) and what the probe may do (its
// capabilities), never by version strings. A tier that is chosen but does not load falls to
// the next one down (probe.cpp).
#include <optional>
#include <string>

#include "common/trace.hpp"
#include "src/probe/kernel_btf.hpp"

namespace np::probe {

struct NodeFeatures {
    bool may_load_bpf = false;   // CAP_BPF (or CAP_SYS_ADMIN) in effect
    bool may_trace = false;      // CAP_PERFMON (or CAP_SYS_ADMIN): tracing, packet access
    bool may_change_tc = false;  // CAP_NET_ADMIN: the clsact qdisc and its filters
    std::optional<KernelBtf> btf;
};

NodeFeatures probe_features();

struct TierChoice {
    ProbeTier tier = ProbeTier::kernel_counters;
    std::string why;  // empty at full; else what rules out the tier above
};

// The best tier `f` allows, and no better than `at_most` (--max-tier: a node as if its kernel
// had only that tier's features, so the reduced programs really load here).
TierChoice best_tier(const NodeFeatures& f, std::optional<ProbeTier> at_most);

// The tier below `t` (kernel_counters has none: it needs nothing).
ProbeTier tier_below(ProbeTier t);

}  // namespace np::probe
