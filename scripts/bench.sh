#!/usr/bin/env bash
# The explain benchmark: generates synthetic inputs with bench/gen_inputs.py, runs
# np-explain-bench on them — the real np-explain binary side by side with python3, each one's
# time and peak RSS — and deletes what it generated. It builds nothing: the benchmark is a CMake
# target built with the product (scripts/setup.sh, cmake --build build).
#
#   bash scripts/bench.sh            # iperf3 JSON of 1 h and 24 h (2.6 GB), NDJSON, iperf2, ping
#   bash scripts/bench.sh --smoke    # small inputs, one run, no goals judged (ctest bench.*)
#   NP_BENCH_RUNS=5 bash scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${NP_BENCH_BIN:-build/bench/np-explain-bench}
if [ ! -x "$bin" ]; then
  echo "bench: $bin is not built: run scripts/setup.sh (or cmake --build build)" >&2
  exit 3
fi
out=${NP_BENCH_DIR:-build-bench}
mkdir -p "$out"
generated=()
trap 'rm -f "${generated[@]}"' EXIT

gen() {  # gen KIND NAME SECONDS INTERVAL: writes $out/NAME
  generated+=("$out/$2")
  python3 bench/gen_inputs.py "$1" "$out/$2" --seconds "$3" --streams 8 --interval "$4"
}

if [ "${1:-}" = "--smoke" ]; then
  gen json smoke.json 60 0.1
  gen ndjson smoke.ndjson 60 0.1
  gen iperf2 smoke-iperf2.txt 600 0.5
  gen ping smoke-ping.txt 600 0.2
  "$bin" --runs 1 --no-goals json="$out/smoke.json" ndjson="$out/smoke.ndjson" \
    text="$out/smoke-iperf2.txt" text="$out/smoke-ping.txt"
  exit
fi

runs=${NP_BENCH_RUNS:-3}
echo "bench: generating the inputs in $out/"
gen json iperf3-P8-1h-0.1s.json 3600 0.1
gen ndjson iperf3-P8-1h-0.1s.ndjson 3600 0.1
gen iperf2 iperf2-P8-24h-0.5s.txt 86400 0.5
gen ping ping-7d-0.2s.txt 604800 0.2
status=0
"$bin" --runs "$runs" json="$out/iperf3-P8-1h-0.1s.json" ndjson="$out/iperf3-P8-1h-0.1s.ndjson" \
  text="$out/iperf2-P8-24h-0.5s.txt" text="$out/ping-7d-0.2s.txt" || status=$?
rm -f "$out/iperf3-P8-1h-0.1s.ndjson" "$out/iperf2-P8-24h-0.5s.txt" "$out/ping-7d-0.2s.txt"
echo
echo "bench: generating the 24-hour iperf3 JSON (2.6 GB; deleted when measured)"
gen json iperf3-P8-24h-0.1s.json 86400 0.1
"$bin" --runs "${NP_BENCH_RUNS_DAY:-2}" json="$out/iperf3-P8-24h-0.1s.json" || status=$?
exit $status
