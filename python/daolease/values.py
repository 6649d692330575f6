"""Subjects and proposal ids: one msgpack value each.

A Python ``str`` is written as a msgpack str and ``bytes`` as a msgpack bin
(by the C library's ``dls_value_str``/``dls_value_bin``); a value of any
other msgpack type is passed as :class:`Raw` holding its encoding. Reading
goes the other way: a str or bin comes back as ``str``/``bytes``, anything
else as ``Raw``.
"""
from __future__ import annotations

from typing import Union

from ._lib import check, ffi, lib


class Raw(bytes):
    """One msgpack value, already encoded (copied byte for byte into facts)."""


Value = Union[str, bytes, Raw]


def encode_value(v: Value) -> bytes:
    """The msgpack encoding of a subject or proposal id."""
    if isinstance(v, Raw):
        return bytes(v)
    if isinstance(v, str):
        data, fn = v.encode("utf-8"), lib.dls_value_str
    elif isinstance(v, (bytes, bytearray, memoryview)):
        data, fn = bytes(v), lib.dls_value_bin
    else:
        raise TypeError(f"a subject is str, bytes or Raw, not {type(v).__name__}")
    cap = len(data) + 5
    out = ffi.new("uint8_t[]", cap)
    n = ffi.new("size_t *")
    check(fn(out, cap, data, len(data), n), "value")
    return bytes(ffi.buffer(out, n[0]))


def decode_value(b: bytes) -> Value:
    """A str or bin value as str/bytes; any other value as Raw."""
    if not b:
        return Raw(b)
    t = b[0]
    if 0xA0 <= t <= 0xBF:
        hdr, n, kind = 1, t & 0x1F, "str"
    elif t in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
        width = {0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC4: 1, 0xC5: 2, 0xC6: 4}[t]
        if len(b) < 1 + width:
            return Raw(b)
        hdr, n = 1 + width, int.from_bytes(b[1:1 + width], "big")
        kind = "str" if t >= 0xD9 else "bin"
    else:
        return Raw(b)
    if hdr + n != len(b):
        return Raw(b)
    body = b[hdr:]
    if kind == "bin":
        return bytes(body)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return Raw(b)
