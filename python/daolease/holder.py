"""The holder (holder.md) for Python agents: many leases from one loop.

The C holder is a step function; this class owns one, plus its host-clock
ticks, and serializes every call to it with a lock. Use it directly from
your own loop::

    h = Holder.from_config("agent.json")
    p = h.propose("job/7", duration={"s": 3})
    while ...:
        for e in h.step():          # reads the clock once, drains, renews
            ...                     # Event(kind="granted", lease=..., proposal=p)
        if h.may_act(lease): write(token=lease)
    h.release(lease, commit=True)

or let a background thread step it and claim with a context manager::

    with h.claim("job/7", duration={"s": 3}) as lease:
        while work_left():
            lease.check()           # raises LeaseLost once the bound passed
            write(item, fencing_token=lease.token)

When the lease is lost (its bound passed, or the grantor recorded `lapsed`)
while the ``with`` body runs, LeaseLost is raised in the thread that entered
it (asynchronously, at its next Python instruction); ``lease.may_act()`` is
False from the bound on whatever the holder hears afterwards. On a clean
exit the lease is released with ``commit``; on an exception without it.
``async with h.aclaim(...)`` cancels the task instead.
"""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

from . import _args
from . import config as _config
from ._lib import DaoleaseError, check, cstr, ffi, lib, new_where, pystr, span
from ._ticks import Ticks
from .facts import _duration, duration_dict
from .stream import Keyring, Secret, Stream
from .values import Value, decode_value, encode_value

TURN = 0.005  # the background loop's longest sleep, seconds


class LeaseLost(Exception):
    """The lease can no longer be acted on: its bound passed (renewals did
    not succeed in time) or the grantor reclaimed it."""


class Refused(DaoleaseError):
    """The grantor refused the proposal (``reason`` is its text)."""


class ForkedHolder(DaoleaseError):
    """The holder is used in another process than the one that made it (a
    child after ``fork()``): every call is refused there (holder.md, "A
    holder belongs to the process that made it"). The child shares the
    parent's leases' identity, not their right to act: it must make its own
    holder (its own medium) and claim its own leases."""


@dataclass(frozen=True)
class Event:
    """One event of a step (dls_holder_event): ``kind`` is ``"granted"``,
    ``"refused"``, ``"lapsed"``, ``"renewed"``, ``"renewal-failed"``,
    ``"bound"``, ``"released"``, ``"release-failed"``, ``"sizing"`` or
    ``"misregistered"``."""
    kind: str
    lease: int
    proposal: int
    reading: int
    seq: int = 0
    cause: Optional[str] = None
    error: Optional[str] = None
    text: str = ""


def _holder_new(out, parts, settings):
    """dls_holder_new, whichever way the linked header reports failures
    (a message buffer, or a dls_where): returns (rc, reason)."""
    args = ffi.typeof(lib.dls_holder_new).args
    if len(args) == 6:  # ..., void *user_data, dls_where *w
        w = new_where()
        rc = lib.dls_holder_new(out, parts, settings, ffi.NULL, ffi.NULL, w)
        return rc, pystr(w.reason) if w.reason != ffi.NULL else None
    msg = ffi.new("char[]", 320)
    rc = lib.dls_holder_new(out, parts, settings, ffi.NULL, ffi.NULL, msg, 320)
    return rc, pystr(msg) or None


