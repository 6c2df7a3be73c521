#!/usr/bin/env bash
# The whole test suite: set up and build, then every test registered in CTest (unit tests,
# the real np-explain binary, and the integration tests that need root and the kernel).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(cd build && ctest --output-on-failure "$@")
# Each parser's libFuzzer target for a fixed, short time (20 s each; NP_FUZZ_SECONDS=0 skips).
if [ "${NP_FUZZ_SECONDS:-20}" != 0 ]; then
  bash scripts/fuzz.sh
fi
