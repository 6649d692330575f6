#!/usr/bin/env bash
# The house rules of docs/style.md ("The house script"), checked on the tree
# and on the build's object files:
#
#   (a) sizes: no library file over 900 lines, no function over 120 lines;
#   (b) loops: no call loop and no include loop between library files;
#   (c) layers: every header belongs to a component, and a component includes
#       and calls only the components the LAYERS table below allows;
#   (e) comments: no library, command or fuzz-target file names a tracker
#       number ("issue 12"): comments name the doc or spec section.
#
# Usage:
#   house.sh [ROOT [BUILD]]      check ROOT (default: the tree holding this
#                                script) with the objects under BUILD
#                                (default ROOT/build; must be built)
#   house.sh --self-test [ROOT [BUILD]]
#                                on a temporary copy of ROOT and of BUILD's
#                                library objects, plant one violation of each
#                                kind (a long file, a long function, a call
#                                loop, an include loop, a layer breach by
#                                include and by call, a tracker number in a
#                                comment) and fail if any one is
#                                not caught; the unplanted copy must pass
#
# How functions are measured: each library .c file is read with comments,
# string and character literals blanked (line count kept); a function is a
# top-level brace block whose opening "{" follows a ")" (so struct, enum and
# array initialisers are not functions). Its length runs from the line of
# its name to the line of its closing brace, inclusive. This needs no
# outside tool and does not depend on the project's indentation.
#
# How calls are found: `nm` on each library object (BUILD/libdls_core.a.p/*.o)
# lists the symbols it defines and those it leaves undefined; an undefined
# symbol defined by another library object is a call (or a data reference)
# from that file to the other. Static functions never cross files, so the
# file-level graph is exact for what the linker sees. Includes are read from
# the sources' '#include "…"' lines.
set -euo pipefail

# --- the one table ---------------------------------------------------------
# Component folders, bottom first, with the components each may include and
# call (besides itself); a header name (daolease/judge.h) allows including
# that one header, for its types, and no calls. This is the intended layering of
# docs/architecture.md, "Layers"; docs/style.md explains it.
LAYERS='
vocab:
stream: vocab
resolver: vocab
checkpoint: vocab stream daolease/judge.h
adapters: vocab stream resolver host
judge: vocab stream resolver checkpoint adapters
holder: vocab stream resolver
host: vocab stream resolver holder adapters
audit: vocab stream resolver checkpoint
'
# Every public header, and every library file whose component is not its
# folder, with the component it belongs to. A public header not named here
# fails the check. The checkpoint format (the files a checkpoint is read,
# hashed and decoded with) lives in judge/ but is its own layer: the audit
# reads checkpoints through it and never touches the judge's ledger.
OWNERS='
include/daolease/error.h vocab
include/daolease/export.h vocab
include/daolease/fact.h vocab
include/daolease/mark.h vocab
include/daolease/stream.h stream
include/daolease/medium_impl.h stream
include/daolease/redis.h stream
include/daolease/jetstream.h stream
include/daolease/attrib.h resolver
include/daolease/checkpoint.h checkpoint
judge/checkpoint_codec.c checkpoint
judge/checkpoint_read.c checkpoint
judge/ckhash.c checkpoint
judge/ckhash.h checkpoint
include/daolease/judge.h judge
include/daolease/judge_view.h judge
include/daolease/owner.h judge
include/daolease/holder.h holder
include/daolease/host.h host
include/daolease/audit.h audit
include/daolease/tick.h adapters
'
# Exceptions: KIND NAME  # reason. KIND is file (over 900 lines), func
# (FILE:FUNCTION over 120 lines) or loop (a call loop, its files sorted and
# joined by " "). Each stays until the code is split.
EXCEPTIONS='
func judge/checkpoint_codec.c:read_value # one case per checkpoint field; to become a table of field readers
func audit/replay.c:au_process_mark     # one branch per mark kind; to be split by kind
loop stream/file.c stream/jetstream/jetstream.c stream/jetstream/settings.c stream/jetstream/url.c stream/medium.c stream/open.c stream/segmented.c stream/sync.c stream/tail.c stream/torn.c  # open.c and medium.c dispatch to each medium, which calls their helpers back; to split the dispatch from the helpers
loop stream/redis/append.c stream/redis/cursor.c stream/redis/fence.c stream/redis/redis.c  # fence.c and redis.c call each other; to move the shared helpers to a bottom file
loop judge/apply.c judge/assembly.c judge/checkpoint_load.c judge/journal.c judge/judge.c judge/leases.c judge/ledger.c judge/policy.c judge/replay.c judge/standby.c  # judge.c holds helpers the files below it call; to move to a bottom file
'
# ---------------------------------------------------------------------------

