#include "src/cli/command_line.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "common/errors.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {

namespace {

// What a command printed reached its standard output, or the status says it did not: a full
// disk under `np-explain report --format md > FILE` is exit 3 naming the cause, never 0.
int stdout_written(int status) {
    // errno still holds the failed write's error when nothing was left to flush; only a write's
    // error is named (another may be left from an earlier, handled failure).
    if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
    const int err = errno;
    const bool a_writes = err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO ||
                          err == EPIPE || err == EBADF || err == EROFS;
    fmt::print(stderr, "np-explain: standard output: cannot write: {}\n",
               a_writes ? std::strerror(err) : "a write failed");
    return 3;
}

}  // namespace

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
        return stdout_written(run ? run() : 2);
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
