#!/usr/bin/env bash
# The whole test suite: set up and build, then every test registered in CTest (unit tests,
# the real np-explain binary, and the integration tests that need root and the kernel).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure "$@"
