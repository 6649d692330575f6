#!/usr/bin/env bash
# completion/daolease.bash: sourcing it registers `complete -F _daolease
# daolease`, and it completes commands, verbs and long options from the
# binary's own --help texts.
#   check_completion.sh SOURCE_ROOT BUILD_ROOT
set -u
src=${1:?usage: check_completion.sh SOURCE_ROOT BUILD_ROOT} build=${2:?}
export PATH=$build/cli:$PATH
# shellcheck source=/dev/null
source "$src/completion/daolease.bash"
fail=0
no() { echo "FAIL: $*"; fail=1; }
[ "$(complete -p daolease)" = "complete -o filenames -F _daolease daolease" ] ||
  no "complete -p daolease: $(complete -p daolease 2>&1)"
t() { # t "EXPECTED WORDS" WORD...
  local want=$1; shift
  COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
  _daolease
  [ "${COMPREPLY[*]}" = "$want" ] || no "'$*' completed to '${COMPREPLY[*]}', not '$want'"
}
t "stream status" daolease st
t "--journal" daolease status --jo
t "create seal repair" daolease stream ""
t "encode" daolease fact e
t "--follow --from" daolease dump --f
[ "$fail" -eq 0 ] && echo "completion: 5 cases passed"
exit "$fail"
