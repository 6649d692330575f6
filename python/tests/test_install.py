"""`pip install ./python` works (issue 15 item 1): a venv with the system's
site packages (Debian's python3-cffi), the package installed without
network, imported from outside the source tree; the library found through
$DAOLEASE_LIB and, without it, through pkg-config's libdir (what `meson
install` writes)."""
import os
import shutil
import subprocess
import sys

import pytest

import daolease
from conftest import BUILD

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)


def test_pip_install_and_find_library(tmp_path):
    libso = os.environ.get("DAOLEASE_LIB", os.path.join(BUILD, "libdaolease.so"))
    venv = tmp_path / "venv"
    r = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("python3 -m venv unavailable: " + r.stderr[-200:])
    # build from a copy: pip must not write into the source tree
    src = tmp_path / "src"
    shutil.copytree(PKG, src, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info",
                                                            "build"))
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-build-isolation",
                        "--no-index", str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    code = ("import daolease, sys; "
            "print(daolease.__file__); print(daolease.LIBRARY_PATH); "
            "print(daolease.facts.decode(daolease.facts.encode("
            "{'dao.lease/event': 'renewal', 'dao.lease/lease': 1, 'dao.lease/seq': 2})))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "DAOLEASE_LIB", "DAOLEASE_BUILD", "LD_LIBRARY_PATH")}
    # 1. $DAOLEASE_LIB
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=str(tmp_path),
                       env=dict(env, DAOLEASE_LIB=libso), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    installed, found, decoded = r.stdout.splitlines()
    assert installed.startswith(str(venv))
    assert found == libso
    assert "'dao.lease/seq': 2" in decoded
    # 2. pkg-config's libdir, as `meson install` leaves it
    pcdir = tmp_path / "pc"
    pcdir.mkdir()
    (pcdir / "daolease.pc").write_text(
        f"libdir={os.path.dirname(os.path.abspath(libso))}\nName: daolease\n"
        "Description: x\nVersion: 0.1.0\nLibs: -L${libdir} -ldaolease\n")
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=str(tmp_path),
                       env=dict(env, PKG_CONFIG_PATH=str(pcdir)), capture_output=True, text=True)
    if shutil.which("pkg-config") is None:
        pytest.skip("no pkg-config")
    assert r.returncode == 0, r.stderr
    # the soname first: what `meson install` and libdaolease1 both leave
    assert r.stdout.splitlines()[1] == os.path.join(os.path.dirname(os.path.abspath(libso)),
                                                    daolease.SONAME)


def _bare_env():
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "DAOLEASE_LIB", "DAOLEASE_BUILD", "LD_LIBRARY_PATH",
                         "PKG_CONFIG_PATH")}


def test_soname_alone_is_found(tmp_path):
    """docs/install.md: the libdaolease1 package installs libdaolease.so.1
    and no libdaolease.so (that link is libdaolease-dev's); the package
    loads the library by its soname through the loader's path."""
    libso = os.environ.get("DAOLEASE_LIB", os.path.join(BUILD, "libdaolease.so"))
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(os.path.realpath(libso), lib / daolease.SONAME)
    pkg = tmp_path / "site"
    shutil.copytree(os.path.join(PKG, "daolease"), pkg / "daolease",
                    ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run(["/usr/bin/python3", "-c", "import daolease; print(daolease.LIBRARY_PATH)"],
                       cwd=str(tmp_path), capture_output=True, text=True,
                       env=dict(_bare_env(), PYTHONPATH=str(pkg), LD_LIBRARY_PATH=str(lib)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "libdaolease.so.1"


def test_missing_library_says_what_to_install(tmp_path):
    """docs/install.md: with no library to load, the import fails with one
    ImportError naming the soname, the package to install and the path
    $DAOLEASE_LIB named."""
    gone = str(tmp_path / "gone" / "libdaolease.so")
    r = subprocess.run(["/usr/bin/python3", "-c", "import daolease"], cwd=str(tmp_path),
                       capture_output=True, text=True,
                       env=dict(_bare_env(), PYTHONPATH=PKG, DAOLEASE_LIB=gone))
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: daolease: the C library libdaolease (libdaolease.so.1) "
                           "is not installed or cannot be loaded: install the Debian package "
                           "libdaolease1"), last
    assert "docs/install.md" in last
    assert gone + ": no such file ($DAOLEASE_LIB)" in last
