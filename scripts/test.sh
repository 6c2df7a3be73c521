#!/usr/bin/env bash
# The whole test suite: set up and build; run each reader's libFuzzer target for a short time
# (10 s each here, 15 s by itself; NP_FUZZ_SECONDS=0 skips); then every test registered in
# CTest, split over two builds so that none runs twice for nothing:
#   build/      (the product, as shipped): the unit and CLI tests, the BPF probe in the running
#               kernel, the report in headless Chromium (root needed), the man pages and
#               completion against --help, the Debian package built, extracted and run, the
#               bench's smoke run, and `run --local` (the main job) end to end;
#   build-san/  (ASan+UBSan, -DNP_SANITIZE=ON; NP_SANITIZE_TESTS=0 leaves it out and runs the
#               testbed tests in build/ instead): the unit, CLI and kernel tests again, and every
#               testbed test — `run` over SSH, the fault suite and the fault matrix, the
#               tutorial's three modes and its fan-out — with the sanitized np-explain and
#               np-probe. Any report fails the suite; each sanitized process logs it to
#               build-san/sanitizer.* (a probe on a testbed node too: src/probe/np_probe_main.cpp).
# Extra arguments go to both ctest runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${NP_FUZZ_SECONDS:-10}" != 0 ]; then
  export NP_FUZZ_SECONDS=${NP_FUZZ_SECONDS:-10}
  bash scripts/fuzz.sh
fi
jobs=$(nproc)
if [ "${NP_SANITIZE_TESTS:-1}" = 0 ]; then
  (cd build && ctest --output-on-failure -j"$jobs" "$@")
  exit
fi
[ -f build-san/CMakeCache.txt ] ||
  cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DNP_SANITIZE=ON >/dev/null
cmake --build build-san -j"${NP_BUILD_JOBS:-$jobs}"

# Tests that share the testbed, the kernel or the package dir are RUN_SERIAL; the rest run in
# parallel, one per core.
(cd build && ctest --output-on-failure -j"$jobs" -LE testbed "$@")
(cd build && ctest --output-on-failure -R '^run\.local_1g$' "$@")

rm -f build-san/sanitizer.*
export ASAN_OPTIONS="log_path=$PWD/build-san/sanitizer:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$PWD/build-san/sanitizer:print_stacktrace=1:halt_on_error=1"
status=0
(cd build-san && ctest --output-on-failure -j"$jobs" -LE 'browser|package' \
  -E '^(docs|bench)\.' "$@") || status=$?
unset ASAN_OPTIONS UBSAN_OPTIONS
if compgen -G "build-san/sanitizer.*" >/dev/null; then
  echo "sanitizers: reports in build-san/sanitizer.*" >&2
  head -n 60 build-san/sanitizer.* >&2
  exit 1
fi
[ "$status" = 0 ] || exit "$status"
echo "sanitizers: the unit, CLI, kernel and testbed tests ran clean under ASan+UBSan (build-san/)"
