#pragma once
// Where a cleanup that failed is said: an undo step run from a destructor (which must not
// throw), the iperf3 server stopped, the local testbed taken down. The runner turns each into a
// finding of the run; the CLI prints the testbed's. Nothing in the runner prints.
#include <functional>
#include <string>

namespace np::experiment {

using CleanupReport = std::function<void(const std::string& what)>;

}  // namespace np::experiment
