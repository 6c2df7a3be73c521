#include "common/version.hpp"

#include "generated/np_version.hpp"

namespace np {

std::string version() {
    return build_info::kVersion;
}

std::string revision() {
    return build_info::kRevision;
}

std::string version_line(const std::string& program) {
    return program + " " + version() + " (git " + revision() + ")";
}

nlohmann::json generator(const std::string& program) {
    return {{"program", program}, {"version", version()}, {"revision", revision()}};
}

}  // namespace np
