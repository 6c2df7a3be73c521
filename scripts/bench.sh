#!/usr/bin/env bash
# Benchmark (bench/): generates a synthetic 1-hour, -P 8, 0.1 s-interval iperf3 JSON, then times
# np-explain's read + parse + explain against python3's json.load of the same file, and reports
# peak memory against the file size. Goals: >= 3x faster, peak memory < 3x the file.
#
#   bash scripts/bench.sh                 # ~110 MB file in build-bench/
#   NP_BENCH_SECONDS=600 bash scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-bench
mkdir -p "$out"
file="$out/iperf3-P8-${NP_BENCH_SECONDS:-3600}s-0.1s.json"
if [ ! -s "$file" ]; then
  echo "bench: generating $file"
  python3 bench/gen_iperf3_json.py "$file" --seconds "${NP_BENCH_SECONDS:-3600}" --streams 8 \
    --interval 0.1
fi
sources=(analysis/model.cpp analysis/format.cpp analysis/finding.cpp analysis/rate.cpp
         analysis/measurement.cpp analysis/text.cpp analysis/iperf3.cpp analysis/iperf2.cpp
         analysis/ping.cpp analysis/explain.cpp analysis/version.cpp)
# -Ibuild: version.cpp reads the version header the build generates (scripts/setup.sh).
g++ -std=c++20 -O2 -DNDEBUG -I. -Ibuild bench/bench_explain.cpp "${sources[@]}" -lfmt \
  -o "$out/bench_explain"
"$out/bench_explain" "$file" "${NP_BENCH_RUNS:-3}"
