#pragma once
// What np-explain compiles into itself for the HTML report (report/CMakeLists.txt): the Vega
// JavaScript, the page's style sheet (report.css) and the script that draws the charts
// (embed.js), so that a report is one file that opens offline.
#include <string_view>

#include "report/report.hpp"

namespace np {

ChartScripts embedded_chart_scripts();
std::string_view report_css();
// The HTML page (report/page.html) with its {{name}} places for page.cpp to fill.
std::string_view report_page_template();
std::string_view report_embed_script();

}  // namespace np
