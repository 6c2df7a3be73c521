#!/usr/bin/env bash
# Installs what np-explain needs from Debian 12's packages (only the missing ones), then
# configures and builds into ./build. Idempotent: a second run installs nothing and rebuilds
# only what changed. Run as root on a fresh machine; as another user it only builds.
#   bash scripts/setup.sh                       # the product, build/ (g++, NP_BUILD_TYPE)
#   bash scripts/setup.sh --sanitized [TARGET]  # the sanitized tree, build-san/ (clang, ASan +
#                                               # UBSan, the fuzz targets too: CMakeLists.txt)
#   bash scripts/setup.sh --packages [build]    # the packages alone (or only the build's)
# NP_SETUP_PACKAGES=none skips the packages (scripts/test.sh installs the rest while it builds).
set -euo pipefail
cd "$(dirname "$0")/.."
tree=product
want=${NP_SETUP_PACKAGES:-all}
case ${1:-} in
  --sanitized) tree=sanitized; shift ;;
  --packages) tree=none; want=${2:-all} ;;  # install what is missing, build nothing
esac

# What configuring and building needs.
build_packages=(
  # build (ninja: objects of a target compile while the libraries it links are still building)
  g++ make cmake ninja-build pkg-config clang llvm clang-format libclang-rt-14-dev python3
  # libraries (found with find_package / pkg-config; nothing vendored)
  nlohmann-json3-dev libyaml-cpp-dev libssh-dev libssl-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # BPF probe: libbpf and its static dependencies, bpftool for skeletons
  libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
)
# What running, the demo and the tests need.
run_packages=(
  # what the experiment runs and the tests use for real
  iperf3 iperf iputils-ping openssh-server openssh-client ethtool iproute2
  # the fault suite injects a rejecting firewall with nft (tests/faults)
  nftables
  # the probe overhead benchmark compares np-probe with tcpdump (bench/probe_overhead.sh)
  tcpdump
  # the tutorial's Ansible mode and headless notebook (tutorial/network-performance, tests/tutorial):
  # ansible-playbook with its builtin modules only, the notebook's kernel, runner and plots
  ansible-core python3-nbclient python3-nbformat python3-ipykernel python3-matplotlib
  # the HTML report's browser test renders it in headless Chromium (tests/browser)
  chromium
  # the Debian package: dpkg-shlibdeps computes its library dependencies; its test and the
  # man pages' test render the pages (man, col)
  dpkg-dev man-db bsdextrautils
)
case $want in
  all) packages=("${build_packages[@]}" "${run_packages[@]}") ;;
  build) packages=("${build_packages[@]}") ;;
  none) packages=() ;;
  *) echo "setup: --packages '$want': not 'build' (or nothing, for all)" >&2; exit 2 ;;
esac

missing=()
for p in ${packages[@]+"${packages[@]}"}; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]}; run this script as root to install them" >&2
    exit 3
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "$tree" != none ] || exit 0
jobs=${NP_BUILD_JOBS:-$(nproc)}
targets=()
for t in "$@"; do targets+=(--target "$t"); done
# A build dir another generator made (before Ninja) is made again.
fresh() {
  if [ -f "$1/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$1/CMakeCache.txt"; then
    echo "setup: $1 was configured for another generator; configuring it again for Ninja"
    rm -rf -- "$1"
  fi
}
if [ "$tree" = product ]; then
  fresh build
  # shellcheck disable=SC2086
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${NP_BUILD_TYPE:-RelWithDebInfo}" \
    ${NP_CMAKE_ARGS:-} >/dev/null
  cmake --build build -j"$jobs" "${targets[@]}"
else
  fresh build-san
  [ -f build-san/CMakeCache.txt ] ||
    cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
      -DCMAKE_CXX_COMPILER=clang++ -DNP_SANITIZE=ON >/dev/null
  cmake --build build-san -j"$jobs" "${targets[@]}"
fi
