"""The judge (judge.md) embedded in a Python owner's loop.

The owner possesses the resources; the judge decides when a lease ends and
calls the owner's `reclaim` to take the resource back. A pass reads the
host clock once (a tick on the judge's own ring), then ``dls_judge_pass``::

    def reclaim(subject, lease, cause, commit):
        queue.take_back(subject, done=commit)
        return True                       # done (False: not yet, retry)

    j = Judge.from_config("judge.json", reclaim=reclaim)
    while running:
        r = j.step()                      # one pass: a dict of its counters
        time.sleep(j.sleep_hint(r))

Callbacks run on the thread calling step() and must not call back into
the judge (DLS_ERR_REENTRANT). An exception in `reclaim` counts as a failed
reclaim (retried next pass) and is kept in ``judge.callback_errors``.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _args
from . import config as _config
from ._lib import DaoleaseError, check, cstr, ffi, lib, new_where, pystr, span
from ._ticks import Ticks
from .facts import CAUSES, _duration, duration_dict
from .stream import Keyring, Resolver, Secret, Stream
from .values import Value, decode_value, encode_value

ReclaimFn = Callable[[Value, int, str, bool], Optional[bool]]
PolicyFn = Callable[[Dict[str, Any]], Optional[Union[str, Tuple]]]

_PASS_FIELDS = ["has_now", "now", "pass", "mark", "cadence_overrun", "restarted", "drained",
                "ticks", "forged", "ignored_misplaced", "ignored_wrong_author",
                "ignored_replayed", "ignored_unknown_lease", "not_lease", "granted", "refused",
                "newly_due", "pending", "reclaim_failed", "late_renewals", "gaps",
                "transport_errors", "budget_cuts", "appended", "live", "waiting", "next_due",
                "standby", "took_over", "renewals", "late_reclaims"]


class Judge:
    """A judge over a journal and lease-fact media, with host-clock ticks.

    ``grantor``: the grantor's Ed25519 secret; ``journal``: its journal
    (opened for append, sync data or group); ``media``: (stream, party)
    pairs in assembly order — party None for a `signed` medium (envelopes
    verified under `keyring`), else the party its bare facts belong to;
    ``tolerance``/``cadence``: durations (``{"ms": 250}``); ``reclaim``:
    required; ``policy``: optional, called with the ask (a dict holding
    ``"default"``, the default policy's answer) and returning None (keep
    the default), ``"grant"``, ``("grant", duration)``, ``("wait",
    seconds)`` or ``("refuse", reason)``.

    ``standby=True`` (judge.md rev 5, Standby judges; docs/standby.md): the
    same inputs as the judge it stands by for; each :meth:`step` follows the
    journal (``result["standby"]``) and never reclaims or grants, until the
    judge's process ends and the journal's lock frees: that step takes over
    (``result["took_over"]``, ``took_over(pass)`` called once) and from
    then on it is the judge. ``heartbeat``: a duration; the judge marks a
    quiet journal at least that often. File journals only.
    """

    def __init__(self, grantor: Secret, journal: Stream,
                 media: Sequence[Tuple[Stream, Optional[str]]], keyring: Keyring, *,
                 tolerance: Dict[str, int], cadence: Dict[str, int], reclaim: ReclaimFn,
                 policy: Optional[PolicyFn] = None,
                 granted: Optional[Callable[[Dict[str, Any]], None]] = None,
                 default_duration: Optional[Dict[str, int]] = None,
                 min_duration: Optional[Dict[str, int]] = None,
                 max_duration: Optional[Dict[str, int]] = None,
                 tenure_max: Optional[Dict[str, int]] = None,
                 lock_delay: Optional[Dict[str, int]] = None,
                 standby: bool = False,
                 heartbeat: Optional[Dict[str, int]] = None,
                 took_over: Optional[Callable[[int], None]] = None,
                 drain_budget: Optional[int] = None,
                 drain_per_s: Optional[int] = None) -> None:
        self._lock = threading.RLock()  # a judge belongs to one thread at a time
        self._grantor, self._journal, self._keyring = grantor, journal, keyring
        media = _args.sequence("media", media)
        self._media = [m for m, _ in media]
        self._resolvers = [Resolver(m, keyring, party) for m, party in media]
        self._reclaim_fn, self._policy_fn, self._granted_fn = reclaim, policy, granted
        self.callback_errors: List[BaseException] = []
        self._j = None
        self._ticks = Ticks(cursor=False)
        self._borrowed = [self._ticks, grantor, journal] + self._media + self._resolvers
        for x in self._borrowed:
            x.borrow()
        self._basis = ffi.new("char[]", cstr(self._ticks.basis))
        ts = ffi.new("dls_judge_tick_source *")
        ts.medium = self._ticks.ring
        ts.resolver = self._ticks.resolver
        ts.adapter = self._ticks.party
        ts.basis = self._basis
        jm = ffi.new("dls_judge_medium[]", max(1, len(media)))
        for i, (m, r) in enumerate(zip(self._media, self._resolvers)):
            jm[i].medium = m._p
            jm[i].resolver = r._p
        s = ffi.new("dls_judge_settings *")
        lib.dls_judge_settings_default(s)
        s.grantor = grantor._p
        s.journal = journal._p
        s.ticks = ts
        s.nticks = 1
        s.media = jm
        s.nmedia = len(media)
        s.tolerance_ns = _duration(tolerance).ns
        s.cadence_ns = _duration(cadence).ns
        self.cadence_s = s.cadence_ns / 1e9
        if default_duration:
            s.default_duration = _duration(default_duration)
        if min_duration:
            s.min_duration = _duration(min_duration)
        if max_duration:
            s.max_duration = _duration(max_duration)
        if tenure_max:
            s.tenure_max = _duration(tenure_max)
        if lock_delay:
            s.lock_delay_ns = _duration(lock_delay).ns
        # judge.md rev 5, Standby judges (docs/standby.md): a standby follows
        # the journal and takes over when its judge's process ends
        s.standby = bool(standby)
        if heartbeat:
            s.heartbeat_ns = _duration(heartbeat).ns
        # judge.md, The pass, step 2; docs/judge.md, Overload (the library
        # checks the ranges)
        for name, v in (("drain_budget", drain_budget), ("drain_per_s", drain_per_s)):
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise DaoleaseError(lib.DLS_ERR_CONFIG, f"{name}: a non-negative integer")
                setattr(s, name, v)
        self._keep = (ts, jm)
        cb = ffi.new("dls_judge_callbacks *")
        self._cb_reclaim = ffi.callback(
            "int(void *, dls_bytes, uint64_t, dls_cause, bool)", self._on_reclaim,
            onerror=self._on_error_int)
        cb.reclaim = self._cb_reclaim
        if policy is not None:
            self._cb_policy = ffi.callback(
                "int(void *, const dls_judge_ask *, dls_judge_answer *)", self._on_policy,
                onerror=self._on_error_int)
            cb.policy = self._cb_policy
        if granted is not None:
            self._cb_granted = ffi.callback("void(void *, const dls_judge_lease_info *)",
                                            self._on_granted, onerror=self._on_error_void)
            cb.granted = self._cb_granted
        if took_over is not None:
            self._took_over_fn = took_over
            self._cb_took_over = ffi.callback("void(void *, uint64_t)",
                                              lambda user, n: self._took_over_fn(int(n)),
                                              onerror=self._on_error_void)
            cb.took_over = self._cb_took_over
        self._reasons: List[Any] = []
        out = ffi.new("dls_judge **")
        w = new_where()
        rc = lib.dls_judge_new(out, s, cb, ffi.NULL, w)
        if rc:
            self._unborrow()
            check(rc, journal.name, w)
        self._j = out[0]
        self._r = ffi.new("dls_judge_pass_result *")

    @classmethod
    def from_config(cls, path: str, reclaim: ReclaimFn, policy: Optional[PolicyFn] = None,
                    granted: Optional[Callable[[Dict[str, Any]], None]] = None, *,
                    standby: bool = False,
                    took_over: Optional[Callable[[int], None]] = None) -> "Judge":
        """A judge from the configuration file ``daolease judge`` reads
        (party = the grantor, key, keyring, journal, media, sync,
        tolerance, cadence, duration, min_duration, max_duration, max,
        lock_delay; docs/config.md)."""
        c = _config.load(path, need=("media",))
        if c.get("ticks", "monotonic") != "monotonic":
            # realtime tick streams shared by machines are the command's
            # (docs/config.md, ticks; docs/standby.md, Across machines)
            raise DaoleaseError(lib.DLS_ERR_CONFIG, 'key "ticks": only "monotonic" is '
                                'supported here; realtime tick streams need daolease judge',
                                context=path)
        sync = c.get("sync", "data")
        # a standby follows an existing journal through a read handle (the
        # library opens it for append itself when it takes over); the judge
        # holds its journal exclusively (judge.md "Failure of the journal")
        # a missing journal is refused unless the file asks to create it
        # (docs/config.md create_journal): never a silent fresh ledger
        create = c.get("create_journal", False)
        if not isinstance(create, bool):
            raise DaoleaseError(lib.DLS_ERR_CONFIG, 'key "create_journal": must be true or '
                                'false', context=path)
        if (not standby and not create and "://" not in c["journal"]
                and not os.path.exists(c["journal"])):
            raise DaoleaseError(lib.DLS_ERR_NOTFOUND, f'{c["journal"]}: no such journal (set '
                                '"create_journal": true to start a new ledger)', context=path)
        journal = (Stream.open(c["journal"]) if standby else
                   Stream.open(c["journal"], append=True, create=create, sync=sync,
                               exclusive=True))
        media = [(Stream.open(p), party) for p, party in c["media"]]
        j = cls(Secret.load(c["key"]), journal, media, Keyring.load(c["keyring"]),
                   tolerance=c.get("tolerance", {"ms": 250}),
                   cadence=c.get("cadence", {"ms": 100}), reclaim=reclaim, policy=policy,
                   granted=granted,
                   default_duration=c.get("duration", {"s": 3}),
                   min_duration=c.get("min_duration", {"ms": 100}),
                   max_duration=c.get("max_duration", {"h": 1}), tenure_max=c.get("max"),
                   lock_delay=c.get("lock_delay"), standby=standby,
                   heartbeat=c.get("heartbeat"), took_over=took_over,
                   # as daolease judge reads them (docs/config.md)
                   drain_budget=c.get("drain_budget", 20000),
                   drain_per_s=c.get("drain_per_s", 1000000))
        # the streams it opened are the judge's: close() closes them, so the
        # journal's writer lock goes with the judge (a standby on the same
        # file takes over then; docs/standby.md)
        j._owned = [journal] + [m for m, _ in media]
        return j

    # ---- callbacks ------------------------------------------------------------

    def _on_error_int(self, exc_type, exc, tb):
        self.callback_errors.append(exc)
        return lib.DLS_RECLAIM_FAILED

    def _on_error_void(self, exc_type, exc, tb):
        self.callback_errors.append(exc)

    def _on_granted(self, user, info):
        self._granted_fn(_info_dict(info, None))

    def _on_reclaim(self, user, subject, lease, cause, commit):
        answer = self._reclaim_fn(decode_value(span(subject)), int(lease),
                                  CAUSES[int(cause) - 1], bool(commit))
        if answer is None or answer is True:
            return lib.DLS_RECLAIM_DONE
        if answer is False:
            return lib.DLS_RECLAIM_NOT_YET
        return int(answer)

    def _on_policy(self, user, ask, answer):
        verdicts = ["grant", "wait", "refuse"]
        default: Dict[str, Any] = {"verdict": verdicts[int(answer.verdict)]}
        if answer.verdict == lib.DLS_JUDGE_GRANT:
            default["duration"] = duration_dict(answer.duration)
        elif answer.verdict == lib.DLS_JUDGE_WAIT:
            default["bound"] = int(answer.bound_ns) / 1e9
        elif answer.reason != ffi.NULL:
            default["reason"] = pystr(answer.reason)
        a = {"subject": decode_value(span(ask.subject)),
             "holder": span(ask.holder).decode("utf-8", "replace"),
             "proposal": decode_value(span(ask.proposal)), "medium": int(ask.medium),
             "duration": duration_dict(ask.duration) if ask.has_duration else None,
             "mode": ["exclusive", "shared"][int(ask.mode)], "now": int(ask.now),
             "live_exclusive": int(ask.live_exclusive), "live_shared": int(ask.live_shared),
             "waiters": int(ask.waiters), "reentrant": bool(ask.reentrant),
             "delayed": bool(ask.delayed), "default": default}
        v = self._policy_fn(a)
        if v is None:
            return 0
        if isinstance(v, str):
            v = (v,)
        if v[0] == "grant":
            answer.verdict = lib.DLS_JUDGE_GRANT
            if len(v) > 1:
                answer.duration = _duration(v[1])
        elif v[0] == "wait":
            answer.verdict = lib.DLS_JUDGE_WAIT
            answer.bound_ns = int(float(v[1]) * 1e9)
        elif v[0] == "refuse":
            answer.verdict = lib.DLS_JUDGE_REFUSE
            reason = ffi.new("char[]", cstr(v[1] if len(v) > 1 else "policy"))
            self._reasons.append(reason)  # lives until the next pass
            answer.reason = reason
        else:
            raise ValueError(f"policy answered {v!r}")
        return 0

    # ---- the pass ---------------------------------------------------------------

    def step(self) -> Dict[str, Any]:
        """Appends a tick from the host clock, runs one pass and returns its
        counters (dls_judge_pass_result as a dict; ``lapsed`` by cause).
        Raises DaoleaseError on failure (``.fatal``: restart from the
        journal)."""
        with self._lock:
            self._live()
            self._ticks.now()
            self._reasons = self._reasons[-64:]
            rc = lib.dls_judge_pass(self._j, self._r)
            check(rc, "pass")
            r = ffi.new("dls_judge_pass_result *", self._r[0])
        out = {k: (bool(getattr(r, k)) if k in ("has_now", "mark", "cadence_overrun",
                                               "restarted", "standby", "took_over")
                   else int(getattr(r, k)))
               for k in _PASS_FIELDS}
        out["lapsed"] = {c: int(r.lapsed[i + 1]) for i, c in enumerate(CAUSES)}
        out["defective"] = sum(int(r.defective[i]) for i in range(8))
        return out

    def sleep_hint(self, result: Dict[str, Any]) -> float:
        """Seconds to sleep after a pass: until next_due, at most half a cadence."""
        s = self.cadence_s / 2
        if result.get("has_now") and result["next_due"] > result["now"]:
            s = min(s, (result["next_due"] - result["now"]) / 1e9)
        return max(s, 0.0005)

    def run(self, until: Callable[[], bool], on_pass: Optional[Callable] = None) -> None:
        """Passes until `until()` is true, sleeping by sleep_hint."""
        while not until():
            r = self.step()
            if on_pass:
                on_pass(r)
            time.sleep(self.sleep_hint(r))

    # ---- owner acts and introspection -----------------------------------------------

    def end(self, lease: int) -> None:
        """Ends a live lease: due with cause policy at the next pass."""
        with self._lock:
            self._live()
            check(lib.dls_judge_end(self._j, lease), f"lease {lease}")

    def grant(self, subject: Value, holder: str, medium: int,
              duration: Optional[Dict[str, int]] = None) -> int:
        """Requests an unsolicited grant at the next pass; returns its ticket."""
        self._live()
        enc = encode_value(subject)
        h = cstr(holder)
        sb = ffi.new("uint8_t[]", enc)
        hb = ffi.new("uint8_t[]", h)
        d = ffi.new("dls_duration *", _duration(duration)) if duration else ffi.NULL
        t = ffi.new("uint64_t *")
        with self._lock:
            check(lib.dls_judge_grant(self._j, (sb, len(enc)), (hb, len(h)), medium, d, ffi.NULL,
                                      t), f"grant {subject!r}")
        return int(t[0])

    def lease(self, lease: int) -> Dict[str, Any]:
        """A live lease as the ledger holds it (DaoleaseError
        DLS_ERR_UNKNOWN_LEASE otherwise)."""
        self._live()
        i = ffi.new("dls_judge_lease_info *")
        with self._lock:
            check(lib.dls_judge_lease(self._j, lease, i), f"lease {lease}")
            return _info_dict(i, None)

    def leases(self, subject: Optional[Value] = None,
               holder: Optional[str] = None) -> List[Dict[str, Any]]:
        """Live leases (include/daolease/judge_view.h): all, or those of one
        subject, or of one holder (a hash lookup, no scan). Each dict holds
        the lease's terms and ``due_by``, the reading on the judge's ticks
        at which it falls due unless renewed (0: due already)."""
        self._live()
        it = ffi.new("dls_judge_iter *")
        keep = None
        info = ffi.new("dls_judge_lease_info *")
        due = ffi.new("uint64_t *")
        out = []
        with self._lock:
            if subject is not None:
                b = encode_value(subject)
                keep = ffi.new("uint8_t[]", b)
                check(lib.dls_judge_leases_by_subject(self._j, (keep, len(b)), it), "leases")
            elif holder is not None:
                b = cstr(holder)
                keep = ffi.new("uint8_t[]", b)
                check(lib.dls_judge_leases_by_holder(self._j, (keep, len(b)), it), "leases")
            else:
                check(lib.dls_judge_leases(self._j, it), "leases")
            while lib.dls_judge_leases_next(it, info, due):
                out.append(_info_dict(info, int(due[0])))
        return out

    @property
    def live(self) -> int:
        return int(lib.dls_judge_live(self._j))

    @property
    def highest_lease(self) -> int:
        return int(lib.dls_judge_highest_lease(self._j))

    def _live(self) -> None:
        if getattr(self, "_j", None) is None:
            raise DaoleaseError(lib.DLS_ERR_STATE, "the judge is closed")

    def close(self) -> None:
        """Frees the judge and releases the journal lock; a judge made by
        from_config also closes the streams it opened."""
        if getattr(self, "_j", None) is not None:
            with self._lock:
                lib.dls_judge_del(self._j)
                self._j = None
        if getattr(self, "_borrowed", None):
            self._unborrow()
        owned, self._owned = getattr(self, "_owned", []), []
        for stream in owned:
            stream.close()

    def _unborrow(self) -> None:
        borrowed, self._borrowed = self._borrowed, []
        for x in borrowed:
            x.unborrow()
        self._ticks.close()

    def __enter__(self) -> "Judge":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _info_dict(i, due_by: Optional[int]) -> Dict[str, Any]:
    d = {"lease": int(i.lease), "subject": decode_value(span(i.subject)),
         "holder": span(i.holder).decode("utf-8", "replace"),
         "mode": ["exclusive", "shared"][int(i.mode)],
         "duration_ns": int(i.duration_ns), "max_ns": int(i.max_ns),
         "medium": int(i.medium), "tenure_start": int(i.tenure_start),
         "last_observation": int(i.last_observation), "released": bool(i.released),
         "commit": bool(i.commit), "pending": bool(i.pending),
         "cause": CAUSES[int(i.cause) - 1] if i.cause else None}
    if due_by is not None:
        d["due_by"] = due_by
    return d


__all__ = ["Judge"]
