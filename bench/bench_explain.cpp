// np-explain-bench: times the real np-explain binary on large inputs, side by side with Python
// reading the same file, and reports each one's peak RSS (getrusage of the child). The goals
// (issue 14): peak RSS <= 32 MB for any file size, and >= 8x faster than
// `python3 -c 'import json; json.load(open(F))'` on iperf3 JSON.
//
//   np-explain-bench [--runs N] [--np-explain PATH] [--no-goals] KIND=FILE...
//     KIND: json (compared with json.load), ndjson (with json.loads per line), text (no
//     comparison: iperf2 or ping text, for time and memory only)
//   Exit status: 0 goals met, 1 a goal not met, 3 a run failed. --no-goals (small smoke
//   inputs, where Python's start-up dominates) reports the figures and judges nothing.
//
// scripts/bench.sh generates the inputs (bench/gen_inputs.py), runs this and deletes them.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr double kMaxRssMb = 32;
constexpr double kMinSpeedUp = 8;

struct Child {
    double seconds = 0;
    double peak_rss_mb = 0;
    int status = -1;
};

// Runs argv with stdout to /dev/null (stderr stays: a failure says why); wall time from spawn to
// reaped, peak RSS from the child's own rusage.
Child run(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    Child c;
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = 0;
    const int err = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) return c;
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    c.peak_rss_mb = static_cast<double>(usage.ru_maxrss) * 1024 / 1e6;
    c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return c;
}

std::string capture(const std::string& command) {
    std::string out;
    if (FILE* p = popen(command.c_str(), "r")) {
        char buf[512];
        while (fgets(buf, sizeof buf, p)) out += buf;
        pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

std::string first_line_with(const std::string& file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return line.substr(line.find_first_of(":=") + 1);
    return "";
}

std::string trim_quotes(std::string s) {
    s.erase(0, s.find_first_not_of(" \t\""));
    while (!s.empty() && (s.back() == '"' || s.back() == ' ')) s.pop_back();
    return s;
}

std::string machine() {
    utsname u{};
    uname(&u);
    return std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " vCPUs (" +
           trim_quotes(first_line_with("/proc/cpuinfo", "model name")) + "), " +
           trim_quotes(first_line_with("/etc/os-release", "PRETTY_NAME")) + ", kernel " + u.release;
}

std::string load() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a + " " + b + " " + c;
}

struct Case {
    std::string kind;  // json, ndjson, text
    std::string file;
};

}  // namespace