class Lease:
    """A lease this holder was granted. ``token`` is the lease id: the
    fencing token to pass to the resource with every write."""

    def __init__(self, holder: "Holder", lease: int, subject: Value) -> None:
        self.holder = holder
        self.token = lease
        self.id = lease
        self.subject = subject
        self.lost_reason: Optional[str] = None
        self._lost = threading.Event()
        self._thread: Optional[int] = None  # armed: raise LeaseLost there
        self._task = None                   # armed: cancel this asyncio task
        self._loop = None
        self._fired = False

    def may_act(self) -> bool:
        """True only while the lease is held and before its bound (reads the
        newest tick first)."""
        return self.holder.may_act(self.token)

    def remaining(self) -> float:
        """Seconds left before the bound, on the holder's ticks (0.0 at or
        after it)."""
        return self.holder.remaining_ns(self.token) / 1e9

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def check(self) -> None:
        """Raises LeaseLost when the lease can no longer be acted on."""
        if self.lost or not self.may_act():
            raise LeaseLost(self.lost_reason or f"lease {self.token} reached its bound")

    def release(self, commit: bool = False) -> None:
        self.holder.release(self.token, commit)

    def _lose(self, reason: str) -> None:  # under the holder's lock
        if self._lost.is_set():
            return
        self.lost_reason = reason
        self._lost.set()
        if self._thread is not None:
            self._fired = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread),
                                                       ctypes.py_object(LeaseLost))
        if self._task is not None and self._loop is not None:
            self._fired = True
            self._loop.call_soon_threadsafe(self._task.cancel)

    def _disarm(self) -> None:  # under the holder's lock
        if self._thread is not None and self._fired:
            # an exception set but not yet delivered must not escape the block
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread), None)
        self._thread = None
        self._task = None

    def __repr__(self) -> str:
        return f"<Lease {self.token} on {self.subject!r}{' lost' if self.lost else ''}>"


class _Waiter:
    def __init__(self, subject: Value) -> None:
        self.subject = subject
        self.done = threading.Event()
        self.lease: Optional[Lease] = None
        self.error: Optional[BaseException] = None


