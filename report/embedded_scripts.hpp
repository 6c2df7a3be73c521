#pragma once
// The Vega JavaScript compiled into np-explain (report/CMakeLists.txt): what the HTML report
// inlines so it opens offline.
#include "analysis/report.hpp"

namespace np {

ChartScripts embedded_chart_scripts();

}  // namespace np
