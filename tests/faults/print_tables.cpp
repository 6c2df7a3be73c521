// np_fault_tables [DIR]: the fault suite's truth table and the fault matrix from the rows their
// scenarios and cells saved under ctest (tests/faults/tables.hpp) — by default this build's,
// NP_TABLES_DIR; scripts/test.sh runs it at the end. Exit status 1 when a scenario or cell
// failed, 2 when there are no rows.
#include <cstdio>

#include "tests/faults/tables.hpp"

int main(int argc, char** argv) {
    using namespace np::testing;
    if (argc > 2) {
        std::fprintf(stderr, "usage: np_fault_tables [DIR]\n");
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
    return failed ? 1 : 0;
}