class Holder:
    """A holder: proposes, observes grants, renews and releases leases on
    its own medium, reading the grantor's journal.

    Parts (all required): ``name`` (this party), ``secret`` (its key, whose
    name is `name`), ``medium`` (its own stream, opened for append or
    created), ``grantor`` (the party whose grants count), ``journal`` (the
    grantor's journal) and ``keyring`` (holding the grantor's key).
    """

    def __init__(self, name: str, secret: Secret, medium: Stream, grantor: str,
                 journal: Stream, keyring: Keyring, *,
                 default_duration: Optional[Dict[str, int]] = None) -> None:
        self._lock = threading.RLock()
        self._pid = os.getpid()  # the process this holder belongs to
        self.name = name
        self.default_duration = default_duration
        self._secret, self._medium, self._journal, self._keyring = secret, medium, journal, keyring
        self._h = None
        self._jcursor = self._jresolver = None
        self._ticks = Ticks(cursor=True)
        self._borrowed = [self._ticks]
        self._ticks.borrow()
        try:
            for x in (secret, medium, journal):
                x.borrow()
                self._borrowed.append(x)
            cur = ffi.new("dls_cursor **")
            check(lib.dls_cursor_new(cur, journal._p, 0), journal.name)
            self._jcursor = cur[0]
            res = ffi.new("dls_resolver **")
            check(lib.dls_resolver_new_signed(res, journal.id, keyring._p), journal.name)
            self._jresolver = res[0]
            self._strings = [ffi.new("char[]", cstr(name)), ffi.new("char[]", cstr(grantor))]
            parts = ffi.new("dls_holder_parts *")
            parts.name = self._strings[0]
            parts.secret = secret._p
            parts.medium = medium._p
            parts.grantor = self._strings[1]
            parts.journal = self._jcursor
            parts.journal_resolver = self._jresolver
            parts.ticks = self._ticks.cursor
            parts.tick_resolver = self._ticks.resolver
            parts.tick_party = self._ticks.party
            # room beyond cffi's idea of the struct, in case the C one grew;
            # `room` owns the memory (a cast does not keep it alive)
            room = ffi.new("uint64_t[]", 64)
            settings = ffi.cast("dls_holder_settings *", room)
            lib.dls_holder_settings_default(settings)
            out = ffi.new("dls_holder **")
            rc, reason = _holder_new(out, parts, settings)
            check(rc, name, reason=reason)
        except BaseException:
            self._free_parts()
            raise
        self._h = out[0]
        self._res = ffi.new("dls_holder_result *")
        self._waiters: Dict[int, _Waiter] = {}
        self._leases: Dict[int, Lease] = {}
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._events: List[Event] = []

    # ---- assembly -----------------------------------------------------------

    @classmethod
    def from_config(cls, path: str) -> "Holder":
        """A holder from the configuration file ``daolease run`` reads
        (party, key, keyring, grantor, journal, medium, sync, duration)."""
        c = _config.load(path, need=("medium", "grantor"))
        sync = c.get("sync", "data")
        return cls(c["party"], Secret.load(c["key"]),
                   Stream.open(c["medium"], append=True, create=True, sync=sync),
                   c["grantor"], Stream.open(c["journal"]), Keyring.load(c["keyring"]),
                   default_duration=c.get("duration"))

    def _free_parts(self) -> None:
        if self._jcursor is not None:
            lib.dls_cursor_del(self._jcursor)
            self._jcursor = None
        if self._jresolver is not None:
            lib.dls_resolver_del(self._jresolver)
            self._jresolver = None
        borrowed, self._borrowed = self._borrowed, []
        for x in borrowed:
            x.unborrow()
        self._ticks.close()

    def close(self) -> None:
        """Stops the background thread and frees the holder. Appends
        nothing: a lease not released lapses by silence at the judge. In a
        forked child it only forgets the handles: the C objects (and their
        connections) stay the parent's."""
        if self._forked():
            self._h = None
            self._borrowed = []
            self._thread = None
            return
        self.stop()
        with self._lock:
            if getattr(self, "_h", None) is not None:
                lib.dls_holder_del(self._h)
                self._h = None
            if getattr(self, "_borrowed", None):
                self._free_parts()

    def __enter__(self) -> "Holder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # ---- the step function ----------------------------------------------------

    def propose(self, subject: Value, duration: Optional[Dict[str, int]] = None,
                shared: bool = False) -> int:
        """Appends a proposal for `subject` (str, bytes or Raw) asking for
        `duration` (``{"s": 3}``; None: the configured duration, else the
        judge's default). Returns the proposal handle named by later
        events. DaoleaseError DLS_ERR_SIZING (with the numbers) when the ask
        fails a sizing relation."""
        shared = _args.flag("shared", shared)
        enc = encode_value(subject)
        ask = duration if duration is not None else self.default_duration
        askp = ffi.new("dls_duration *", _duration(ask)) if ask is not None else ffi.NULL
        handle = ffi.new("uint64_t *")
        with self._lock:
            self._live()
            rc = lib.dls_holder_propose(self._h, enc, len(enc), askp, 1 if shared else 0, handle)
            if rc:
                check(rc, f"propose {subject!r}", reason=pystr(lib.dls_holder_message(self._h)) or None)
            return int(handle[0])

    def step(self) -> List[Event]:
        """Reads the host clock once (a tick), then one dls_holder_step:
        drains ticks and the journal, renews what is due. Returns its
        events (also dispatched to claims)."""
        with self._lock:
            self._live()
            self._ticks.now()
            rc = lib.dls_holder_step(self._h, self._res)
            if rc and rc != lib.DLS_ERR_NOMEM:
                if rc == lib.DLS_ERR_TICKS_ENDED:
                    pass  # every lease at its bound; events say so
                else:
                    check(rc, "step")
            events = [self._event(self._res.events[i]) for i in range(self._res.n_events)]
            for e in events:
                self._dispatch(e)
            return events

    # holder.md's duties by name: observing grants and renewing both happen
    # in the step (the C holder renews what is due on its own ticks).
    observe = step
    renew = step

    def next_due(self) -> Optional[float]:
        """Seconds until a step is next needed (None: nothing falls due)."""
        with self._lock:
            r = self._res
            if not r.has_next or not r.has_now:
                return None
            return max(0.0, (int(r.next_reading) - int(r.now)) / 1e9)

    def may_act(self, lease: int) -> bool:
        with self._lock:
            self._live()
            self._ticks.now()
            return bool(lib.dls_holder_may_act(self._h, lease))

    def remaining_ns(self, lease: int) -> int:
        ns = ffi.new("uint64_t *")
        with self._lock:
            self._live()
            self._ticks.now()
            check(lib.dls_holder_remaining(self._h, lease, ns), f"lease {lease}")
        return int(ns[0])

    def remaining(self, lease: int) -> float:
        """Seconds before the bound of `lease` (0.0 at or after it)."""
        return self.remaining_ns(lease) / 1e9

    def release(self, lease: int, commit: bool = False) -> None:
        """Releases `lease` (with commit: the work is finished). may_act is
        False from now on. A failed append is retried at every later step."""
        with self._lock:
            self._live()
            rc = lib.dls_holder_release(self._h, lease, bool(commit))
            if rc and rc != lib.DLS_ERR_NO_LEASE:
                # retried by later steps; report it all the same
                check(rc, f"release {lease}")

    def lease_info(self, lease: int) -> Dict[str, Any]:
        """What the holder knows of `lease` (dls_holder_lease)."""
        info = ffi.new("dls_holder_lease *")
        with self._lock:
            self._live()
            check(lib.dls_holder_lease_info(self._h, lease, info), f"lease {lease}")
            states = ["held", "at_bound", "releasing", "released"]
            return {"lease": int(info.lease), "proposal": int(info.proposal),
                    "state": states[int(info.state)], "subject": decode_value(span(info.subject)),
                    "mode": ["exclusive", "shared"][int(info.mode)],
                    "duration": duration_dict(info.duration),
                    "max": duration_dict(info.max) if info.has_max else None,
                    "observed": int(info.observed),
                    "last_renewal": int(info.last_renewal) if info.renewed else None,
                    "seq": int(info.seq), "bound": int(info.bound)}

    def _forked(self) -> bool:
        return getattr(self, "_pid", None) not in (None, os.getpid())

    def _live(self) -> None:
        if self._forked():
            raise ForkedHolder(lib.DLS_ERR_STATE,
                               f"this holder belongs to process {self._pid}, not to process "
                               f"{os.getpid()} (a child after fork() makes its own holder)",
                               context=self.name)
        if getattr(self, "_h", None) is None:
            raise DaoleaseError(lib.DLS_ERR_STATE, "the holder is closed")

    @staticmethod
    def _event(e) -> Event:
        kind = pystr(lib.dls_holder_event_name(e.kind))
        cause = lib.dls_cause_name(e.cause) if e.kind == lib.DLS_HOLDER_LAPSED else ffi.NULL
        err = None
        if e.error:
            from ._lib import error_name
            err = error_name(int(e.error))
        return Event(kind, int(e.lease), int(e.proposal), int(e.reading), int(e.seq),
                     pystr(cause) if cause != ffi.NULL else None, err,
                     ffi.string(e.text, e.text_len).decode("utf-8", "replace") if e.text_len else "")

    def _dispatch(self, e: Event) -> None:  # under the lock
        w = self._waiters.get(e.proposal) if e.proposal else None
        if e.kind == "granted" and w is not None:
            del self._waiters[e.proposal]
            w.lease = Lease(self, e.lease, w.subject)
            self._leases[e.lease] = w.lease
            w.done.set()
        elif e.kind in ("refused", "misregistered") and w is not None:
            del self._waiters[e.proposal]
            if e.kind == "refused":
                w.error = Refused(lib.DLS_ERR_STATE, f"refused: {e.text or 'no reason'}",
                                  context=f"proposal for {w.subject!r}")
                w.error.reason = e.text
            else:
                w.error = DaoleaseError(lib.DLS_ERR_MEDIUM_ID, "the grant registers another "
                                        "medium than the holder's own", context=str(w.subject))
            w.done.set()
        elif e.kind in ("bound", "lapsed") and e.lease in self._leases:
            lease = self._leases[e.lease]
            if e.kind == "lapsed":
                why = f"was reclaimed by the grantor (cause {e.cause})"
            elif e.text:  # e.g. "named due (policy) in the grantor's pass 6"
                # the event text may already begin with the phrase (holder.md)
                text = e.text
                if text.startswith("reached its bound: "):  # Python 3.8: no removeprefix
                    text = text[len("reached its bound: "):]
                why = f"reached its bound: {text}"
            else:
                why = "reached its bound (renewals did not succeed)"
            lease._lose(f"lease {e.lease} on {lease.subject!r} {why}")
            if e.kind == "lapsed":
                self._leases.pop(e.lease, None)

    # ---- the background loop and claims ------------------------------------------

    def start(self) -> None:
        """Starts a daemon thread stepping the holder (idempotent)."""
        with self._lock:
            self._live()
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=f"daolease-holder-{self.name}",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        t = self._thread
        if t is not None:
            self._stop.set()
            if t is not threading.current_thread():
                t.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except DaoleaseError:
                pass  # a transport error now: the bound protects the leases
            due = self.next_due()
            self._stop.wait(TURN if due is None else min(TURN, max(due, 0.0005)))

    def acquire(self, subject: Value, duration: Optional[Dict[str, int]] = None, *,
                shared: bool = False, wait: Optional[float] = None) -> Lease:
        """Proposes and waits (stepping in the background) for the grant.
        Raises Refused, TimeoutError after `wait` seconds (the proposal
        stays outstanding; a late grant lapses by silence), or
        DaoleaseError."""
        wait = _args.seconds("wait", wait)  # before anything is appended
        shared = _args.flag("shared", shared)
        self.start()
        w = _Waiter(subject)
        with self._lock:
            handle = self.propose(subject, duration, shared)
            self._waiters[handle] = w
        if not w.done.wait(wait):
            with self._lock:
                self._waiters.pop(handle, None)
            raise TimeoutError(f"no grant for {subject!r} within {wait} s")
        if w.error is not None:
            raise w.error
        assert w.lease is not None
        return w.lease

    @contextlib.contextmanager
    def claim(self, subject: Value, duration: Optional[Dict[str, int]] = None, *,
              shared: bool = False, wait: Optional[float] = None,
              interrupt: bool = True) -> Iterator[Lease]:
        """``with holder.claim(subject, duration={"s": 3}) as lease:`` —
        the lease is renewed in the background while the body runs; a clean
        exit releases it with commit, an exception without. With
        `interrupt`, LeaseLost is raised in this thread as soon as the lease
        is lost; without, call ``lease.check()`` or ``lease.may_act()``."""
        lease = self.acquire(subject, duration, shared=shared, wait=wait)
        with self._lock:
            if interrupt and not lease.lost:
                lease._thread = threading.get_ident()
        ok = False
        try:
            yield lease
            ok = True
        except LeaseLost:
            if self._forked():
                raise
            with self._lock:
                lease._disarm()
            raise LeaseLost(lease.lost_reason or "lease lost") from None
        finally:
            if not self._forked():
                self._leave(lease, ok)
            # in a child after fork() the lease is the parent's: leaving the
            # block appends nothing and touches nothing (holder.md)
        if ok and lease.lost and not self._forked():
            raise LeaseLost(lease.lost_reason or "lease lost")

    def _leave(self, lease: Lease, ok: bool) -> None:
        """A claim's end in the process that made the holder: disarm, then
        release (with commit when the body ended cleanly) unless lost."""
        with self._lock:
            lease._disarm()
            if not lease.lost:
                try:
                    self.release(lease.token, commit=ok)
                except DaoleaseError:
                    pass  # retried at later steps

    @contextlib.asynccontextmanager
    async def aclaim(self, subject: Value, duration: Optional[Dict[str, int]] = None, *,
                     shared: bool = False, wait: Optional[float] = None):
        """``async with holder.aclaim(...) as lease:`` — as claim(), but the
        task that entered is cancelled when the lease is lost (and the
        CancelledError becomes LeaseLost at the block's end)."""
        loop = asyncio.get_running_loop()
        lease = await loop.run_in_executor(
            None, lambda: self.acquire(subject, duration, shared=shared, wait=wait))
        with self._lock:
            lease._task, lease._loop = asyncio.current_task(), loop
            if lease.lost:
                lease._fired = True
        ok = False
        try:
            if lease._fired:
                raise LeaseLost(lease.lost_reason or "lease lost")
            yield lease
            ok = True
        except asyncio.CancelledError:
            if lease.lost:
                raise LeaseLost(lease.lost_reason or "lease lost") from None
            raise
        finally:
            if not self._forked():
                self._leave(lease, ok)
        if ok and lease.lost and not self._forked():
            raise LeaseLost(lease.lost_reason or "lease lost")

    def wait_released(self, lease: int, timeout: float = 5.0) -> bool:
        """Steps until the release of `lease` is appended (or it is gone)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if self.lease_info(lease)["state"] == "released":
                    return True
            except DaoleaseError:
                return True
            if self._thread is None:
                self.step()
            time.sleep(TURN)
        return False


__all__ = ["Holder", "Lease", "LeaseLost", "Refused", "ForkedHolder", "Event"]