int main(int argc, char** argv) {
    int runs = 3;
    bool judge = true;
    std::string np_explain = NP_EXPLAIN_BIN;
    std::vector<Case> cases;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--no-goals") {
            judge = false;
        } else if (a == "--np-explain" && i + 1 < argc) {
            np_explain = argv[++i];
        } else if (const size_t eq = a.find('='); eq != std::string::npos) {
            cases.push_back({a.substr(0, eq), a.substr(eq + 1)});
        } else {
            std::fprintf(stderr,
                         "usage: %s [--runs N] [--np-explain PATH] [--no-goals] KIND=FILE...\n",
                         argv[0]);
            return 2;
        }
    }
    if (cases.empty()) {
        std::fprintf(stderr, "usage: %s [--runs N] [--np-explain PATH] KIND=FILE...\n", argv[0]);
        return 2;
    }
    // The interpreter python3 resolves to (not a shim in front of it: the shell script of pyenv
    // would add its own time to Python's).
    const std::string python = capture("python3 -c 'import sys; print(sys.executable)'");
    const std::string python_version =
        capture("python3 -c 'import platform; print(platform.python_version())'");
    if (python.empty()) {
        std::fprintf(stderr, "python3 not found\n");
        return 2;
    }
    std::printf("machine     %s\n", machine().c_str());
    std::printf("np-explain  %s\n", np_explain.c_str());
    std::printf("python3     %s (%s)\n", python.c_str(), python_version.c_str());
    std::printf("load        %s (before)\n", load().c_str());
    std::printf(
        "method      best wall time of %d alternating runs each, peak RSS the largest; "
        "np-explain explain --link 1G FILE > /dev/null\n\n",
        runs);
    std::printf("%-44s %9s  %24s  %24s  %8s  %s\n", "input", "size", "np-explain", "python3",
                "speed-up", "goals");
    bool met = true;
    for (const auto& c : cases) {
        struct stat st {};
        if (stat(c.file.c_str(), &st) != 0) {
            std::perror(c.file.c_str());
            return 2;
        }
        const double mb = static_cast<double>(st.st_size) / 1e6;
        std::optional<std::string> py_code;
        if (c.kind == "json") py_code = "import json; json.load(open('" + c.file + "'))";
        if (c.kind == "ndjson")
            py_code = "import json; [json.loads(l) for l in open('" + c.file + "')]";
        Child best_np{1e300, 0, 0}, best_py{1e300, 0, 0};
        for (int r = 0; r < runs; ++r) {
            const Child n = run({np_explain, "explain", "--link", "1G", c.file});
            if (n.status != 0) {
                std::fprintf(stderr, "np-explain failed on %s (status %d)\n", c.file.c_str(),
                             n.status);
                return 3;
            }
            best_np.seconds = std::min(best_np.seconds, n.seconds);
            best_np.peak_rss_mb = std::max(best_np.peak_rss_mb, n.peak_rss_mb);
            if (py_code) {
                const Child p = run({python, "-c", *py_code});
                if (p.status != 0) {
                    std::fprintf(stderr, "python3 failed on %s (status %d)\n", c.file.c_str(),
                                 p.status);
                    return 3;
                }
                best_py.seconds = std::min(best_py.seconds, p.seconds);
                best_py.peak_rss_mb = std::max(best_py.peak_rss_mb, p.peak_rss_mb);
            }
        }
        char np_cell[64], py_cell[64] = "-", ratio_cell[32] = "-";
        std::snprintf(np_cell, sizeof np_cell, "%.3f s, %.1f MB RSS", best_np.seconds,
                      best_np.peak_rss_mb);
        std::string goals;
        const bool rss_ok = best_np.peak_rss_mb <= kMaxRssMb;
        if (judge) goals += rss_ok ? "RSS <= 32 MB: met" : "RSS <= 32 MB: NOT met";
        met = met && rss_ok;
        if (py_code) {
            const double ratio = best_py.seconds / best_np.seconds;
            std::snprintf(py_cell, sizeof py_cell, "%.3f s, %.1f MB RSS", best_py.seconds,
                          best_py.peak_rss_mb);
            std::snprintf(ratio_cell, sizeof ratio_cell, "%.1fx", ratio);
            if (c.kind == "json" && judge) {
                goals += ratio >= kMinSpeedUp ? "; >= 8x: met" : "; >= 8x: NOT met";
                met = met && ratio >= kMinSpeedUp;
            }
        } else {
            std::snprintf(ratio_cell, sizeof ratio_cell, "%.0f MB/s", mb / best_np.seconds);
        }
        const std::string name = c.kind + " " + c.file.substr(c.file.rfind('/') + 1);
        std::printf("%-44s %6.0f MB  %24s  %24s  %8s  %s\n", name.c_str(), mb, np_cell, py_cell,
                    ratio_cell, goals.c_str());
        std::fflush(stdout);
    }
    std::printf("\nload        %s (after)\n", load().c_str());
    std::ostringstream cmd;
    cmd << argv[0] << " --runs " << runs << (judge ? "" : " --no-goals") << " --np-explain "
        << np_explain;
    for (const auto& c : cases) cmd << " " << c.kind << "=" << c.file;
    std::printf("rerun       bash scripts/bench.sh   (this step: %s)\n", cmd.str().c_str());
    return met || !judge ? 0 : 1;
}
