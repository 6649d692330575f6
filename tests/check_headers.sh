#!/usr/bin/env bash
# STYLE.md 17: every public header compiles alone as C11 -pedantic and as
# C++ (extern "C" guards, no C-only constructs).
set -u
root=${1:?source root}
cc=${CC:-cc}
cxx=${CXX:-c++}
pass=0 fail=0
for h in "$root"/include/daolease/*.h; do
  name=$(basename "$h")
  if printf '#include "daolease/%s"\ntypedef int dls_header_check;\n' "$name" |
     $cc -std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$root/include" -x c - ; then
    pass=$((pass + 1))
  else
    echo "C11 -pedantic: $name does not compile alone"; fail=$((fail + 1))
  fi
  if command -v "$cxx" >/dev/null 2>&1; then
    if printf '#include "daolease/%s"\ntypedef int dls_header_check;\n' "$name" |
       $cxx -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$root/include" -x c++ - ; then
      pass=$((pass + 1))
    else
      echo "C++: $name does not compile alone"; fail=$((fail + 1))
    fi
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
