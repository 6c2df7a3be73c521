#!/usr/bin/env bash
# Builds the libFuzzer targets — one per reader, defined in fuzz/CMakeLists.txt over the same
# np_analysis library as the product, with ASan and UBSan — in build-fuzz/ (clang), and runs
# each for a fixed time with the fixtures as its seed corpus. Exit status is non-zero when a
# target finds a crash, leak or UB report (the reproducer is left in build-fuzz/artifacts/).
#
#   bash scripts/fuzz.sh                          # 15 s per target (10 targets: ~2.5 min)
#   NP_FUZZ_SECONDS=300 bash scripts/fuzz.sh iperf2 transcript
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${NP_FUZZ_SECONDS:-15}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(iperf3_json iperf3_ndjson iperf2 ping transcript params pairs contract
                                     trace probe_message)
out=build-fuzz
mkdir -p "$out/artifacts"

# Configured every time (a second when nothing changed): a build dir made before a target was
# added knows no rule for it, and make stops before it would regenerate.
cmake -S fuzz -B "$out" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None >/dev/null
cmake --build "$out" -j"${NP_FUZZ_JOBS:-2}" --target "${targets[@]/#/fuzz_}"

f=tests/fixtures
declare -A seeds=(
  [iperf3_json]="$f/iperf3/*.json $f/handwritten/*.json $f/run-100m/np-explain_tcp.json $f/run-100m/np-explain_udp.json"
  [iperf3_ndjson]="$f/handwritten/*.ndjson"
  [iperf2]="$f/iperf2/* $f/handwritten/iperf2-* $f/transcripts/server-iperf2-*"
  [ping]="$f/ping/* $f/handwritten/busybox-ping.txt"
  [transcript]="$f/transcripts/* $f/handwritten/*.md $f/handwritten/*.mediawiki"
  [params]="fuzz/seeds/params/*"
  [pairs]="fuzz/seeds/pairs/*"
  [contract]="$f/run-report/np_contract_*.json"
  [trace]="$f/probe/*.json $f/run-100m/np-explain_trace_*.json $f/run-report/np-explain_trace_*.json"
  [probe_message]="fuzz/seeds/probe_message/* $f/run-100m/np-explain_trace_*.json"
)

status=0
for t in "${targets[@]}"; do
  corpus="$out/corpus_$t"
  mkdir -p "$corpus"
  # shellcheck disable=SC2086
  for s in ${seeds[$t]}; do
    [ -f "$s" ] && cp -n "$s" "$corpus"/
  done
  echo "fuzz: $t for ${seconds}s"
  if ! "$out/fuzz_$t" -max_total_time="$seconds" -max_len=131072 -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$out/artifacts/${t}-" -print_final_stats=1 \
      "$corpus" >"$out/fuzz_$t.log" 2>&1; then
    echo "fuzz: $t FAILED, see $out/fuzz_$t.log and $out/artifacts/" >&2
    tail -30 "$out/fuzz_$t.log" >&2
    status=1
  else
    grep -E "DONE|stat::number_of_executed_units" "$out/fuzz_$t.log" | tail -2
  fi
done
exit $status
