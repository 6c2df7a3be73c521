#!/usr/bin/env bash
# Builds one libFuzzer target per parser (clang++ -fsanitize=fuzzer,address,undefined) into
# build-fuzz/ and runs each for a fixed time with the fixtures as seed corpus. Exit status is
# non-zero when a target finds a crash, leak or UB report (the reproducer is left in
# build-fuzz/artifacts/).
#
#   bash scripts/fuzz.sh            # 20 s per target
#   NP_FUZZ_SECONDS=300 bash scripts/fuzz.sh iperf2
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${NP_FUZZ_SECONDS:-20}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(iperf3 iperf2 ping)
out=build-fuzz
mkdir -p "$out/artifacts"

# Only the pure parsing/explaining sources; analysis/ holds other parts too.
sources=(analysis/model.cpp analysis/format.cpp analysis/finding.cpp analysis/rate.cpp
         analysis/measurement.cpp analysis/text.cpp analysis/iperf3.cpp analysis/iperf2.cpp
         analysis/ping.cpp analysis/explain.cpp analysis/trace.cpp analysis/ledger.cpp
         analysis/codes.cpp analysis/rules_throughput.cpp analysis/rules_ledger.cpp
         analysis/rules_ping.cpp analysis/version.cpp)
# -Ibuild: version.cpp reads the version header the build generates (scripts/setup.sh).
version_header=build/generated/np_version.hpp
if [ ! -f "$version_header" ]; then
  echo "fuzz: no $version_header: build first (scripts/setup.sh)" >&2
  exit 3
fi
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I. -Ibuild)

declare -A seeds=(
  [iperf3]="tests/fixtures/iperf3 tests/fixtures/handwritten/*.json tests/fixtures/handwritten/*.ndjson"
  [iperf2]="tests/fixtures/iperf2 tests/fixtures/handwritten/iperf2-*"
  [ping]="tests/fixtures/ping tests/fixtures/handwritten/busybox-ping.txt"
)

# The analysis sources are compiled once, instrumented, and shared by every target.
objects=()
for src in "${sources[@]}"; do
  obj="$out/obj/$(basename "${src%.cpp}").o"
  objects+=("$obj")
  deps=("$src" analysis/*.hpp)
  [ "$src" != analysis/version.cpp ] || deps+=("$version_header")
  if [ ! -f "$obj" ] || [ -n "$(find "${deps[@]}" -newer "$obj" 2>/dev/null)" ]; then
    mkdir -p "$out/obj"
    echo "fuzz: compiling $src"
    clang++ "${flags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$src" -o "$obj"
  fi
done

status=0
for t in "${targets[@]}"; do
  bin="$out/fuzz_$t"
  if [ ! -x "$bin" ] || [ -n "$(find "fuzz/fuzz_$t.cpp" "${objects[@]}" -newer "$bin" 2>/dev/null)" ]; then
    echo "fuzz: building $bin"
    clang++ "${flags[@]}" "fuzz/fuzz_$t.cpp" "${objects[@]}" -lfmt -o "$bin"
  fi
  corpus="$out/corpus_$t"
  mkdir -p "$corpus"
  # shellcheck disable=SC2086
  for s in ${seeds[$t]}; do
    if [ -d "$s" ]; then cp -n "$s"/* "$corpus"/ 2>/dev/null || true; else cp -n "$s" "$corpus"/; fi
  done
  echo "fuzz: $t for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$out/artifacts/${t}-" -print_final_stats=1 "$corpus" \
      >"$out/fuzz_$t.log" 2>&1; then
    echo "fuzz: $t FAILED, see $out/fuzz_$t.log and $out/artifacts/" >&2
    tail -30 "$out/fuzz_$t.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|Done" "$out/fuzz_$t.log" | tail -2
  fi
done
exit $status
