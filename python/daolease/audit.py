"""Audit replay (judge.md "Audit replay") returning cli.md's JSON shapes."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _args
from ._lib import check, cstr, ffi, lib, new_where, pystr, span
from .stream import Keyring, Stream
from .values import decode_value

MediumArg = Union[str, Tuple[str, Optional[str]]]


def _point(p) -> Optional[int]:
    return int(getattr(p, "pass")) or None


def audit(journal: str, grantor: str, keyring: Union[str, Keyring],
          media: Sequence[MediumArg], checkpoints: Optional[str] = None) -> Dict[str, Any]:
    """Audits `journal` (written by `grantor`, whose key is in `keyring`)
    against `media` (paths, or (path, party) for bare-fact media).

    `checkpoints` is the judge's checkpoint folder (default: ``<journal>.ckpt``
    when that folder exists, as ``daolease audit`` does): each committed
    checkpoint is compared with the replay, and a journal whose first
    records are gone is audited from one (docs/audit.md).

    Returns ``{"leases": [...], "summary": {...}, "exit": 0|1|3}`` where
    each lease and the summary have the shapes of ``daolease audit --json``
    (cli.md): ``{"lease", "subject", "holder", "granted_pass", "due_pass",
    "lapsed_pass", "cause", "late_renewals", "verdict"}`` and
    ``{"summary": True, "failures": {...}, "reports": {...}, "exit"}``.
    """
    kr = keyring if isinstance(keyring, Keyring) else Keyring.load(keyring)
    jm = Stream.open(journal)
    streams, parties, paths = [], [], []
    for m in _args.sequence("media", media):
        path, party = (m, None) if isinstance(m, (str, os.PathLike)) else m
        paths.append(path)
        streams.append(Stream.open(path))
        parties.append(cstr(party) if party else None)
    am = ffi.new("dls_audit_medium[]", max(1, len(streams)))
    for i, s in enumerate(streams):
        am[i].medium = s._p
        am[i].party = parties[i] if parties[i] else ffi.NULL
    if checkpoints is None and os.path.isdir(os.fspath(journal) + ".ckpt"):
        checkpoints = os.fspath(journal) + ".ckpt"
    settings = ffi.new("dls_audit_settings *")
    lib.dls_audit_settings_default(settings)
    ckpt_c = (ffi.new("char[]", cstr(os.fspath(checkpoints))) if checkpoints is not None
              else ffi.NULL)  # kept alive until the run returns
    settings.checkpoints = ckpt_c
    out = ffi.new("dls_audit **")
    w = new_where()
    rc = lib.dls_audit_run(out, settings, jm._p, cstr(grantor), kr._p, am, len(streams), w)
    if rc:
        for st in streams:
            st.close()
        jm.close()
    check(rc, journal, w)
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
    causes = lambda c: None if c == 0 else pystr(lib.dls_cause_name(c))  # noqa: E731
    hexid = lambda b: bytes(ffi.buffer(b, 16)).hex()  # noqa: E731
    u64s = lambda p, n: [int(p[i]) for i in range(n)]  # noqa: E731
    counts = lambda c, n: {pystr(c[i].reason): int(c[i].n) for i in range(n)}  # noqa: E731
    reports = {
        "grantor": grantor, "journal": hexid(s.journal_id), "passes": int(s.passes),
        "journal_records": int(s.journal_records), "journal_forged": int(s.journal_forged),
        "journal_malformed": int(s.journal_malformed),
        "journal_defective": int(s.journal_defective),
        "journal_ignored": int(s.journal_ignored), "grants": int(s.grants),
        "refusals": int(s.refusals), "lapsed": int(s.lapsed),
        "late_reclaims": [[int(r.lease), int(r.due_pass), int(r.lapsed_pass)]
                          for r in (s.late_reclaims[i] for i in range(s.n_late_reclaims))],
        "media_records": int(s.media_records),
        "forged": counts(s.forged, s.n_forged),
        "defective": counts(s.defective, s.n_defective),
        "ignored": counts(s.ignored, s.n_ignored),
        "late_renewals": {span(s.late_renewals[i].holder).decode("utf-8", "replace"):
                          int(s.late_renewals[i].n) for i in range(s.n_late_renewals)},
        "cadence_overruns": int(s.cadence_overruns),
        "cadence_overruns_unflagged": u64s(s.cadence_overruns_unflagged,
                                           s.n_cadence_overruns_unflagged),
        "due_mismatches": [[int(getattr(m, "pass")), int(m.lease),
                            causes(m.judge), causes(m.audit)]
                           for m in (s.due_mismatches[i] for i in range(s.n_due_mismatches))],
        "unverifiable": u64s(s.unverifiable_passes, s.n_unverifiable_passes),
        "unverifiable_leases": u64s(s.unverifiable_leases, s.n_unverifiable_leases),
        "gaps": [[int(getattr(g, "pass")), hexid(g.medium), int(getattr(g, "from")),
                  int(g.to)] for g in (s.gaps[i] for i in range(s.n_gaps))],
        "restarts": u64s(s.restarts, s.n_restarts),
        "basis_changes": u64s(s.basis_changes, s.n_basis_changes),
        "transport_errors": [[int(getattr(g, "pass")), hexid(g.medium),
                              int(getattr(g, "from"))]
                             for g in (s.transport_errors[i] for i in range(s.n_transport_errors))],
        "missing_media": [hexid(s.missing_media[i]) for i in range(s.n_missing_media)],
        "unused_media": [os.fspath(paths[int(s.unused_media[i])])
                         for i in range(s.n_unused_media)],
        "undrained_records": int(s.undrained_records),
        "warnings": [pystr(s.warnings[i]) for i in range(s.n_warnings)],
        "failure_details": [pystr(s.failure_details[i]) for i in range(s.n_failure_details)],
    }
    if s.n_takeovers:  # revision 5: after "restarts", absent when none (as the CLI)
        takeovers = u64s(s.takeovers, s.n_takeovers)
        reports = dict(kv for k, v in reports.items()
                       for kv in ([(k, v), ("takeovers", takeovers)] if k == "restarts"
                                  else [(k, v)]))
    # present only when they apply, as in `daolease audit --json`
    # (docs/audit.md, "A journal that starts at a checkpoint")
    if s.start_checkpoint:
        reports["not_audited"] = {"checkpoint": int(s.start_checkpoint), "from": 0,
                                  "to": int(s.not_audited_to),
                                  "journal_first": int(s.journal_first)}
    if s.journal_missing_to:
        reports["journal_missing"] = [int(s.journal_missing_from), int(s.journal_missing_to)]
    if (s.checkpoints_checked or s.checkpoints_mismatch or s.checkpoints_missing
            or s.checkpoints_damaged):
        reports["checkpoints"] = {"checked": int(s.checkpoints_checked),
                                  "mismatch": int(s.checkpoints_mismatch),
                                  "missing": int(s.checkpoints_missing)}
        if s.checkpoints_damaged:
            reports["checkpoints"]["damaged"] = int(s.checkpoints_damaged)
    if s.incomplete != ffi.NULL:
        reports["incomplete"] = pystr(s.incomplete)
    summary = {
        "summary": True,
        "failures": {"unjustified_lapse": int(s.unjustified_lapse),
                     "due_mismatch": int(s.due_mismatch),
                     "double_grant": int(s.double_grant), "journal": int(s.journal)},
        "reports": reports,
        "exit": status,
    }
    for st in streams:
        st.close()
    jm.close()
    return {"leases": leases, "summary": summary, "exit": status}


__all__ = ["audit"]
