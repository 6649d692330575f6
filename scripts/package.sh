#!/usr/bin/env bash
# Builds the Debian packages from this tree with Debian's own tools
# (docs/install.md, Building the packages): libdaolease1, libdaolease-dev,
# daolease, python3-daolease, into build-deb/ (or the folder given as $1),
# with lintian's report beside them (lintian.txt). The build runs in a copy
# of the tree in /tmp, since dpkg-buildpackage writes beside its source
# folder. Installs the build dependencies first (as root). Exits non-zero
# when the build fails or lintian reports an error.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
pkgs=(dpkg-dev debhelper dh-python python3-all python3-setuptools pybuild-plugin-pyproject
      python3-build python3-wheel python3-venv libsystemd-dev lintian systemd)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "package: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

out=$(realpath -m "${1:-build-deb}")
version=$(dpkg-parsechangelog -S Version)
work=$(mktemp -d /tmp/daolease-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/daolease-$version
mkdir -p "$src"
# the tree as git sees it (tracked and new files, no build folders)
if git rev-parse --git-dir > /dev/null 2>&1; then
  git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$src"
else
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$src"
fi

start=$(date +%s)
# Debian's own python3 and tools first (a python3 from pyenv or a venv
# earlier on PATH cannot import Debian's modules)
if ! (cd "$src" && PATH=/usr/sbin:/usr/bin:/sbin:/bin DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
      dpkg-buildpackage -b -us -uc > "$work/build.log" 2>&1); then
  tail -n 60 "$work/build.log"
  echo "package: dpkg-buildpackage failed (log above)" >&2
  exit 1
fi
echo "package: built in $(( $(date +%s) - start )) s" >&2
rm -rf "$out"
mkdir -p "$out"
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out"/
cp "$work/build.log" "$out/build.log"

# lintian on the binary packages: errors fail, warnings are listed
set +e
PATH=/usr/sbin:/usr/bin:/sbin:/bin lintian --tag-display-limit 0 "$out"/*.changes > "$out/lintian.txt" 2>&1
set -e
for f in "$out"/*.deb; do
  printf '%-48s %8s bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
errors=$(grep -c '^E: ' "$out/lintian.txt" || true)
warnings=$(grep -c '^W: ' "$out/lintian.txt" || true)
echo "package: lintian: $errors errors, $warnings warnings ($out/lintian.txt)"
grep -E '^(E|W): ' "$out/lintian.txt" || true
[ "$errors" -eq 0 ]
