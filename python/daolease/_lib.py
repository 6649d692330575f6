"""Loading libdaolease (cffi ABI mode) and turning C error codes into
Python exceptions.

The library is found, in order, at:

1. ``$DAOLEASE_LIB`` (a path to ``libdaolease.so``);
2. a meson build folder beside this package's source tree
   (``<repo>/build/libdaolease.so``, or ``$DAOLEASE_BUILD/libdaolease.so``);
3. the installed library: the dynamic loader's search path (its soname
   ``libdaolease.so.1``, what the ``libdaolease1`` Debian package installs,
   then the development link ``libdaolease.so``), then the ``libdir``
   pkg-config reports for ``daolease``, then ``/usr/local/lib/<multiarch>``
   and ``/usr/local/lib``.

When none loads, importing the package raises ImportError saying what to
install (docs/install.md).
"""
from __future__ import annotations

import os
import subprocess
import sysconfig
from typing import Optional

import cffi

from ._cdef import CDEF

# The soname of the C library this package's declarations match
# (meson.build `soversion`).
SONAME = "libdaolease.so.1"

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates() -> list:
    out = []
    env = os.environ.get("DAOLEASE_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.environ.get("DAOLEASE_BUILD")
    if build:
        out.append(os.path.join(build, "libdaolease.so"))
    out.append(os.path.join(here, "..", "..", "build", "libdaolease.so"))
    out.append(SONAME)
    out.append("libdaolease.so")
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "daolease"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
        if libdir:
            out.append(os.path.join(libdir, SONAME))
            out.append(os.path.join(libdir, "libdaolease.so"))
    except (OSError, subprocess.SubprocessError):
        pass
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    if multiarch:
        out.append(os.path.join("/usr/local/lib", multiarch, "libdaolease.so"))
    out.append("/usr/local/lib/libdaolease.so")
    return out


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            if path == os.environ.get("DAOLEASE_LIB"):
                errors.append(f"{path}: no such file ($DAOLEASE_LIB)")
            continue
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError(
        f"daolease: the C library libdaolease ({SONAME}) is not installed or cannot be "
        "loaded: install the Debian package libdaolease1, or build the C library and "
        "`meson install` it, or set DAOLEASE_LIB to the path of libdaolease.so "
        "(docs/install.md); tried: " + "; ".join(errors or ["no candidate"]))


lib, LIBRARY_PATH = _load()


class DaoleaseError(Exception):
    """A failure reported by the C library.

    ``code`` is the negative code of ``include/daolease/error.h``, ``name``
    its enumerator (``"DLS_ERR_SIZING"``), ``reason`` the library's sentence
    for where and why (a ``dls_where`` reason, a holder message) or
    ``dls_strerror(code)``; ``offset``/``line`` are the ``dls_where``
    position when the call filled one.
    """

    def __init__(self, code: int, reason: Optional[str] = None, *, context: str = "",
                 offset: Optional[int] = None, line: Optional[int] = None) -> None:
        self.code = code
        self.name = error_name(code)
        self.strerror = ffi.string(lib.dls_strerror(code)).decode("utf-8", "replace")
        self.reason = reason or self.strerror
        self.context = context
        self.offset = offset
        self.line = line
        where = f"{context}: " if context else ""
        super().__init__(f"{where}{self.reason} ({self.name})")

    @property
    def fatal(self) -> bool:
        """True when the handle that returned it refuses everything but close."""
        return bool(lib.dls_err_is_fatal(self.code))


def error_name(code: int) -> str:
    """The C enumerator naming `code`, e.g. ``"DLS_ERR_SIZING"``."""
    name = ffi.string(ffi.cast("dls_error", code))
    return name if isinstance(name, str) and not name.lstrip("-").isdigit() else f"DLS_ERR({code})"


def check(rc: int, context: str = "", where=None, reason: Optional[str] = None) -> int:
    """Raise DaoleaseError for a negative return code; return rc otherwise."""
    if rc < 0:
        why = reason
        off = line = None
        if where is not None:
            if where.reason != ffi.NULL and not why:
                why = ffi.string(where.reason).decode("utf-8", "replace")
            off, line = int(where.offset), int(where.line)
        raise DaoleaseError(rc, why, context=context, offset=off, line=line)
    return rc


def new_where():
    return ffi.new("dls_where *")


def cstr(s) -> bytes:
    """A str or bytes as a NUL-free byte string for a `const char *`."""
    b = s.encode() if isinstance(s, str) else bytes(s)
    if b"\0" in b:
        raise ValueError("a C string may not hold NUL bytes")
    return b


def pystr(p) -> str:
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def span(b) -> bytes:
    """The bytes of a dls_bytes slice (copied)."""
    return b"" if b.n == 0 else bytes(ffi.buffer(b.p, b.n))


class Handle:
    """A C handle freed exactly once, never while borrowed.

    The C library's assemblies borrow handles (a holder borrows its media,
    secret and cursors; a cursor borrows its medium). Python may finalize
    objects of a reference cycle in any order, so a handle that is still
    borrowed defers its free to the last ``unborrow()``."""

    _free = None  # the C destructor, set by subclasses

    def __init__(self, ptr) -> None:
        self._p = ptr
        self._borrowers = 0
        self._closing = False

    def borrow(self):
        if self._p is None:
            raise DaoleaseError(lib.DLS_ERR_STATE, f"{type(self).__name__} is closed")
        self._borrowers += 1
        return self._p

    def unborrow(self) -> None:
        self._borrowers -= 1
        if self._borrowers == 0 and self._closing:
            self._release()

    def close(self) -> None:
        """Frees the handle now, or once nothing borrows it any more."""
        if self._borrowers > 0:
            self._closing = True
        else:
            self._release()

    def _release(self) -> None:
        p, self._p = self._p, None
        if p is not None:
            type(self)._free(p)
            self._after_release()

    def _after_release(self) -> None:
        pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
