#!/usr/bin/env bash
# The layer rules of docs/architecture.md ("Layers"), checked on includes and
# calls (issue 14 item 7). Usage:
#
#   check_layers.sh ROOT              check the tree at ROOT
#   check_layers.sh --self-test ROOT  prove the check can fail: on a temporary
#                                     copy of ROOT, plant one violation of
#                                     each rule in turn (an include or a
#                                     call) and expect this script to fail
#                                     naming that rule; the unplanted copy
#                                     must pass
#
# A component is a top-level folder; a public header belongs to the
# component that implements it (include/daolease/<h>.h below). Comment lines
# (starting with /*, * or //) are skipped, so prose may name anything.
set -u

# The component an include names ("vocab/mp.h", "daolease/judge.h", …),
# into $comp; a public header belongs to the component that implements it.
comp_of_include() {
  case "$1" in
    daolease/error.h|daolease/fact.h|daolease/mark.h|daolease/export.h) comp=vocab ;;
    daolease/stream.h|daolease/medium_impl.h|daolease/redis.h) comp=stream ;;
    daolease/attrib.h) comp=resolver ;;
    daolease/judge.h) comp=judge ;;
    daolease/holder.h) comp=holder ;;
    daolease/host.h) comp=host ;;
    daolease/audit.h) comp=audit ;;
    daolease/tick.h) comp=adapters ;;
    daolease/*) comp=unknown ;;
    */*) comp=${1%%/*} ;;
    *) comp=local ;;
  esac
}

# Code lines (comments skipped) of the C files under the given folders, as
# FILE:LINE:TEXT.
code_lines() {
  local root=$1; shift
  local d
  for d in "$@"; do
    [ -d "$root/$d" ] || continue
    grep -rnE --include='*.c' --include='*.h' '' "$root/$d" 2>/dev/null
  done | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*|//)'
}

fails=0
report() { # RULE FILE:LINE:TEXT
  echo "layer rule broken: $1"
  echo "  ${2#"$ROOT"/}"
  fails=$((fails + 1))
}

# rule_includes NAME "FROM-FOLDERS" "FORBIDDEN-COMPONENTS" [EXCEPT-REGEX]
rule_includes() {
  local name=$1 from=$2 forbidden=$3 line h f comp
  local re='^[^:]+:[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"]'
  # shellcheck disable=SC2086
  while IFS= read -r line; do
    [[ $line =~ $re ]] || continue
    h=${BASH_REMATCH[1]}
    comp_of_include "$h"
    for f in $forbidden; do
      [ "$comp" = "$f" ] && report "$name (includes $h)" "$line"
    done
  done < <(code_lines "$ROOT" $from | grep -E '#[[:space:]]*include')
}

# rule_calls NAME "FROM-FOLDERS" 'CALL-REGEX'
rule_calls() {
  local name=$1 from=$2 re=$3 line
  # shellcheck disable=SC2086
  while IFS= read -r line; do
    report "$name (calls $(printf '%s\n' "$line" | grep -oE "$re" | head -1))" "$line"
  done < <(code_lines "$ROOT" $from | grep -E "$re")
}

core="vocab stream resolver judge holder host audit adapters include"
judge_calls='\b(dls_judge_[a-z_]+|j(l|a|j|p|r|pool|vec|tab|heap)_[a-z_]+)[[:space:]]*\('
holder_calls='\bdls_holder_[a-z_]+[[:space:]]*\('
stream_calls='\bdls_(medium|cursor|stream)_[a-z_]+[[:space:]]*\('
cli_calls='\bdls_(cli|cmd|json|jbuf)_[a-z_]+[[:space:]]*\('

check_tree() {
  ROOT=$1
  fails=0
  # 1. vocabulary ↛ stream: the codec knows no media (nor anything above it)
  rule_includes "1 vocabulary -> stream" "vocab" "stream resolver judge holder host audit adapters cli"
  rule_calls "1 vocabulary -> stream" "vocab" "$stream_calls"
  # 2. stream ↛ judge: media carry bytes and never ask the judge
  rule_includes "2 stream -> judge" "stream" "judge holder audit"
  rule_calls "2 stream -> judge" "stream" "$judge_calls"
  # 3. resolver ↛ judge: attribution answers who, never what counts
  rule_includes "3 resolver -> judge" "resolver" "judge holder audit"
  rule_calls "3 resolver -> judge" "resolver" "$judge_calls"
  # 4. resolver ↛ stream: attribution is sans-IO (bytes in, author out)
  rule_includes "4 resolver -> stream" "resolver" "stream"
  rule_calls "4 resolver -> stream" "resolver" "$stream_calls"
  # 5. judge ↛ holder
  rule_includes "5 judge -> holder" "judge" "holder"
  rule_calls "5 judge -> holder" "judge" "$holder_calls"
  # 6. holder ↛ judge
  rule_includes "6 holder -> judge" "holder" "judge"
  rule_calls "6 holder -> judge" "holder" "$judge_calls"
  # 7. audit ↛ judge ledger: the audit re-executes, it never borrows the
  #    judge's ledger, pass or tables
  rule_includes "7 audit -> judge" "audit" "judge"
  rule_calls "7 audit -> judge" "audit" "$judge_calls"
  # 8. core ↛ CLI: the library never includes or calls the command's code
  rule_includes "8 core -> CLI" "$core" "cli"
  rule_calls "8 core -> CLI" "$core" "$cli_calls"
  return $((fails > 0))
}

# Plants for the self-test: RULE-NUMBER FILE TEXT (appended to FILE).
plants=(
  '1|vocab/error.c|#include "stream/internal.h"'
  '2|stream/file.c|static void planted(void) { dls_judge_pass(0, 0, 0); }'
  '3|resolver/resolver.c|#include "daolease/judge.h"'
  '4|resolver/keyring.c|static void planted(void) { dls_cursor_next(0, 0, 0); }'
  '5|judge/ledger.c|#include "daolease/holder.h"'
  '6|holder/holder.c|static void planted(void) { jl_find(0, 0); }'
  '7|audit/audit.c|#include "judge/internal.h"'
  '8|vocab/fact.c|static void planted(void) { dls_cli_error("x", "y"); }'
)

self_test() {
  local src=$1 ok=0 bad=0 p rule file text out
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for d in vocab stream resolver judge holder host audit adapters include cli; do
    [ -d "$src/$d" ] && cp -r "$src/$d" "$tmp/"
  done
  if out=$(check_tree "$tmp" 2>&1); then
    ok=$((ok + 1))
  else
    echo "self-test: the unplanted copy fails:"; echo "$out"; bad=$((bad + 1))
  fi
  for p in "${plants[@]}"; do
    IFS='|' read -r rule file text <<<"$p"
    if [ ! -f "$tmp/$file" ]; then
      # the file moved: plant in any C file of the same folder
      file=$(cd "$tmp" && ls "${file%%/*}"/*.c | head -1)
    fi
    cp "$tmp/$file" "$tmp/.saved"
    printf '\n%s\n' "$text" >>"$tmp/$file"
    if out=$(check_tree "$tmp" 2>&1); then
      echo "self-test: rule $rule: a planted violation in $file passed the check"; bad=$((bad + 1))
    elif ! printf '%s\n' "$out" | grep -q "layer rule broken: $rule "; then
      echo "self-test: rule $rule: the check failed but did not name the rule:"; echo "$out"
      bad=$((bad + 1))
    else
      ok=$((ok + 1))
    fi
    mv "$tmp/.saved" "$tmp/$file"
  done
  echo "$ok passed, $bad failed"
  [ "$bad" -eq 0 ]
}

if [ "${1:-}" = "--self-test" ]; then
  self_test "${2:?source root}"
  exit $?
fi
root=${1:?source root}
if check_tree "$root"; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
  exit 1
fi
