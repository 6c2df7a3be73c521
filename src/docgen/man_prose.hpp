#pragma once
// The hand-written parts of the man pages: what the command line cannot say about itself.
#include "src/docgen/cli_docs.hpp"

namespace np::docgen {

ManProse np_explain_prose();
ManProse np_probe_prose();

}  // namespace np::docgen
