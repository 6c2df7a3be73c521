#!/usr/bin/env bash
# The man page and the bash completion say what the program's own --help says: every
# subcommand and every option and positional --help lists has an entry in the page (under its
# command) and is offered by the completion; every environment variable the program's sources
# read is in the page's ENVIRONMENT section.
#   docs_cover_cli.sh PROGRAM MAN_PAGE COMPLETION SOURCE_DIR...
set -euo pipefail
bin=$1 page=$2 completion=$3
shift 3
prog=$(basename "$bin")
failures=0
fail() {
    echo "$prog: $*" >&2
    failures=$((failures + 1))
}

# What --help lists: "Subcommands:", "Options:" (first column, split at commas) and
# "Positionals:" (the name before the type and CLI11's marks, e.g. "NODE_A NODE_B" of
# "NODE_A NODE_B TEXT x 2 REQUIRED").
help_list() { # SECTION COMMAND_WORDS...
    local section=$1
    shift
    "$bin" "$@" --help | awk -v want="$section" '
        /^[A-Z][A-Za-z]*:$/ { section = $0; next }
        section != want ":" || !/^  [^ ]/ { next }
        want == "Options" { n = split($1, names, ","); for (i = 1; i <= n; i++) print names[i]; next }
        want == "Subcommands" { print $1; next }
        {
            sub(/^  /, ""); sub(/  +.*/, "")
            sub(/ REQUIRED$/, ""); sub(/ x [0-9]+$/, ""); sub(/ \.\.\.$/, "")
            sub(/ [^ ]+$/, ""); print
        }'
}

# The page as a reader sees it, one paragraph per line.
text=$(LC_ALL=C MANWIDTH=10000 man -l "$page" 2>/dev/null | col -b)
[[ -n $text ]] || fail "man -l $page rendered nothing"

# The lines of a section (top-level heading) or of a command's subsection.
man_section() { awk -v h="$1" '/^[A-Z]/ { on = ($0 == h); next } on' <<<"$text"; }
man_command() {
    awk -v p="   $prog $1" '
        /^[A-Z]/ { on = 0; next }
        /^   [^ ]/ { on = (index($0 " ", p " ") == 1); next }
        on' <<<"$text"
}

# An option's entry: "       --link TEXT", "       -h, --help", "       NODE_A NODE_B".
has_entry() { grep -qE "^ {7}([^ ]+, )*$2(,| |\$)" <<<"$1"; }

# What the completion offers for the command line WORDS... (the last one being completed).
# shellcheck disable=SC1090
source "$completion"
function=$(complete -p "$prog" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[[ -n $function ]] || fail "$completion registers no completion function for $prog"
offered() {
    COMP_WORDS=("$prog" "$@")
    COMP_CWORD=$#
    COMPREPLY=()
    "$function"
    printf '%s\n' "${COMPREPLY[@]}"
}

# The program itself, then each subcommand ($sub empty: the program).
commands=("" $(help_list Subcommands))
for sub in "${commands[@]}"; do
    words=(${sub:+"$sub"})
    if [[ -z $sub ]]; then
        entries=$(man_section OPTIONS)
        [[ ${#commands[@]} -eq 1 ]] || for s in "${commands[@]:1}"; do
            [[ -n $(man_command "$s") ]] || fail "man page: no section for command '$s'"
            grep -qxF -- "$s" <<<"$(offered "${s:0:1}")" ||
                fail "completion: does not offer command '$s'"
        done
    else
        entries=$(man_command "$sub")
    fi
    while IFS= read -r name; do
        [[ -n $name ]] || continue
        # --help is documented once, under OPTIONS, for every command.
        [[ -n $sub && ($name == --help || $name == -h) ]] && continue
        has_entry "$entries" "$name" || fail "man page: no entry for '${sub:+$sub }$name'"
    done < <(help_list Options "${words[@]}"; help_list Positionals "${words[@]}")
    completions=$(offered "${words[@]}" -)
    while IFS= read -r option; do
        grep -qxF -- "$option" <<<"$completions" ||
            fail "completion: '$prog ${sub:+$sub }-' does not offer $option"
    done < <(help_list Options "${words[@]}")
done

# Environment variables the sources read, documented.
environment=$(man_section ENVIRONMENT)
for var in $(grep -rhoE 'getenv\("[A-Za-z_][A-Za-z0-9_]*"\)' "$@" | sed 's/getenv("\(.*\)")/\1/' | sort -u); do
    has_entry "$environment" "$var" || fail "man page: ENVIRONMENT does not name $var"
done

if ((failures)); then
    echo "$prog: $failures documentation gaps" >&2
    exit 1
fi
echo "$prog: man page and completion cover ${#commands[@]} command(s) of --help"
