// np_fault_tables [--clear] [DIR]: the fault suite's truth table and the fault matrix from the
// rows their scenarios and cells saved under ctest (tests/faults/tables.hpp) — by default this
// build's, NP_TABLES_DIR; with --clear the rows are removed once printed (scripts/test.sh runs it
// so at the end: the rows are in /run). Exit status 1 when a scenario or cell failed, 2 when there
// are no rows.
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "tests/faults/tables.hpp"

int main(int argc, char** argv) {
    using namespace np::testing;
    const bool clear = argc > 1 && std::string_view(argv[1]) == "--clear";
    if (clear) --argc, ++argv;
    if (argc > 2) {
        std::fprintf(stderr, "usage: np_fault_tables [--clear] [DIR]\n");
        return 2;
    }
    const char* dir = argc == 2 ? argv[1] : NP_TABLES_DIR;
    std::vector<ScenarioRow> scenarios;
    MatrixTable matrix;
    bool failed = false;
    for (const auto& j : load_table_rows(dir, "faults")) {
        scenarios.push_back(scenario_row(j));
        failed = failed || !scenarios.back().pass;
    }
    for (const auto& j : load_table_rows(dir, "fault-matrix")) {
        add_cell(matrix, j);
        failed = failed || j.value("cell", "") == "FAIL";
    }
    if (scenarios.empty() && matrix.empty()) {
        std::fprintf(stderr, "np_fault_tables: no rows in %s (did the fault tests run?)\n", dir);
        return 2;
    }
    if (!scenarios.empty()) print_truth_table(scenarios);
    if (!matrix.empty()) print_matrix(matrix);
    if (clear) {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
    return failed ? 1 : 0;
}
