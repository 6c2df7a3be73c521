#!/usr/bin/env bash
# Runs each reader's libFuzzer target — fuzz/CMakeLists.txt, over the product's own np_analysis,
# with ASan and UBSan — for a fixed time with the fixtures as its seed corpus. The targets live in
# the sanitized build, build-san/ (clang, -DNP_SANITIZE=ON: the tree scripts/test.sh runs the
# sanitized tests in); this builds only the targets there (scripts/setup.sh --sanitized).
# Exit status is non-zero when a target finds a crash, leak or UB report (the reproducer is left
# in build-san/fuzz-artifacts/). Targets run NP_FUZZ_JOBS at a time (default: one per core).
#
#   bash scripts/fuzz.sh                          # 15 s per target (10 targets)
#   NP_FUZZ_SECONDS=300 bash scripts/fuzz.sh iperf2 transcript
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${NP_FUZZ_SECONDS:-15}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(iperf3_json iperf3_ndjson iperf2 ping transcript params pairs contract
                                     trace probe_message)
out=build-san
bash scripts/setup.sh --sanitized "${targets[@]/#/fuzz_}"
mkdir -p "$out/fuzz-artifacts"

f=tests/fixtures
declare -A seeds=(
  [iperf3_json]="$f/iperf3/*.json $f/handwritten/*.json $f/run-100m/np-explain_tcp.json $f/run-100m/np-explain_udp.json"
  [iperf3_ndjson]="$f/handwritten/*.ndjson"
  [iperf2]="$f/iperf2/* $f/handwritten/iperf2-* $f/transcripts/server-iperf2-*"
  [ping]="$f/ping/* $f/handwritten/*ping*"
  [transcript]="$f/transcripts/* $f/handwritten/*.md $f/handwritten/*.mediawiki $f/handwritten/*.txt $f/iperf3/*.txt"
  [params]="fuzz/seeds/params/*"
  [pairs]="fuzz/seeds/pairs/*"
  [contract]="$f/run-report/np_contract_*.json"
  [trace]="$f/probe/*.json $f/run-100m/np-explain_trace_*.json $f/run-report/np-explain_trace_*.json"
  [probe_message]="fuzz/seeds/probe_message/* $f/run-100m/np-explain_trace_*.json"
)

# One target's run: its corpus seeded from the fixtures, its log in build-san/fuzz_T.log; a
# failure leaves build-san/fuzz_T.failed.
run_target() {
    local t=$1 corpus=$out/fuzz-corpus/$1 s
    mkdir -p "$corpus"
    # shellcheck disable=SC2086
    for s in ${seeds[$t]}; do
        [ -f "$s" ] && cp -n "$s" "$corpus"/
    done
    if ! "$out/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=131072 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$out/fuzz-artifacts/${t}-" -print_final_stats=1 \
        "$corpus" >"$out/fuzz_$t.log" 2>&1; then
        echo "fuzz: $t FAILED, see $out/fuzz_$t.log and $out/fuzz-artifacts/" >&2
        tail -30 "$out/fuzz_$t.log" >&2
        touch "$out/fuzz_$t.failed"
        return
    fi
    echo "fuzz: $t for ${seconds}s: $(grep -oE 'stat::number_of_executed_units: [0-9]+' \
        "$out/fuzz_$t.log" | grep -oE '[0-9]+$') inputs"
}

# NP_FUZZ_JOBS targets at a time (default: one per core): each is one process.
jobs=${NP_FUZZ_JOBS:-$(nproc)}
for t in "${targets[@]}"; do
    rm -f "$out/fuzz_$t.failed"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    run_target "$t" &
done
wait
for t in "${targets[@]}"; do
    [ ! -e "$out/fuzz_$t.failed" ] || exit 1
done
