#!/usr/bin/env bash
# The whole test suite, in two builds so that nothing runs twice for nothing:
#   build-san/  (clang with ASan+UBSan, -DNP_SANITIZE=ON) first: every testbed test — `run` over
#               SSH, the fault suite and the fault matrix, the tutorial's three modes and its
#               fan-out — with the sanitized np-explain and np-probe, on NP_TESTBED_SLOTS
#               testbeds at once (tests/testbed): those held to a rate first, with nothing
#               beside them but each other, the others beside the fuzz, unit, CLI and kernel
#               runs; each reader's libFuzzer target for a short time (5 s each here, its seeds
#               and what they lead to; 15 s by itself, longer runs in docs/security.md;
#               NP_FUZZ_SECONDS=0 skips); the unit and CLI tests, and the kernel tests
#               of np-probe's own process (label kernel-userspace). Any
#               report fails the suite; each sanitized process logs it to build-san/sanitizer.*
#               (a probe on a testbed node too: src/probe/np_probe_main.cpp).
#   build/      (the product, as shipped: g++), built beside build-san/ before any test runs:
#               the unit and CLI tests, every kernel test of the probe, the report in
#               headless Chromium (root needed), the man pages and completion against --help,
#               the Debian package built, extracted and run, the bench's smoke run, and `run
#               --local` (the main job) end to end.
# NP_SANITIZE_TESTS=0 leaves build-san/ out and runs the testbed tests in build/ instead.
# At the end it prints how long each phase took and the slowest tests of each CTest run
# (docs/performance.md keeps a table of clean-clone runs). Extra arguments go to every ctest run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
t_start=$SECONDS
# Each phase's wall time and each CTest run's slowest five tests, kept in files: some phases run
# in the background.
results=$(mktemp -d /tmp/np-test-sh.XXXXXX)
build_pid=""
testbeds_pid=""
summary() {
    local status=$? pid
    for pid in "$build_pid" "$testbeds_pid"; do
        [ -n "$pid" ] && kill -- "-$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    # Slots a stopped CTest run did not take down (its cleanup test never ran).
    if compgen -G "$(slots_prefix build-san)-*" >/dev/null; then
        bash tests/testbed/slots.sh down "$(slots_prefix build-san)" >/dev/null 2>&1 || true
    fi
    echo
    echo "test.sh: $(((SECONDS - t_start) / 60)) min $(((SECONDS - t_start) % 60)) s in all (exit $status)"
    [ -e "$results/phases" ] && awk -F'\t' '{printf "  %-40s %5s s\n", $1, $2}' "$results/phases"
    [ -e "$results/slowest" ] && cat "$results/slowest"
    rm -rf -- "$results"
}
trap summary EXIT
# The state dirs' prefix of a build dir's testbed slots (tests/testbed/CMakeLists.txt).
slots_prefix() {
    echo "/run/np-testbed-$(printf %s "$PWD/$1" | md5sum | cut -c1-8)"
}
# phase NAME COMMAND...: runs it and keeps its wall time for the summary.
phase() {
    local name=$1 t0=$SECONDS status=0
    shift
    "$@" || status=$?
    printf '%s\t%s\n' "$name" "$((SECONDS - t0))" >>"$results/phases"
    return $status
}
# ctest_run NAME DIR ARGS...: a CTest run, timed, whose slowest five tests go into the summary.
# With NICE set, at that nice level; with QUIET set, its output only in its log
# (DIR/Testing/test-sh-NAME.log), for a run in the background.
ctest_run() {
    local name=$1 dir=$2 log t0=$SECONDS status
    shift 2
    mkdir -p "$dir/Testing"
    log=$dir/Testing/test-sh-$name.log
    set +e
    if [ -n "${QUIET:-}" ]; then
        (cd "$dir" && nice -n "${NICE:-0}" ctest --output-on-failure "$@") >"$log" 2>&1
        status=$?
    else
        (cd "$dir" && nice -n "${NICE:-0}" ctest --output-on-failure "$@") 2>&1 | tee "$log"
        status=${PIPESTATUS[0]}
    fi
    set -e
    printf '%s\t%s\n' "ctest: $name" "$((SECONDS - t0))" >>"$results/phases"
    { echo "  slowest of ctest $name:"
      grep -E 'Test +#[0-9]+: .* sec$' "$log" |
          sed -E 's/.*Test +#[0-9]+: ([^ ]+) .*[^0-9.]([0-9.]+) sec$/\2 \1/' |
          sort -rn | awk 'NR <= 5 {printf "    %7.1f s  %s\n", $1, $2}'
    } >"$results/slowest.$name"
    cat "$results/slowest.$name" >>"$results/slowest"
    return "$status"
}

if [ "${NP_SANITIZE_TESTS:-1}" = 0 ]; then
    phase "packages (apt, when missing)" bash scripts/setup.sh --packages
    phase "build: product (g++), testbed tests too" env NP_CMAKE_ARGS=-DNP_TESTBED_TESTS=ON \
        bash scripts/setup.sh
    ctest_run product build -LE testbed -j"$jobs" "$@"
    ctest_run product-testbeds build -L testbed \
        -j"$(sed -n 's/^NP_TESTBED_SLOTS:STRING=//p' build/CMakeCache.txt)" "$@"
    exit
