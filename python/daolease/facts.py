"""Lease facts (vocabulary.md) as Python dicts, through the C codec.

A fact is a dict keyed by the vocabulary's own keys::

    {"dao.lease/status": "accepted", "dao.lease/lease": 17,
     "dao.lease/subject": "job/7", "dao.lease/holder": "agent-1",
     "dao.lease/duration": {"s": 3}, "dao.lease/medium": b"\\x..." * 16}

Subjects and proposal ids follow :mod:`daolease.values` (str, bytes or
Raw); durations, max and readings are one-unit dicts (``{"ms": 250}``);
medium ids are 16 bytes; causes and modes are their words. :func:`encode`
writes msgpack's shortest form in the table order (``dls_fact_encode``,
which checks rules 1-5); :func:`decode` checks rules 1-5
(``dls_fact_decode``) and raises :class:`DaoleaseError` naming the rule.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ._lib import DaoleaseError, check, ffi, lib, new_where, span
from .values import decode_value, encode_value

P = "dao.lease/"
STATUS = {"proposed": "DLS_FACT_PROPOSAL", "accepted": "DLS_FACT_GRANT",
          "rejected": "DLS_FACT_REFUSAL", "released": "DLS_FACT_RELEASE",
          "lapsed": "DLS_FACT_RECLAIM"}
EVENT = {"renewal": "DLS_FACT_RENEWAL", "tick": "DLS_FACT_TICK"}
UNITS = ["ns", "us", "ms", "s", "min", "h"]
CAUSES = ["release", "cap", "policy", "silence"]
# (vocabulary key, bit, kind of value), in the Keys table's order
KEYS = [("lease", 1 << 0, "uint"), ("proposal", 1 << 1, "value"),
        ("subject", 1 << 2, "value"), ("holder", 1 << 3, "str"),
        ("medium", 1 << 4, "id"), ("duration", 1 << 5, "dur"), ("max", 1 << 6, "dur"),
        ("reading", 1 << 7, "dur"), ("cause", 1 << 8, "cause"), ("seq", 1 << 9, "uint"),
        ("mode", 1 << 10, "mode"), ("commit", 1 << 11, "bool"), ("reason", 1 << 12, "str")]
FACT_MAX = 4096


def _duration(d: Dict[str, int]):
    if not isinstance(d, dict) or len(d) != 1:
        raise ValueError(f"a duration is one unit to an integer, e.g. {{'s': 3}}; got {d!r}")
    (unit, mag), = d.items()
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}")
    if isinstance(mag, bool) or not isinstance(mag, int):
        # docs/python.md, Arguments: never rounded ({"s": 1.5} was 1 s)
        raise TypeError(f"a duration's magnitude is an integer, not {mag!r} "
                        f"(write {{'ms': 1500}} for 1.5 s)")
    out = ffi.new("dls_duration *")
    check(lib.dls_duration_make(out, UNITS.index(unit), int(mag)), "duration")
    return out[0]


def duration_dict(d) -> Dict[str, int]:
    """A dls_duration as its one-unit dict."""
    return {UNITS[int(d.unit)]: int(d.magnitude)}


def encode(fact: Dict[str, Any]) -> bytes:
    """Encodes a fact dict; DaoleaseError (DLS_ERR_INVAL) when it is not a
    valid fact of its kind."""
    f = ffi.new("dls_fact *")
    keep = []
    if P + "status" in fact and P + "event" in fact:
        raise ValueError("a fact has one dispatch key")
    if P + "status" in fact:
        kind = STATUS.get(fact[P + "status"])
    else:
        kind = EVENT.get(fact.get(P + "event"))
    if kind is None:
        raise ValueError("no known dao.lease/status or dao.lease/event")
    lib.dls_fact_init(f, getattr(lib, kind))
    for name, bit, typ in KEYS:
        if P + name not in fact:
            continue
        v = fact[P + name]
        f.keys |= bit
        if typ == "uint":
            setattr(f, name, int(v))
        elif typ in ("value", "str"):
            b = encode_value(v) if typ == "value" else (v.encode() if isinstance(v, str) else bytes(v))
            buf = ffi.new("uint8_t[]", b or b"\0")
            keep.append(buf)
            sl = getattr(f, name)
            sl.p, sl.n = buf, len(b)
        elif typ == "id":
            if len(v) != 16:
                raise ValueError("a medium id is 16 bytes")
            ffi.memmove(f.medium, bytes(v), 16)
        elif typ == "dur":
            setattr(f, name, _duration(v))
        elif typ == "cause":
            f.cause = CAUSES.index(v) + 1
        elif typ == "mode":
            f.mode = ["exclusive", "shared"].index(v)
        elif typ == "bool":
            f.commit = bool(v)
    out = ffi.new("uint8_t[]", FACT_MAX)
    n = ffi.new("size_t *")
    check(lib.dls_fact_encode(f, out, FACT_MAX, n), "encode")
    return bytes(ffi.buffer(out, n[0]))


def from_struct(f) -> Dict[str, Any]:
    """A decoded dls_fact as a fact dict (slices copied)."""
    kind = int(f.kind)
    if kind == 0:
        return {}
    names = {getattr(lib, v): k for k, v in STATUS.items()}
    d: Dict[str, Any] = {}
    if kind in names:
        d[P + "status"] = names[kind]
    else:
        d[P + "event"] = {getattr(lib, v): k for k, v in EVENT.items()}[kind]
    for name, bit, typ in KEYS:
        if not f.keys & bit:
            continue
        if typ == "uint":
            d[P + name] = int(getattr(f, name))
        elif typ == "value":
            d[P + name] = decode_value(span(getattr(f, name)))
        elif typ == "str":
            d[P + name] = span(getattr(f, name)).decode("utf-8", "replace")
        elif typ == "id":
            d[P + name] = bytes(ffi.buffer(f.medium, 16))
        elif typ == "dur":
            d[P + name] = duration_dict(getattr(f, name))
        elif typ == "cause":
            d[P + name] = CAUSES[int(f.cause) - 1]
        elif typ == "mode":
            d[P + name] = ["exclusive", "shared"][int(f.mode)]
        elif typ == "bool":
            d[P + name] = bool(f.commit)
    return d


def decode(data: bytes) -> Optional[Dict[str, Any]]:
    """Decodes and validates one fact (rules 1-5). Returns its dict, or None
    for a map that is not a lease fact (neither dispatch key). Raises
    DaoleaseError (DLS_ERR_RULE1 ... DLS_ERR_RULE5) with the byte offset."""
    f = ffi.new("dls_fact *")
    w = new_where()
    buf = ffi.from_buffer(bytes(data))
    rc = lib.dls_fact_decode(buf, len(data), f, w)
    check(rc, "decode", w)
    d = from_struct(f)
    return d or None


__all__ = ["encode", "decode", "duration_dict", "DaoleaseError"]