LIB_DIRS="vocab stream resolver judge holder host audit adapters"

analyse() { # ROOT OBJDIR
  local root=$1 objdir=$2
  python3 - "$root" "$objdir" "$LAYERS" "$OWNERS" "$EXCEPTIONS" "$LIB_DIRS" <<'PY'
import os, re, subprocess, sys
root, objdir, layers_t, headers_t, exc_t, libdirs = sys.argv[1:7]
MAX_FILE, MAX_FUNC = 900, 120
libdirs = libdirs.split()
layers = {}
for l in layers_t.strip().splitlines():
    k, _, v = l.partition(':')
    layers[k.strip()] = set(v.split())
pubhdr = dict(l.split() for l in headers_t.strip().splitlines())
exc = set()
for l in exc_t.strip().splitlines():
    l = l.split('#')[0].split()
    if l:
        exc.add((l[0], ' '.join(l[1:])))
used = set()
fails = []
def fail(kind, msg):
    fails.append(f'house: {kind}: {msg}')
def allowed(kind, name):
    if (kind, name) in exc:
        used.add((kind, name)); return True
    return False

files = []
for d in libdirs:
    for dp, dn, fn in os.walk(os.path.join(root, d)):
        dn.sort()
        for f in sorted(fn):
            if f.endswith(('.c', '.h')):
                files.append(os.path.relpath(os.path.join(dp, f), root))
hdrs = [os.path.join('include', 'daolease', f)
        for f in sorted(os.listdir(os.path.join(root, 'include', 'daolease')))
        if f.endswith('.h')]

def comp(rel):  # component of a library file
    if rel in pubhdr:
        return pubhdr[rel]
    if rel.startswith('include/'):
        return None
    return rel.split('/')[0]

def blank(src):  # comments and literals blanked, newlines kept
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('/*', i):
            j = src.find('*/', i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif src.startswith('//', i):
            j = src.find('\n', i); j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif c in '"\'':
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            out.append(c + re.sub(r'[^\n]', ' ', src[i + 1:j]) + c); i = j + 1
        else:
            out.append(c); i += 1
    return ''.join(out)

# (a) sizes
for rel in files:
    src = open(os.path.join(root, rel), encoding='utf-8', errors='replace').read()
    nl = src.count('\n')
    if nl > MAX_FILE and not allowed('file', rel):
        fail('size', f'{rel} has {nl} lines (limit {MAX_FILE})')
    if not rel.endswith('.c'):
        continue
    b = blank(src)
    b = re.sub(r'(?m)^[ \t]*#.*(\\\n.*)*', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), b)
    depth, start = 0, None
    for m in re.finditer(r'[{}]', b):
        if m.group(0) == '{':
            if depth == 0:
                head = b[:m.start()].rstrip()
                start = None
                if head.endswith(')'):
                    # the name: the identifier before the parameter list
                    k, par = len(head) - 1, 0
                    while k >= 0:
                        if head[k] == ')': par += 1
                        elif head[k] == '(':
                            par -= 1
                            if par == 0: break
                        k -= 1
                    nm = re.search(r'(\w+)\s*$', head[:k])
                    if nm:
                        start = (nm.group(1), b.count('\n', 0, nm.start(1)) + 1)
            depth += 1
        else:
            depth -= 1
            if depth == 0 and start:
                name, l0 = start
                l1 = b.count('\n', 0, m.start()) + 1
                if l1 - l0 + 1 > MAX_FUNC and not allowed('func', f'{rel}:{name}'):
                    fail('size', f'{rel}:{l0}: {name} has {l1 - l0 + 1} lines (limit {MAX_FUNC})')
                start = None

# (e) comments name the doc or spec section they rely on, never a tracker
# number (docs/style.md, Comments): the library, the command, fuzz targets
tracker = re.compile(r'\b[Ii]ssues? \d+')
extra = []
for d in ('cli', 'fuzz'):
    for dp, dn, fn in os.walk(os.path.join(root, d)):
        dn.sort()
        extra += [os.path.relpath(os.path.join(dp, f), root) for f in sorted(fn)
                  if f.endswith(('.c', '.h'))]
for rel in files + hdrs + extra:
    src = open(os.path.join(root, rel), encoding='utf-8', errors='replace').read()
    m = tracker.search(src)
    if m:
        line = src.count('\n', 0, m.start()) + 1
        fail('comment', f'{rel}:{line}: names a tracker number ("{m.group(0)}"); name the '
             'doc or spec section instead (docs/style.md, Comments)')

# (b) include graph and (c) include layers
inc_re = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
ig = {}
for rel in files + hdrs:
    src = open(os.path.join(root, rel), encoding='utf-8', errors='replace').read()
    src = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), src, flags=re.S)
    ig[rel] = []
    for m in inc_re.finditer(src):
        h = m.group(1)
        line = src.count('\n', 0, m.start()) + 1
        cands = [os.path.normpath(os.path.join(os.path.dirname(rel), h)), h,
                 os.path.join('include', h)]
        tgt = next((c for c in cands if os.path.isfile(os.path.join(root, c))), None)
        if tgt is None:
            continue  # a generated or outside header
        if tgt.startswith('include/daolease/') and tgt not in pubhdr:
            fail('layer', f'{rel}:{line}: includes {h}, a public header missing from the OWNERS table')
            continue
        ig[rel].append(tgt)
        a, b2 = comp(rel), comp(tgt)
        if a and b2 and a != b2 and a in layers:
            if b2 not in layers:
                fail('layer', f'{rel}:{line}: includes {h} of {b2}, which is not a library component')
            elif b2 not in layers[a] and h not in layers[a]:
                fail('layer', f'{rel}:{line}: {a} includes {h} of {b2}; the LAYERS table allows {a} -> {" ".join(sorted(layers[a])) or "nothing"}')

