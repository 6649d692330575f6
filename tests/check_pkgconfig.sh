#!/bin/sh
# The uninstalled pkg-config file (meson-uninstalled/daolease-uninstalled.pc)
# lets a program outside the tree build against the build tree: its Cflags
# name ${srcdir}/include, where <daolease/*.h> live (issue 15 item 4; it
# said -I${srcdir}, the source root, before).
#   check_pkgconfig.sh BUILD_ROOT
set -eu
build=$1
command -v pkg-config >/dev/null || { echo "no pkg-config: skipped"; exit 77; }
export PKG_CONFIG_PATH="$build/meson-uninstalled"
cflags=$(pkg-config --cflags daolease)
libs=$(pkg-config --libs daolease)
echo "cflags: $cflags"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/t.c" <<'C'
#include <daolease/judge.h>
#include <daolease/judge_view.h>
#include <daolease/owner.h>
int main(void) { return dls_owner_judge(NULL) != NULL; }
C
${CC:-cc} -std=c11 $cflags "$tmp/t.c" -o "$tmp/t" $libs
LD_LIBRARY_PATH="$build" "$tmp/t"
echo "ok: built and ran against the build tree"
