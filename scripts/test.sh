#!/usr/bin/env bash
# The whole test suite: set up and build, run each parser's libFuzzer target for a fixed,
# short time (20 s each; NP_FUZZ_SECONDS=0 skips), then every test registered in CTest — unit
# tests, the real np-explain binary, the BPF probe in the running kernel, `run` over SSH on the
# local testbed, the report in headless Chromium (root needed), the man pages and completion
# against --help, and the Debian package built, extracted and run. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${NP_FUZZ_SECONDS:-20}" != 0 ]; then
  bash scripts/fuzz.sh
fi
cd build
# Tests that share the testbed, the kernel or the package dir are RUN_SERIAL; the rest run in
# parallel, one per core.
ctest --output-on-failure -j"$(nproc)" "$@"
