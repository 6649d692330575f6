#!/usr/bin/env bash
# CI: the packages and the wheel as an operator installs them
# (docs/install.md). Builds the Debian packages (scripts/package.sh),
# unpacks them into a throw-away root (dpkg -x) and runs from the installed
# files only: `daolease demo`, a C program built with
# `pkg-config --cflags --libs daolease` against the installed headers and
# library, and `python3 -c` importing the installed package and claiming one
# lease against a `daolease judge` process. Checks the judge's unit
# (systemd-analyze verify) and the exit status 78 of a missing
# configuration. Then builds the wheel and sdist offline, installs the
# wheel into a fresh venv and claims the same lease with the installed
# library, and without it checks the one-line ImportError.
#   package_test.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
t0=$(date +%s)
step() { echo "package-test: $* ($(( $(date +%s) - t0 )) s)"; }

# --no-build: test the packages already in build-deb/
if [ "${1:-}" != --no-build ]; then
  bash scripts/package.sh build-deb
  step "packages built"
fi

root=$(mktemp -d /tmp/daolease-root.XXXXXX)
work=$(mktemp -d /tmp/daolease-pt.XXXXXX)
judge_pid=
cleanup() {
  [ -n "$judge_pid" ] && kill "$judge_pid" 2> /dev/null || true
  rm -rf "$root" "$work"
}
trap cleanup EXIT
for deb in build-deb/*.deb; do
  dpkg -x "$deb" "$root"
done
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=$root/usr/lib/$arch
bin=$root/usr/bin/daolease
test "$(objdump -p "$libdir/libdaolease.so.1" | awk '/SONAME/ {print $2}')" = libdaolease.so.1
# nothing of the source tree or its build is reachable from here on
cd "$work"
unset DAOLEASE_LIB DAOLEASE_BUILD DAOLEASE_BIN PYTHONPATH
export LD_LIBRARY_PATH=$libdir

# 1. the command: the demo, from the installed binary
"$bin" demo --dir "$work/demo" > demo.out 2>&1 || { cat demo.out; exit 1; }
grep -q "demo passed: every item done exactly once, audit clean" demo.out || { cat demo.out; exit 1; }
step "daolease demo from the package"

# 2. a C program against the installed headers, daolease.pc and library
export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
flags=$(pkg-config --cflags --libs daolease)
case "$flags" in *"$root"/usr/include*) ;; *) echo "pkg-config: $flags"; exit 1 ;; esac
mkdir fp
cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror "$src/docs/examples/first_pass.c" -o first_pass $flags
ldd ./first_pass | grep -q "$libdir/libdaolease.so.1" || { ldd ./first_pass; exit 1; }
./first_pass fp > fp.out 2>&1 || { echo "first_pass: exit $?"; cat fp.out; exit 1; }
grep -q 'granted lease 1 to agent-1' fp.out && grep -q 'reclaim lease 1: silence' fp.out ||
  { cat fp.out; exit 1; }
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
step "a C program built with pkg-config against libdaolease-dev"

# 3. python3-daolease: one lease claimed against a judge process
claim='
import json, os, subprocess, sys, time
import daolease
d, exe, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
assert daolease.__file__.startswith(prefix), daolease.__file__
os.makedirs(d)
ring = [daolease.keygen("arbiter", d), daolease.keygen("agent-1", d)]
with open(os.path.join(d, "keyring"), "w") as f:
    f.write("\n".join(ring) + "\n")
daolease.Stream.create(os.path.join(d, "agent-1.dls")).close()
def put(name, obj):
    with open(os.path.join(d, name), "w") as f:
        json.dump(obj, f)
put("judge.json", {"party": "arbiter", "key": "arbiter.secret", "keyring": "keyring",
                   "journal": "journal.dls", "media": ["agent-1.dls"],
                   "create_journal": True, "cadence": {"ms": 100}})
put("agent-1.json", {"party": "agent-1", "key": "agent-1.secret", "keyring": "keyring",
                     "grantor": "arbiter", "journal": "journal.dls", "medium": "agent-1.dls"})
judge = subprocess.Popen([exe, "judge", "--config", os.path.join(d, "judge.json")],
                         stdout=subprocess.DEVNULL)
try:
    for _ in range(500):
        if os.path.exists(os.path.join(d, "journal.dls")):
            break
        time.sleep(0.02)
    with daolease.Holder.from_config(os.path.join(d, "agent-1.json")) as h:
        with h.claim("item-1", duration={"s": 2}, wait=30) as lease:
            assert lease.may_act()
            token = lease.token
finally:
    judge.terminate()
    status = judge.wait(20)
assert status == 0, status
print(f"claimed item-1 under lease {token} ({daolease.LIBRARY_PATH})")
'
/usr/bin/python3 -c 'import daolease' 2> /dev/null && { echo "daolease importable before install"; exit 1; }
PYTHONPATH=$root/usr/lib/python3/dist-packages \
  /usr/bin/python3 -c "$claim" "$work/deb-claim" "$bin" "$root/" | tee py.out
grep -q 'under lease 1 (libdaolease.so.1)' py.out
step "python3 -c: one lease claimed with python3-daolease"

# 4. the unit: systemd-analyze verify (ExecStart pointed at the unpacked
# binary: verify checks it exists), the exit status of a missing config
unit=$root/lib/systemd/system/daolease-judge@.service
grep -qx 'Type=notify' "$unit" && grep -qx 'RestartPreventExitStatus=78' "$unit"
grep -q '^WatchdogSec=' "$unit"
mkdir units
standby=$root/lib/systemd/system/daolease-judge-standby@.service
grep -qx "ExecStart=/usr/bin/daolease judge --standby --config /etc/daolease/%i.json" "$standby"
for u in daolease-judge@ daolease-judge-standby@; do
  sed "s|^ExecStart=/usr/bin/daolease|ExecStart=$bin|" "$root/lib/systemd/system/$u.service" > "units/$u.service"
done
if command -v systemd-analyze > /dev/null; then
  (cd units && systemd-analyze verify --man=no ./daolease-judge@demo.service \
     ./daolease-judge-standby@demo.service) > verify.out 2>&1 || true
  if [ -s verify.out ]; then cat verify.out; exit 1; fi
  step "systemd-analyze verify daolease-judge@demo.service daolease-judge-standby@demo.service: clean"
else
  step "systemd-analyze not installed: unit not verified"
fi
set +e
"$bin" judge --config "$work/etc-daolease/missing.json" > /dev/null 2> missing.err
rc=$?
set -e
[ "$rc" -eq 78 ] && [ "$(wc -l < missing.err)" -eq 1 ] || { echo "exit $rc"; cat missing.err; exit 1; }
step "a missing configuration: exit 78, one line: $(cat missing.err)"

# 5. the wheel and sdist, built offline, in a fresh venv
cp -r "$src/python" pysrc
rm -rf pysrc/tests pysrc/build pysrc/*.egg-info
/usr/bin/python3 -m build --no-isolation --wheel --sdist --outdir dist pysrc > build.out 2>&1 ||
  { cat build.out; exit 1; }
ls dist/daolease-*.whl dist/daolease-*.tar.gz
/usr/bin/python3 -m venv --system-site-packages venv
venv/bin/pip install -q --no-index --no-deps dist/daolease-*.whl
venv/bin/python -c "$claim" "$work/wheel-claim" "$bin" "$work/venv/" | tee wheel.out
grep -q 'under lease 1 (libdaolease.so.1)' wheel.out
# without the library: one clear ImportError (when none is installed here)
if ! LD_LIBRARY_PATH= /usr/bin/python3 -c 'import ctypes; ctypes.CDLL("libdaolease.so.1")' 2> /dev/null; then
  set +e
  LD_LIBRARY_PATH= venv/bin/python -c 'import daolease' 2> missing-lib.err
  rc=$?
  set -e
  [ "$rc" -ne 0 ] && grep -q 'ImportError: daolease: the C library libdaolease (libdaolease.so.1) is not installed' missing-lib.err ||
    { cat missing-lib.err; exit 1; }
  step "without libdaolease1: $(tail -n 1 missing-lib.err | cut -c1-150)..."
fi
cp dist/* "$src/build-deb/"
step "the wheel in a fresh venv: one lease claimed"
echo "package-test: ok in $(( $(date +%s) - t0 )) s"
