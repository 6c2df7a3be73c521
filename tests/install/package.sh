#!/usr/bin/env bash
# The Debian package as a user gets it: built by cpack from the build tree's configuration
# (what `cmake --build build --target package` runs), its control fields, and the programs run
# from a root it is extracted into (dpkg-deb -x), with a bare environment, so nothing of the
# build or source tree is found unless the package put it there.
#   package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
tmp=$(mktemp -d /tmp/np-package-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "package: $*" >&2
    exit 1
}
has() { grep -qF -- "$2" <<<"$1"; }

# ---- the package ----
cpack --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 ||
    fail "cpack failed: $(cat "$tmp/cpack.log")"
debs=("$tmp"/out/np-explain_*.deb)
[[ -f ${debs[0]} && ${#debs[@]} -eq 1 ]] || fail "cpack wrote no single np-explain_*.deb"
deb=${debs[0]}

version_line=$("$build/src/cli/np-explain" --version) # np-explain 0.1.0 (git a957331)
version=$(cut -d' ' -f2 <<<"$version_line")
arch=$(dpkg --print-architecture)
[[ $(basename "$deb") == "np-explain_${version}_${arch}.deb" ]] ||
    fail "$(basename "$deb") is not np-explain_${version}_${arch}.deb"
[[ $(dpkg-deb -f "$deb" Package) == np-explain ]] || fail "Package is not np-explain"
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "Version is not $version"
outside=$(dpkg-deb -c "$deb" | awk '$6 !~ /^\.\/(usr\/)?$/ && $6 !~ /^\.\/usr\// {print $6}')
[[ -z $outside ]] || fail "files outside /usr: $outside"

root=$tmp/root
dpkg-deb -x "$deb" "$root"
bin=$root/usr/bin
for f in "$bin/np-explain" "$bin/np-probe" "$root/usr/share/np-explain/testbed.sh"; do
    [[ -x $f ]] || fail "no executable ${f#"$root"}"
done

# ---- its dependencies ----
# Each shared library np-explain links comes from a package the package depends on (as
# dpkg-shlibdeps computed them); np-probe links none, being uploaded to nodes as it is.
depends=$(dpkg-deb -f "$deb" Depends)
depend_names=$(tr ',|' '\n\n' <<<"$depends" | sed 's/(.*)//; s/^ *//; s/ *$//')
needed=$(objdump -p "$bin/np-explain" | awk '$1 == "NEEDED" {print $2}')
libraries=$(ldd "$bin/np-explain")
for lib in $needed; do
    path=$(awk -v l="$lib" '$1 == l {print $3}' <<<"$libraries")
    owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null) ||
        fail "no installed package owns $lib ($path)"
    owner=${owner%%:*}
    grep -qxF -- "$owner" <<<"$depend_names" || fail "Depends lacks $owner (for $lib): $depends"
done
for tool in iperf3 iputils-ping iproute2; do
    grep -qxF -- "$tool" <<<"$depend_names" || fail "Depends lacks $tool: $depends"
done
probe_needs=$(objdump -p "$bin/np-probe" | awk '$1 == "NEEDED"')
[[ -z $probe_needs ]] || fail "np-probe is not static: $probe_needs"
# What `apt install ./np-explain_*.deb` would do, against this machine's packages.
simulated=$(apt-get install --simulate --no-install-recommends "$deb" 2>&1) ||
    fail "the dependencies are not satisfiable here: $simulated"
has "$simulated" "Inst np-explain " || fail "apt would not install it: $simulated"

# ---- the installed programs ----
bare() { env -i PATH=/usr/bin:/bin LC_ALL=C.UTF-8 HOME="$tmp" "$@"; }
[[ $(bare "$bin/np-explain" --version) == "$version_line" ]] || fail "np-explain --version"
[[ $(bare "$bin/np-probe" --version) == "np-probe ${version_line#np-explain }" ]] ||
    fail "np-probe --version: $(bare "$bin/np-probe" --version)"
model=$(bare "$bin/np-explain" model --link 1G) || fail "model exited $?"
has "$model" "941.48 Mbit/s" || fail "model --link 1G: $model"
explained=$(bare "$bin/np-explain" explain --link 1G \
    "$source/tests/fixtures/handwritten/iperf3-3.12-tcp-1g-941.json") || fail "explain exited $?"
has "$explained" "line-rate bound" || fail "explain: $explained"

# `probe` runs the np-probe installed beside np-explain: its own message (no such interface,
# or not root) shows it was found; the probe stops there, before any BPF is loaded.
status=0
message=$(bare "$bin/np-explain" probe --iface np-no-such0 2>&1 >/dev/null) || status=$?
[[ $status -eq 3 && $message == np-probe:* ]] || fail "probe (exit $status): $message"

# `run --local` runs the testbed script installed in share/np-explain. Unprivileged, the script
# refuses at its first line ("needs root") and the error names the script that was run.
chmod 755 "$tmp"
unprivileged=()
[[ $(id -u) -ne 0 ]] || unprivileged=(setpriv --reuid=65534 --regid=65534 --clear-groups)
status=0
message=$(cd "$tmp" && bare "${unprivileged[@]}" "$bin/np-explain" run --local 2>&1) ||
    status=$?
[[ $status -eq 3 ]] && has "$message" "$root/usr/share/np-explain/testbed.sh up exited 3" ||
    fail "run --local (exit $status) did not run the installed testbed.sh: $message"

# ---- man pages and completion ----
for program in np-explain np-probe; do
    page=$(LC_ALL=C MANWIDTH=100 man -l "$root/usr/share/man/man1/$program.1.gz" 2>&1) ||
        fail "man -l $program.1.gz: $page"
    has "$page" "EXIT STATUS" || fail "$program.1.gz renders without EXIT STATUS: $page"
    has "$page" "$program $version" || fail "$program.1.gz does not name version $version"
    bash -c "source '$root/usr/share/bash-completion/completions/$program' && complete -p $program" \
        >/dev/null || fail "the completion of $program does not load"
done
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KB) installs and runs from a dpkg-deb -x root"
