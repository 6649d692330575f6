"""Host-clock ticks for one process (as the CLI's dls_cli_ticks): an
in-memory ring, the library's tick adapter appending bare tick facts read
from CLOCK_MONOTONIC, and a `medium` resolver naming the tick party. The
judge and the holder read no clock: they learn time from these ticks."""
from __future__ import annotations

from ._lib import Handle, check, cstr, ffi, lib, new_where, pystr

TICK_PARTY = "ticks"


class Ticks(Handle):
    """Owns the ring and what borrows it; freed in order (cursor,
    resolver, adapter, ring) once the judge or holder using it let go."""

    def __init__(self, cursor: bool) -> None:
        super().__init__(None)
        self.adapter = self.resolver = self.cursor = None
        ms = ffi.new("dls_medium_settings *")
        lib.dls_medium_settings_default(ms)
        ms.ring_capacity = 1024
        ring = ffi.new("dls_medium **")
        check(lib.dls_ring_new(ring, ms), "tick ring")
        self._p = self.ring = ring[0]
        try:
            ts = ffi.new("dls_tick_settings *")
            lib.dls_tick_settings_default(ts)
            adapter = ffi.new("dls_tick **")
            w = new_where()
            check(lib.dls_tick_new(adapter, self.ring, ts, w), "tick adapter", w)
            self.adapter = adapter[0]
            res = ffi.new("dls_resolver **")
            check(lib.dls_resolver_new_medium(res, lib.dls_medium_id(self.ring),
                                              cstr(TICK_PARTY), ffi.NULL), "tick resolver")
            self.resolver = res[0]
            if cursor:
                cur = ffi.new("dls_cursor **")
                check(lib.dls_cursor_new(cur, self.ring, 0), "tick cursor")
                self.cursor = cur[0]
        except Exception:
            self.close()
            raise
        self.party = ffi.new("char[]", cstr(TICK_PARTY))

    @property
    def basis(self) -> str:
        return pystr(lib.dls_tick_basis(self.adapter))

    def now(self) -> int:
        """Reads the monotonic clock once, appends a tick; the reading in ns."""
        r = ffi.new("uint64_t *")
        check(lib.dls_tick_now(self.adapter, r), "tick")
        return int(r[0])

    def _release(self) -> None:
        if self.cursor is not None:
            lib.dls_cursor_del(self.cursor)
        if self.resolver is not None:
            lib.dls_resolver_del(self.resolver)
        if self.adapter is not None:
            lib.dls_tick_del(self.adapter)
        if self.ring is not None:
            lib.dls_medium_del(self.ring)
        self.cursor = self.resolver = self.adapter = self.ring = self._p = None
