#!/usr/bin/env bash
# The man pages (man/meson.build, from each command's --help by help2man):
# one page for daolease and each command the binary lists, each renders with
# `man -l`, names itself, and carries the command's options.
#   check_man.sh BUILD_ROOT
set -u
build=${1:?usage: check_man.sh BUILD_ROOT}
exe=$build/cli/daolease
fail=0
no() { echo "FAIL: $*"; fail=1; }
command -v man >/dev/null || { echo "SKIP: man (Debian man-db) is missing"; exit 77; }
cmds=$("$exe" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ -n "$cmds" ] || no "daolease --help lists no commands"
n=0
for c in "" $cmds; do
  page=$build/man/daolease${c:+-$c}.1
  [ -f "$page" ] || { no "no page $page for '${c:-daolease}'"; continue; }
  out=$(MANWIDTH=80 man -l "$page" 2>&1) || { no "man -l $page failed: $out"; continue; }
  echo "$out" | grep -q "^NAME" || no "$page: no NAME section"
  echo "$out" | grep -qE "daolease${c:+-$c} +- " || no "$page: does not name daolease${c:+-$c}"
  # every long option of the help text is on the page
  for o in $("$exe" $c --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
    echo "$out" | grep -q -- "$o" || no "$page: lacks $o"
  done
  n=$((n + 1))
done
extra=$(ls "$build/man" | grep -E '\.1$' | sed 's/^daolease-\{0,1\}//; s/\.1$//' | grep -vxF -e '' $(printf -- '-e %s ' $cmds))
[ -z "$extra" ] || no "pages for commands the binary does not list: $extra"
[ "$fail" -eq 0 ] && echo "man: $n pages render"
exit "$fail"
