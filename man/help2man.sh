#!/bin/sh
# Writes the man page of `daolease [COMMAND]` from its own --help text
# (help2man): the help text is the one source of the pages, so they cannot
# drift from what the binary says.
#   help2man.sh DAOLEASE VERSION OUT "ONE-LINE NAME" [COMMAND]
set -eu
exe=$1 version=$2 out=$3 name=$4 cmd=${5:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
prog=daolease${cmd:+-$cmd}
# help2man runs PROGRAM --help; the wrapper makes `daolease-status --help`
# mean `daolease status --help` and gives the page its name.
printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$exe" "$cmd" > "$dir/$prog"
chmod +x "$dir/$prog"
help2man --no-info --version-string="$version" --name="$name" \
  --section=1 --source=daolease --manual="daolease manual" \
  --output="$out" "$dir/$prog"
