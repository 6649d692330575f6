"""Audit replay (judge.md "Audit replay") returning cli.md's JSON shapes."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._lib import check, cstr, ffi, lib, new_where, pystr, span
from .stream import Keyring, Stream
from .values import decode_value

MediumArg = Union[str, Tuple[str, Optional[str]]]


def _point(p) -> Optional[int]:
    return int(getattr(p, "pass")) or None


def audit(journal: str, grantor: str, keyring: Union[str, Keyring],
          media: Sequence[MediumArg]) -> Dict[str, Any]:
    """Audits `journal` (written by `grantor`, whose key is in `keyring`)
    against `media` (paths, or (path, party) for bare-fact media).

    Returns ``{"leases": [...], "summary": {...}, "exit": 0|1|3}`` where
    each lease and the summary have the shapes of ``daolease audit --json``
    (cli.md): ``{"lease", "subject", "holder", "granted_pass", "due_pass",
    "lapsed_pass", "cause", "late_renewals", "verdict"}`` and
    ``{"summary": True, "failures": {...}, "reports": {...}, "exit"}``.
    """
    kr = keyring if isinstance(keyring, Keyring) else Keyring.load(keyring)
    jm = Stream.open(journal)
    streams, parties = [], []
    for m in media:
        path, party = (m, None) if isinstance(m, (str, os.PathLike)) else m
        streams.append(Stream.open(path))
        parties.append(cstr(party) if party else None)
    am = ffi.new("dls_audit_medium[]", max(1, len(streams)))
    for i, s in enumerate(streams):
        am[i].medium = s._p
        am[i].party = parties[i] if parties[i] else ffi.NULL
    out = ffi.new("dls_audit **")
    w = new_where()
    check(lib.dls_audit_run(out, ffi.NULL, jm._p, cstr(grantor), kr._p, am, len(streams), w),
          journal, w)
    a = ffi.gc(out[0], lib.dls_audit_del)
    leases: List[Dict[str, Any]] = []
    for i in range(lib.dls_audit_lease_count(a)):
        l = lib.dls_audit_lease_at(a, i)
        cause = lib.dls_cause_name(l.cause)
        leases.append({
            "lease": int(l.lease), "subject": decode_value(span(l.subject)),
            "holder": span(l.holder).decode("utf-8", "replace"),
            "granted_pass": _point(l.granted), "due_pass": _point(l.due),
            "lapsed_pass": _point(l.lapsed),
            "cause": pystr(cause) if cause != ffi.NULL else None,
            "late_renewals": int(l.late_renewals),
            "verdict": pystr(lib.dls_audit_verdict_name(l.verdict))})
    s = lib.dls_audit_summary_of(a)
    status = int(lib.dls_audit_exit_status(a))
    summary = {
        "summary": True,
        "failures": {"unjustified_lapse": int(s.unjustified_lapse),
                     "due_mismatch": int(s.due_mismatch),
                     "double_grant": int(s.double_grant), "journal": int(s.journal)},
        "reports": {
            "passes": int(s.passes), "grants": int(s.grants), "refusals": int(s.refusals),
            "lapsed": int(s.lapsed), "journal_records": int(s.journal_records),
            "media_records": int(s.media_records),
            "undrained_records": int(s.undrained_records),
            "forged": {pystr(s.forged[i].reason): int(s.forged[i].n) for i in range(s.n_forged)},
            "defective": {pystr(s.defective[i].reason): int(s.defective[i].n)
                          for i in range(s.n_defective)},
            "ignored": {pystr(s.ignored[i].reason): int(s.ignored[i].n)
                        for i in range(s.n_ignored)},
            "late_reclaims": [int(s.late_reclaims[i].lease) for i in range(s.n_late_reclaims)],
            "cadence_overruns": int(s.cadence_overruns),
            "gaps": int(s.n_gaps), "transport_errors": int(s.n_transport_errors),
            "restarts": [int(s.restarts[i]) for i in range(s.n_restarts)],
            "warnings": [pystr(s.warnings[i]) for i in range(s.n_warnings)],
            "incomplete": pystr(s.incomplete) if s.incomplete != ffi.NULL else None,
        },
        "exit": status,
    }
    for st in streams:
        st.close()
    jm.close()
    return {"leases": leases, "summary": summary, "exit": status}


__all__ = ["audit"]
