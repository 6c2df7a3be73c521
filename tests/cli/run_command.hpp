#pragma once
// Runs the real np-explain binary (or any command) and captures what a user would see.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace np::testing {

struct CommandResult {
    int exit_status = -1;  // -1 when killed by a signal
    std::string out;
    std::string err;
};

inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// A file's whole text (empty when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Shell {
    int status = -1;
    std::string out;  // stdout and stderr
};

// A command line on this machine (root namespace), stdout and stderr together.
inline Shell sh(const std::string& command) {
    Shell r;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

inline CommandResult run_command(const std::vector<std::string>& argv) {
    char err_path[] = "/tmp/np-cli-test-XXXXXX";
    const int fd = mkstemp(err_path);
    close(fd);
    std::string cmd;
    for (const auto& a : argv) cmd += shell_quote(a) + " ";
    cmd += "2>" + shell_quote(err_path) + " </dev/null";
    CommandResult r;
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream e(err_path);
    std::stringstream ss;
    ss << e.rdbuf();
    r.err = ss.str();
    unlink(err_path);
    return r;
}

#ifdef NP_EXPLAIN_BIN
inline CommandResult np_explain(std::vector<std::string> args) {
    args.insert(args.begin(), NP_EXPLAIN_BIN);
    return run_command(args);
}
#endif

}  // namespace np::testing
