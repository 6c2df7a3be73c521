#!/usr/bin/env bash
# The house by its floors (docs/design.md, "Parts and the direction of dependency"): every
# product folder includes only from the floors below it and from itself, and the README stays
# a newcomer's length.
#   house.sh SOURCE_DIR
set -euo pipefail
cd "$1"
failures=0
fail() {
    echo "house: $*" >&2
    failures=$((failures + 1))
}

# What each floor may include, itself included (the design's table, drawn as rules).
declare -A may=(
    [common]="common"
    [analysis/readers]="common analysis/readers"
    [analysis/explanation]="common analysis/readers analysis/explanation"
    [rundir]="common analysis/readers analysis/explanation rundir"
    [report]="common analysis/readers analysis/explanation rundir report"
    [src/remote]="common src/remote"
    [src/experiment]="common analysis/readers analysis/explanation rundir src/remote src/experiment"
    [src/probe]="common src/probe"
    [src/cli]="common analysis/readers analysis/explanation rundir report src/experiment src/cli"
    [src/docgen]="common src/probe src/cli src/docgen"
)

# The floor of a path: analysis/X and src/X are floors of their own, else the top folder.
floor_of() {
    case $1 in
        analysis/* | src/*) cut -d/ -f1-2 <<<"$1" ;;
        *) echo "${1%%/*}" ;;
    esac
}

# Every C++ source of the product is on a floor the table knows.
while IFS= read -r f; do
    fl=$(floor_of "$f")
    [[ -n ${may[$fl]+x} ]] || fail "$f: folder $fl is not a floor of docs/design.md's table (add it there and here)"
done < <(git ls-files -- '*.cpp' '*.hpp' '*.cpp.in' | grep -Ev '^(tests|fuzz|bench|bpf|tutorial)/')

# No include reaches up: "X/…" included from floor F must be a floor F may use.
for fl in "${!may[@]}"; do
    while IFS=: read -r file inc; do
        target=$(floor_of "$inc")
        [[ $target == generated ]] && continue # build-tree files of the floor itself
        [[ " ${may[$fl]} " == *" $target "* ]] ||
            fail "$file includes \"$inc\": $fl may use only ${may[$fl]}"
    done < <(git grep -hoE '^#include "[a-z_]+/[^"]+"' -- "$fl/*.cpp" "$fl/*.hpp" "$fl/*.cpp.in" 2>/dev/null |
        sed -E 's/^#include "(.*)"/\1/' | sed "s|^|$fl:|" || true)
done

# The README is for a newcomer: what it does, the two commands, one real output, how to read it,
# the subcommands in a line each; the rest is in docs/.
size=$(wc -c <README.md)
[[ $size -le 16384 ]] || fail "README.md is $size bytes, more than 16 KiB: move reference to docs/"

if [[ $failures -gt 0 ]]; then exit 1; fi
echo "house: ${#may[@]} floors, every include downward; README.md $size bytes"
