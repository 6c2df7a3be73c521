#pragma once
// node_steps.sh, compiled in: np-explain's node side (the one implementation of what a run
// changes on a node and how that is undone), defined in each node's command shell and printed by
// `np-explain node-steps` for the tutorial's modes.
#include <string_view>

namespace np::experiment {

std::string_view node_steps_script();

}  // namespace np::experiment