def sccs(g):
    idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
        for w in g.get(v, ()):
            if w not in idx:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp_ = []
            while True:
                w = st.pop(); on.discard(w); comp_.append(w)
                if w == v: break
            if len(comp_) > 1 or v in g.get(v, ()):
                out.append(sorted(comp_))
    for v in sorted(g):
        if v not in idx: visit(v)
    return out

for cyc in sccs(ig):
    fail('loop', 'include loop: ' + ' '.join(cyc))

# (b) call graph from the objects and (c) call layers
objs = {}
if not os.path.isdir(objdir):
    fail('loop', f'no objects under {objdir}: build first'); 
else:
    for f in sorted(os.listdir(objdir)):
        if not f.endswith('.o'): continue
        src = next((s for s in files if s.endswith('.c') and s.replace('/', '_') + '.o' == f), None)
        if src is None: continue
        out = subprocess.run(['nm', os.path.join(objdir, f)], capture_output=True,
                             text=True, check=True).stdout
        d, u = set(), set()
        for l in out.splitlines():
            p = l.split()
            if len(p) == 3 and p[1] in 'TDBRGSVW' : d.add(p[2])
            elif len(p) == 2 and p[0] == 'U': u.add(p[1])
        objs[src] = (d, u)
    if not objs:
        fail('loop', f'no library objects found under {objdir}')
owner = {}
for src, (d, _) in objs.items():
    for s in d: owner[s] = src
cg = {}
for src, (_, u) in objs.items():
    cg[src] = sorted({owner[s] for s in u if s in owner and owner[s] != src})
    a = comp(src)
    for s in sorted(u):
        t = owner.get(s)
        if not t: continue
        b2 = comp(t)
        if a != b2 and b2 not in layers.get(a, set()):
            fail('layer', f'{src}: {a} calls {s} of {b2} ({t}); the LAYERS table allows {a} -> {" ".join(sorted(layers.get(a, ()))) or "nothing"}')
for cyc in sccs(cg):
    if not allowed('loop', ' '.join(cyc)):
        fail('loop', 'call loop: ' + ' '.join(cyc))

for k in sorted(exc - used):
    fail('exception', f'"{k[0]} {k[1]}" is listed but no longer needed: remove it')
