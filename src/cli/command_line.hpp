#pragma once
// np-explain's main(): parse the command line, run the subcommand, and map what it throws to the
// exit status (docs/design.md: 2 bad usage or input, 3 environment). A header of its own, without
// CLI11, so main.cpp does not compile the command-line library a second time.

namespace np::cli {

int run_command_line(int argc, char** argv);

}  // namespace np::cli
