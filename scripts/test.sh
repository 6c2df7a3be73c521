#!/usr/bin/env bash
# The whole test suite: set up and build; run each reader's libFuzzer target for a short time
# (10 s each here, 15 s by itself; NP_FUZZ_SECONDS=0 skips); the unit tests built with ASan and
# UBSan in build-san/ (any report fails; NP_SANITIZE_CLI=1 adds the CLI tests,
# NP_SANITIZE_TESTS=0 skips); then every test registered in CTest — unit tests, the real
# np-explain binary, the BPF probe in the running kernel, `run` over SSH on the local testbed,
# the fault suite and the fault matrix, the tutorial's three modes, the report in headless
# Chromium (root needed), the man pages and completion against --help, and the Debian package
# built, extracted and run. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${NP_FUZZ_SECONDS:-10}" != 0 ]; then
  export NP_FUZZ_SECONDS=${NP_FUZZ_SECONDS:-10}
  bash scripts/fuzz.sh
fi
if [ "${NP_SANITIZE_TESTS:-1}" != 0 ]; then
  # The unit tests (all of analysis/, report/, the file writer, the remote layer's pure parts)
  # with -DNP_SANITIZE=ON. NP_SANITIZE_CLI=1 adds np-explain and the CLI tests: on 2 vCPUs that
  # build alone is ~11 min more, so the suite leaves it to a run of its own. Each sanitized
  # process logs any report to build-san/sanitizer.*.
  targets=(np_unit_tests)
  [ "${NP_SANITIZE_CLI:-0}" = 0 ] || targets+=(np_cli_tests)
  [ -f build-san/CMakeCache.txt ] ||
    cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DNP_SANITIZE=ON >/dev/null
  cmake --build build-san -j"${NP_BUILD_JOBS:-$(nproc)}" --target "${targets[@]}"
  rm -f build-san/sanitizer.*
  export ASAN_OPTIONS="log_path=$PWD/build-san/sanitizer:detect_leaks=1"
  export UBSAN_OPTIONS="log_path=$PWD/build-san/sanitizer:print_stacktrace=1:halt_on_error=1"
  build-san/tests/np_unit_tests --gtest_brief=1
  [ "${NP_SANITIZE_CLI:-0}" = 0 ] || (cd build-san && tests/np_cli_tests --gtest_brief=1)
  unset ASAN_OPTIONS UBSAN_OPTIONS
  if compgen -G "build-san/sanitizer.*" >/dev/null; then
    echo "sanitizers: reports in build-san/sanitizer.*" >&2
    cat build-san/sanitizer.* | head -60 >&2
    exit 1
  fi
  echo "sanitizers: ${targets[*]} clean under ASan+UBSan"
fi
cd build
# Tests that share the testbed, the kernel or the package dir are RUN_SERIAL; the rest run in
# parallel, one per core.
ctest --output-on-failure -j"$(nproc)" "$@"
