#include "src/cli/files.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "analysis/error.hpp"
#include "src/common/executable.hpp"

namespace np::cli {

namespace {
// Larger than any tool output or trace (a 1-hour -P 8 iperf3 run at 0.1 s intervals is
// ~0.5 GB): refused rather than read.
constexpr std::streamoff kMaxInputBytes = std::streamoff(2) << 30;
}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        throw InputError(path.string(), "is a directory, not a file");
    }
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw InputError(path.string(), fmt::format("cannot read: {}", std::strerror(errno)));
    const std::streamoff size = in.tellg();
    if (size < 0) throw InputError(path.string(), "cannot read the file (not a regular file?)");
    if (size > kMaxInputBytes) {
        throw InputError(path.string(),
                         fmt::format("{} bytes is larger than any tool output", size));
    }
    std::string data(static_cast<size_t>(size), '\0');
    in.seekg(0);
    in.read(data.data(), size);
    if (!in) throw InputError(path.string(), "read error");
    return data;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
    const int fd = mkstemp(tmpl.data());
    if (fd < 0) {
        throw InputError(path.string(), fmt::format("cannot write: {}", std::strerror(errno)));
    }
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            ::unlink(tmpl.c_str());
            throw InputError(path.string(), fmt::format("cannot write: {}", std::strerror(err)));
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        ::unlink(tmpl.c_str());
        throw InputError(path.string(), fmt::format("cannot write: {}", std::strerror(errno)));
    }
    // Keep the permissions of the file being replaced.
    std::error_code ec;
    const auto perms = std::filesystem::status(path, ec).permissions();
    if (!ec) std::filesystem::permissions(tmpl, perms, ec);
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw InputError(path.string(), fmt::format("cannot replace: {}", std::strerror(err)));
    }
}

namespace {
// The tutorial lists its modes in this order; others follow by name.
int mode_rank(const std::string& mode) {
    static const char* order[] = {"ansible", "manual", "jupyter"};
    for (int i = 0; i < 3; ++i)
        if (mode == order[i]) return i;
    return 3;
}
}  // namespace

std::vector<Contract> read_run_dir_contracts(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        throw InputError(dir.string(),
                         "no such run directory (set NETWORK_PERFORMANCE_RUN_DIR or "
                         "name the directory)");
    }
    std::vector<Contract> contracts;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const auto name = entry.path().filename().string();
        if (name.rfind("np_contract_", 0) != 0 || entry.path().extension() != ".json") continue;
        contracts.push_back(parse_contract(read_text_file(entry.path()), entry.path().string()));
    }
    if (contracts.empty()) {
        throw InputError(dir.string(), "holds no np_contract_<mode>.json result contracts");
    }
    std::sort(contracts.begin(), contracts.end(), [](const Contract& a, const Contract& b) {
        return std::pair(mode_rank(a.mode), a.mode) < std::pair(mode_rank(b.mode), b.mode);
    });
    return contracts;
}

std::filesystem::path default_run_dir() {
    if (const char* dir = std::getenv("NETWORK_PERFORMANCE_RUN_DIR"); dir && *dir) return dir;
    std::string user;
    if (const char* u = std::getenv("USER"); u && *u) {
        user = u;
    } else if (const passwd* pw = getpwuid(getuid())) {
        user = pw->pw_name;
    }
    return std::filesystem::path("/tmp") / ("network-performance-" + user);
}

std::string find_np_probe() {
    if (const char* env = std::getenv("NP_PROBE"); env && *env) return env;
    const auto dir = executable_dir();
    if (dir.empty()) return {};
    for (const auto& candidate : {dir / "np-probe", dir / ".." / "probe" / "np-probe"}) {
        if (access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal();
    }
    return {};
}

}  // namespace np::cli
