#!/usr/bin/env bash
# Installs what np-explain needs from Debian 12's packages (only the missing ones), then
# configures and builds into ./build. Idempotent: a second run installs nothing and rebuilds
# only what changed. Run as root on a fresh machine; as another user it only builds.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # build
  g++ make cmake pkg-config clang llvm clang-format libclang-rt-14-dev
  # libraries (found with find_package / pkg-config; nothing vendored)
  nlohmann-json3-dev libyaml-cpp-dev libssh-dev libssl-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # BPF probe: libbpf and its static dependencies, bpftool for skeletons
  libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
  # what the experiment runs and the tests use for real
  iperf3 iperf iputils-ping openssh-server openssh-client ethtool iproute2 python3
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
# The build installs the report's Vega JavaScript with npm ci (report/). Debian's npm brings
# nodejs; a machine that already has npm (e.g. from NodeSource) keeps its own.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(npm nodejs)
fi

missing=()
for p in "${packages[@]}"; do
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

build_type=${NP_BUILD_TYPE:-RelWithDebInfo}
cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
cmake --build build -j"$(nproc)"
