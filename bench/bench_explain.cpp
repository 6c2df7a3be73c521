// Times np-explain's parse + explain of an iperf3 JSON file against Python's json.load of the
// same file, in the same run, and reports peak memory against the file size.
//
//   bash scripts/bench.sh            # generates the 1-hour -P 8 0.1 s file and runs this
//   build-bench/bench_explain FILE.json [RUNS]
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/error.hpp"
#include "analysis/explain.hpp"
#include "analysis/iperf3.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Reading the file counts, as it does for json.load(open(F)).
size_t parse_and_explain(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    const auto size = static_cast<size_t>(in.tellg());
    std::string text(size, '\0');
    in.seekg(0);
    in.read(text.data(), static_cast<std::streamsize>(size));
    np::ExplainInput input;
    input.link_bps = 1e9;
    input.measurements = np::measurements_from(np::parse_iperf3(text), path);
    return np::explain(input).findings.size();
}

struct ChildResult {
    double seconds = 0;
    long maxrss_kb = 0;
    int status = -1;
};

ChildResult run_python(const std::string& path) {
    const std::string code = "import json; json.load(open('" + path + "'))";
    std::vector<char*> argv{const_cast<char*>("python3"), const_cast<char*>("-c"),
                            const_cast<char*>(code.c_str()), nullptr};
    ChildResult r;
    const auto t0 = Clock::now();
    pid_t pid = 0;
    if (posix_spawnp(&pid, "python3", nullptr, nullptr, argv.data(), environ) != 0) return r;
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    r.seconds = seconds_since(t0);
    r.maxrss_kb = usage.ru_maxrss;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s IPERF3.json [RUNS]\n", argv[0]);
        return 2;
    }
    const std::string path = argv[1];
    const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
        std::perror(path.c_str());
        return 2;
    }
    const double file_mb = static_cast<double>(st.st_size) / 1e6;

    double best_ours = 1e300, best_python = 1e300;
    long python_rss_kb = 0;
    size_t findings = 0;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        try {
            findings = parse_and_explain(path);
        } catch (const np::InputError& e) {
            std::fprintf(stderr, "%s: %s: %s\n", path.c_str(), e.field().c_str(), e.what());
            return 2;
        }
        best_ours = std::min(best_ours, seconds_since(t0));
        const auto py = run_python(path);
        if (py.status != 0) {
            std::fprintf(stderr, "python3 json.load failed (status %d)\n", py.status);
            return 1;
        }
        best_python = std::min(best_python, py.seconds);
        python_rss_kb = std::max(python_rss_kb, py.maxrss_kb);
    }
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    const double our_peak_mb = static_cast<double>(self.ru_maxrss) * 1024 / 1e6;
    const double ratio = best_python / best_ours;
    const double mem_ratio = our_peak_mb / file_mb;

    std::printf("file                 %s (%.1f MB)\n", path.c_str(), file_mb);
    std::printf("np-explain          read + parse + explain: %.3f s (best of %d, %zu findings)\n",
                best_ours, runs, findings);
    std::printf("python3 json.load   %.3f s (best of %d, peak RSS %.1f MB)\n", best_python, runs,
                static_cast<double>(python_rss_kb) * 1024 / 1e6);
    std::printf("speed-up            %.1fx  (goal >= 3x: %s)\n", ratio,
                ratio >= 3 ? "met" : "NOT met");
    std::printf("peak memory         %.1f MB = %.2fx the file  (goal < 3x: %s)\n", our_peak_mb,
                mem_ratio, mem_ratio < 3 ? "met" : "NOT met");
    std::printf("rerun               bash scripts/bench.sh   (or: %s %s %d)\n", argv[0],
                path.c_str(), runs);
    return ratio >= 3 && mem_ratio < 3 ? 0 : 1;
}
