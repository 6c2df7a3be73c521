#include "src/cli/command_line.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "src/cli/commands.hpp"
#include "src/cli/terminal.hpp"
#include "src/common/errors.hpp"

namespace np::cli {

int run_command_line(int argc, char** argv) {
    Runner run;
    const auto app = make_app(run);

    try {
        app->parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app->exit(e);
        fmt::print(stderr, "np-explain: {}\nRun 'np-explain --help' for usage.\n", e.what());
        return 2;
    }
    try {
        return run ? run() : 2;
    } catch (const InputError& e) {
        if (e.line() > 0) {
            print_text(stderr,
                       fmt::format("np-explain: {}: line {}: {}\n", e.field(), e.line(), e.what()));
        } else {
            print_text(stderr, fmt::format("np-explain: {}: {}\n", e.field(), e.what()));
        }
        return 2;
    } catch (const EnvironmentError& e) {
        print_text(stderr, fmt::format("np-explain: {}\n", e.what()));
        return 3;
    } catch (const std::exception& e) {
        print_text(stderr, fmt::format("np-explain: error: {}\n", e.what()));
        return 1;
    }
}

}  // namespace np::cli
