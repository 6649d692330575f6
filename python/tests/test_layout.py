"""The cdef (daolease/_cdef.py) against the C headers: every struct's size
and field offsets, and every error code's value, as the C compiler sees
them. A header change not mirrored in the cdef fails here instead of
corrupting memory (issue 15 item 1: ABI mode binds by declared layout)."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT
from daolease._cdef import STRUCTS
from daolease._lib import ffi, lib

HEADERS = ["error", "fact", "stream", "attrib", "tick", "judge", "judge_view", "holder", "audit"]


def _c_program():
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    lines += [f'#include "daolease/{h}.h"' for h in HEADERS]
    lines.append("int main(void) {")
    for s in STRUCTS:
        t = ffi.typeof(s)
        lines.append(f'printf("{s} %zu\\n", sizeof({s}));')
        for name, field in t.fields:
            lines.append(f'printf("{s}.{name} %zu\\n", offsetof({s}, {name}));')
    for code in _error_names():
        lines.append(f'printf("{code} %d\\n", (int){code});')
    lines.append("return 0; }")
    return "\n".join(lines)


def _error_names():
    return [n for n in dir(lib) if n.startswith("DLS_ERR_") or n == "DLS_OK"]


def test_layout_matches_headers(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    src = tmp_path / "layout.c"
    src.write_text(_c_program())
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    want = {}
    for s in STRUCTS:
        t = ffi.typeof(s)
        want[s] = ffi.sizeof(s)
        for name, field in t.fields:
            want[f"{s}.{name}"] = field.offset
    for code in _error_names():
        want[code] = getattr(lib, code)
    got = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    bad = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
    assert bad == {}, f"cffi vs C (cdef, compiler): {bad}"


def test_every_error_code_is_named():
    """Every enumerator of include/daolease/error.h is in the cdef, so an
    exception carries the C name of any code the library returns."""
    import re
    with open(os.path.join(ROOT, "include", "daolease", "error.h")) as f:
        text = f.read()
    body = text[text.index("typedef enum dls_error {"):text.index("} dls_error;")]
    names = set(re.findall(r"\b(DLS_(?:OK|ERR_\w+))\s*=", body))
    assert names - set(_error_names()) == set()