for f in fails: print(f)
print(f'house: {len(files)} files, {len(objs)} objects, {len(fails)} problems')
sys.exit(1 if fails else 0)
PY
}

here=$(cd "$(dirname "$0")/.." && pwd)

self_test() {
  local root=$1 build=$2 bad=0 ok=0 out
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  plant() { # NAME EXPECT SETUP-COMMANDS
    local name=$1 expect=$2
    rm -rf "$tmp/t"; mkdir -p "$tmp/t"
    for d in $LIB_DIRS include; do cp -r "$tmp/src/$d" "$tmp/t/"; done
    cp -al "$tmp/src/obj" "$tmp/t/obj"  # objects are only read: links
    (cd "$tmp/t" && eval "$3")
    if out=$(PATH="$tmp/t/bin:$PATH" analyse "$tmp/t" "$tmp/t/obj" 2>&1); then
      echo "self-test: $name: the planted violation passed"; bad=$((bad + 1))
    elif ! grep -q -- "$expect" <<<"$out"; then
      echo "self-test: $name: failed without naming it:"; echo "$out"; bad=$((bad + 1))
    else
      ok=$((ok + 1))
    fi
  }
  mkdir -p "$tmp/src"
  for d in $LIB_DIRS include; do cp -r "$root/$d" "$tmp/src/"; done
  cp -r "$build/libdls_core.a.p" "$tmp/src/obj"
  if out=$(analyse "$tmp/src" "$tmp/src/obj" 2>&1); then
    ok=$((ok + 1))
  else
    echo "self-test: the unplanted copy fails:"; echo "$out"; bad=$((bad + 1))
  fi
  # a long file
  plant "long file" "vocab/arith.c has" 'for i in $(seq 950); do echo "/* x */" >>vocab/arith.c; done'
  # a long function
  plant "long function" "planted_long has" '{ echo "static int planted_long(void)"; echo "{"; for i in $(seq 130); do echo "  int x$i = $i; (void)x$i;"; done; echo "  return 0;"; echo "}"; } >>vocab/error.c'
  # an include loop
  plant "include loop" "include loop: vocab/heap.h vocab/htab.h" 'echo "#include \"vocab/htab.h\"" >>vocab/heap.h; echo "#include \"vocab/heap.h\"" >>vocab/htab.h'
  # a call loop: vocab/arith.c and vocab/error.c each call the other
  plant "call loop" "call loop: vocab/arith.c vocab/error.c" '
    printf "0000000000000000 T planted_a\n                 U planted_e\n" >obj/nm_arith
    printf "0000000000000000 T planted_e\n                 U planted_a\n" >obj/nm_error
    mkdir -p bin; printf "#!/bin/sh\ncase \"\$1\" in *vocab_arith.c.o) cat %s/obj/nm_arith;; *vocab_error.c.o) cat %s/obj/nm_error;; esac\nexec %s \"\$@\"\n" "$PWD" "$PWD" "$(command -v nm)" >bin/nm; chmod +x bin/nm'
  # a layer breach by include
  plant "layer include" "vocab includes daolease/judge.h of judge" 'echo "#include \"daolease/judge.h\"" >>vocab/fact.c'
  # a layer breach by call: stream calls the judge
  plant "layer call" "stream calls planted_j of judge" '
    mkdir -p bin; printf "#!/bin/sh\ncase \"\$1\" in *stream_file.c.o) echo \"                 U planted_j\";; *judge_ledger.c.o) echo \"0000000000000000 T planted_j\";; esac\nexec %s \"\$@\"\n" "$(command -v nm)" >bin/nm; chmod +x bin/nm'
  # an unknown public header
  plant "tracker number" "names a tracker number" 'echo "/* see issue 99 */" >>vocab/arith.c'
  plant "unknown header" "missing from the OWNERS table" 'echo "int x;" >include/daolease/planted.h; echo "#include \"daolease/planted.h\"" >>judge/judge.c'
  echo "$ok passed, $bad failed"
  [ "$bad" -eq 0 ]
}

if [ "${1:-}" = "--self-test" ]; then
  shift
  root=${1:-$here}; build=${2:-$root/build}
  self_test "$root" "$build"
  exit $?
fi
root=${1:-$here}; build=${2:-$root/build}
analyse "$root" "$build/libdls_core.a.p"