fi
# What the builds need first; the rest (iperf3, Chromium, Ansible, the notebook's kernel, …)
# installs during the builds, which wait on the CPU rather than on the network.
phase "packages: the build's (apt, when missing)" bash scripts/setup.sh --packages build
mkdir -p build build-san
bash scripts/setup.sh --packages >build-san/test-sh-packages.log 2>&1 &
packages_pid=$!
t_packages=$SECONDS
# Both builds at once, before any test: the testbed tests measure rates and count every packet
# against the hosts' CPUs, and a build beside them (even at idle priority) changed what they
# measured — a TCP test 1.6 % under its ceiling, loss left unattributed, a host named from
# CPUs the build kept busy. (setsid: its own process group, which the summary stops if the
# suite ends first.)
setsid env NP_SETUP_PACKAGES=none bash scripts/setup.sh >build/test-sh-build.log 2>&1 &
build_pid=$!
t_build=$SECONDS
phase "build: sanitized + fuzz (clang)" env NP_SETUP_PACKAGES=none bash scripts/setup.sh --sanitized
build_status=0
wait "$build_pid" || build_status=$?
build_pid=""
if [ "$build_status" != 0 ]; then
    tail -n 80 build/test-sh-build.log >&2
    echo "test.sh: the product's build failed (build/test-sh-build.log)" >&2
    exit 1
fi
printf '%s\t%s\n' "build: product (g++), beside it" "$((SECONDS - t_build))" >>"$results/phases"
if ! wait "$packages_pid"; then
    cat build-san/test-sh-packages.log >&2
    exit 3
fi
printf '%s\t%s\n' "packages: the rest, during the builds" "$((SECONDS - t_packages))" >>"$results/phases"

rm -f build-san/sanitizer.*
export ASAN_OPTIONS="log_path=$PWD/build-san/sanitizer:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$PWD/build-san/sanitizer:print_stacktrace=1:halt_on_error=1"
status=0
slots=$(sed -n 's/^NP_TESTBED_SLOTS:STRING=//p' build-san/CMakeCache.txt)
# The testbed tests held to a rate (label testbed-rated: tests/testbed) first, in a run of their
# own: nothing beside them but each other (half the CPU resource each, or all of it, as each
# declares); the slots stay up for the others (-FC: without the fixture's cleanup).
# `run --local` (run.local_1g) is left to the product's run at the end: it is the main job as
# shipped, and the sanitized np-explain and np-probe take the same run over SSH in every other
# testbed test.
ctest_run sanitized-testbeds-rated build-san -L '^testbed-rated$' -E '^run\.local_1g$' \
    -FC np_testbed -j"$slots" "$@" || status=$?
# Then the other testbed tests, a slot each, in the background, on the slots already up (the
# fixture's setup left out: it would take them down and up again) and taking them down at the
# end: they mostly wait (a node's slow shell, a grace period, a timeout), and the tests that
# need no testbed fill the CPU they leave, at the lowest priority (nice 19): at the default one
# they and the testbed tests each took twice as long (the unit tests 272 s against 200, the
# testbed tests 464 against 239). The kernel tests follow the unit tests there, the sanitized
# ones, then the product's, each one test at a time (RUN_SERIAL): they count frames
# rather than time them and mostly wait on their own fixed-length iperf3 runs, so they fill the
# background run's tail, when the testbed tests leave the CPUs 20 to 40 % idle, instead of adding
# ~100 s after it (docs/performance.md: both builds' at once there, one run in four counted 422
# of iperf3's 446 retransmits).
set -m  # the background CTest run in a process group of its own, which the summary can stop
QUIET=1 ctest_run sanitized-testbeds build-san -L testbed -LE 'rated|fixture' -FS np_testbed \
    -j"$slots" "$@" &
testbeds_pid=$!
set +m
echo "test.sh: the other testbed tests run in the background (their output follows when they end)"
# 5 s a target: the phase is CPU the testbed tests beside it need (the suite's 15 minutes:
# docs/performance.md); the fuzzing that finds things runs for minutes on its own.
export NP_FUZZ_SECONDS=${NP_FUZZ_SECONDS:-5}
if [ "$NP_FUZZ_SECONDS" != 0 ]; then
    phase "fuzz: every target, ${NP_FUZZ_SECONDS} s each (nice 19)" \
        env -u ASAN_OPTIONS -u UBSAN_OPTIONS nice -n 19 bash scripts/fuzz.sh || status=$?
fi
# The unit, CLI and browser tests, sanitized, then the product's (its man pages, its package and
# the bench's smoke run too).
NICE=19 ctest_run sanitized build-san -j"$jobs" -LE 'testbed|kernel' "$@" || status=$?
(
    unset ASAN_OPTIONS UBSAN_OPTIONS
    NICE=19 ctest_run product build -j"$jobs" -LE 'testbed|kernel' "$@"
) || status=$?
# The kernel tests: the sanitized build's those of np-probe's own process (label
# kernel-userspace: tests/probe/CMakeLists.txt), the product's all of them.
ctest_run sanitized-kernel build-san -L kernel-userspace "$@" || status=$?
(
    unset ASAN_OPTIONS UBSAN_OPTIONS
    ctest_run product-kernel build -L kernel "$@"
) || status=$?
testbeds_status=0
wait "$testbeds_pid" || testbeds_status=$?
testbeds_pid=""
cat build-san/Testing/test-sh-sanitized-testbeds.log
[ "$testbeds_status" = 0 ] || status=$testbeds_status
# Then `run --local`, the main job, as shipped, alone.
unset ASAN_OPTIONS UBSAN_OPTIONS
ctest_run product-run-local build -R '^run\.local_1g$' "$@" || status=$?

if [ -x build-san/tests/faults/np_fault_tables ]; then
    build-san/tests/faults/np_fault_tables --clear || true  # printed, the rows leave /run
fi
if compgen -G "build-san/sanitizer.*" >/dev/null; then
    echo "sanitizers: reports in build-san/sanitizer.*" >&2
    head -n 60 build-san/sanitizer.* >&2
    exit 1
fi
[ "$status" = 0 ] || exit "$status"
echo "sanitizers: the unit, CLI, kernel and testbed tests ran clean under ASan+UBSan (build-san/)"
