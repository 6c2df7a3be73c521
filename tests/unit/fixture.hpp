#pragma once
// Reads a file under tests/fixtures for unit tests of the parsers and the engine.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace np::testing {

inline std::string fixture(const std::string& relative) {
    const std::string path = std::string(NP_FIXTURES_DIR) + "/" + relative;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("missing fixture " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace np::testing
