#include "src/cli/command_line.hpp"

int main(int argc, char** argv) {
    return np::cli::run_command_line(argc, argv);
}
