#include "src/cli/files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "common/errors.hpp"
#include "common/executable.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {

Measurements read_measurements_file(const std::filesystem::path& path, InputFormat format) {
    InputFile in(path, format == InputFormat::ping ? kMaxPingBytes : kMaxToolOutputBytes);
    try {
        return parse_measurements(in, in.name(), format);
    } catch (const InputError& e) {
        if (e.field() == in.name()) throw;
        // Name the file first; the reader named the field (or "json", "iperf2", …) and line.
        throw InputError(fmt::format("{} ({})", in.name(), e.field()), e.what(), e.line());
    }
}

Params read_params_file(const std::filesystem::path& path) {
    const ParamsReading r = parse_params(read_text_file(path, kMaxParamsBytes), path.string());
    print_warnings(r.warnings);
    return r.params;
}

std::string find_np_probe() {
    if (const char* env = std::getenv("NP_PROBE"); env && *env) return env;
    if (const auto dir = executable_dir(); !dir.empty()) {
        for (const auto& candidate : {dir / "np-probe", dir / ".." / "probe" / "np-probe"})
            if (access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal();
    }
    throw EnvironmentError(EnvironmentError::Kind::host,
                           "np-probe not found next to np-explain or in the build tree; set "
                           "NP_PROBE to its path");
}

}  // namespace np::cli
