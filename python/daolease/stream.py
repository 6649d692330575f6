"""Media (stream-format.md), keys and attribution (attribution.md).

:class:`Stream` is a medium: a stream file (or segmented directory) opened
for append or read, with :meth:`Stream.append` and :meth:`Stream.cursor`.
:class:`Secret` and :class:`Keyring` wrap the key files; :func:`keygen`
does what ``daolease keygen`` does; :class:`Resolver` answers who authored
a record.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, Optional, Union

from . import _args
from ._lib import DaoleaseError, Handle, check, cstr, ffi, lib, new_where, pystr, span

PathLike = Union[str, "os.PathLike[str]"]

SYNC = {"none": 0, "data": 1, "group": 2}


class Secret(Handle):
    """One party's secret key (Ed25519 or MAC), as ``dls_secret``."""

    _free = lib.dls_secret_del

    @classmethod
    def load(cls, path: PathLike) -> "Secret":
        """Loads a key file written by keygen (mode 0600 required: DLS_ERR_PERM)."""
        out = ffi.new("dls_secret **")
        w = new_where()
        check(lib.dls_secret_load(out, cstr(os.fspath(path)), w), os.fspath(path), w)
        return cls(out[0])

    @classmethod
    def generate(cls, name: str, mac: bool = False) -> "Secret":
        out = ffi.new("dls_secret **")
        check(lib.dls_secret_generate(out, cstr(name), 1 if mac else 0), name)
        return cls(out[0])

    @property
    def name(self) -> str:
        return pystr(lib.dls_secret_name(self._p))

    def keyring_line(self) -> str:
        """``NAME ed25519 HEX`` (or ``mac``): this key's line in a keyring."""
        buf = ffi.new("char[]", 256)
        check(lib.dls_secret_keyring_line(self._p, buf, 256), self.name)
        return pystr(buf)

    def save(self, path: PathLike) -> None:
        w = new_where()
        check(lib.dls_secret_save(self._p, cstr(os.fspath(path)), w), os.fspath(path), w)

    def seal(self, medium_id: bytes, fact: bytes) -> bytes:
        """The envelope of `fact` signed (or MACed) for the medium `medium_id`."""
        cap = len(fact) + 256
        out = ffi.new("uint8_t[]", cap)
        n = ffi.new("size_t *")
        check(lib.dls_envelope_seal(self._p, bytes(medium_id), fact, len(fact), out, cap, n),
              "seal")
        return bytes(ffi.buffer(out, n[0]))


def keygen(name: str, directory: PathLike = ".", mac: bool = False) -> str:
    """Writes ``NAME.secret`` (mode 0600) in `directory` and returns the
    keyring line (as ``daolease keygen``). DaoleaseError DLS_ERR_EXISTS when
    the file exists."""
    s = Secret.generate(name, mac)
    s.save(os.path.join(os.fspath(directory), name + ".secret"))
    return s.keyring_line()


class Keyring(Handle):
    """A keyring (``NAME KIND HEX`` lines), as ``dls_keyring`` (the C
    resolvers take their own references)."""

    _free = lib.dls_keyring_del

    @classmethod
    def load(cls, path: PathLike) -> "Keyring":
        out = ffi.new("dls_keyring **")
        w = new_where()
        check(lib.dls_keyring_load(out, cstr(os.fspath(path)), w), os.fspath(path), w)
        return cls(out[0])

    @classmethod
    def parse(cls, text: str) -> "Keyring":
        out = ffi.new("dls_keyring **")
        w = new_where()
        b = text.encode()
        check(lib.dls_keyring_parse(out, b, len(b), w), "keyring", w)
        return cls(out[0])


@dataclass(frozen=True)
class Record:
    """What a cursor's next() answered: ``status`` is ``"ok"``,
    ``"blocked"``, ``"end"``, ``"gap"`` or ``"transport-error"``;
    ``data`` the payload on ok; ``gap_from`` where a gap started."""
    status: str
    position: int
    data: Optional[bytes] = None
    gap_from: Optional[int] = None


class Cursor(Handle):
    """A cursor on a :class:`Stream` (never blocks). Iterating yields the
    ok records available now and stops at blocked or end."""

    _free = lib.dls_cursor_del

    def __init__(self, stream: "Stream", start: int = 0) -> None:
        out = ffi.new("dls_cursor **")
        p = stream.borrow()
        rc = lib.dls_cursor_new(out, p, start)
        if rc:
            stream.unborrow()
        check(rc, stream.name)
        self._stream = stream  # the cursor borrows the medium
        super().__init__(out[0])

    def _after_release(self) -> None:
        self._stream.unborrow()

    def next(self) -> Record:
        rec = ffi.new("dls_record *")
        w = new_where()
        r = lib.dls_cursor_next(self._p, rec, w)
        status = pystr(lib.dls_next_name(r))
        if r == lib.DLS_NEXT_OK:
            return Record(status, int(rec.position), bytes(ffi.buffer(rec.p, rec.n)))
        if r == lib.DLS_NEXT_GAP:
            return Record(status, int(rec.position), None, int(rec.gap_from))
        return Record(status, int(rec.position))

    @property
    def position(self) -> int:
        """The next unread position."""
        return int(lib.dls_cursor_position(self._p))

    def __iter__(self) -> Iterator[Record]:
        while True:
            r = self.next()
            if r.status in ("blocked", "end", "transport-error"):
                return
            yield r


class Stream(Handle):
    """A medium: a stream file or segmented directory, or an in-memory ring.

    ``Stream.create(path)`` makes a new file (DLS_ERR_EXISTS if it exists),
    ``Stream.open(path, append=False)`` opens one (append takes the writer
    lock per append and recovers a torn tail).
    """

    _free = lib.dls_medium_del

    @staticmethod
    def _settings(sync: str, exclusive: bool = False):
        s = ffi.new("dls_medium_settings *")
        lib.dls_medium_settings_default(s)
        s.sync = SYNC[_args.sync(sync)]
        s.exclusive = exclusive
        return s

    @classmethod
    def create(cls, path: PathLike, *, sync: str = "data", segmented: bool = False) -> "Stream":
        out = ffi.new("dls_medium **")
        w = new_where()
        kind = lib.DLS_MEDIUM_SEGMENTED if segmented else lib.DLS_MEDIUM_FILE
        p = os.fspath(path)
        check(lib.dls_medium_create(out, kind, cstr(p), cls._settings(sync), w), p, w)
        return cls(out[0])

    @classmethod
    def open(cls, path: PathLike, *, append: bool = False, sync: str = "data",
             create: bool = False, exclusive: bool = False) -> "Stream":
        """`exclusive` (with `append`): the one writer of a journal — the
        writer lock held until close, a torn tail holding CRC-valid records
        refused (DLS_ERR_VALID_TAIL), never cut; docs/streams.md."""
        p = os.fspath(path)
        exclusive = _args.flag("exclusive", exclusive)
        if create and not os.path.exists(p):
            return cls.create(p, sync=sync)
        out = ffi.new("dls_medium **")
        w = new_where()
        mode = lib.DLS_OPEN_APPEND if append else lib.DLS_OPEN_READ
        check(lib.dls_medium_open(out, cstr(p), mode, cls._settings(sync, exclusive), w), p, w)
        return cls(out[0])

    @classmethod
    def ring(cls, capacity: int = 4096) -> "Stream":
        out = ffi.new("dls_medium **")
        s = cls._settings("none")
        s.ring_capacity = capacity
        check(lib.dls_ring_new(out, s), "ring")
        return cls(out[0])

    @property
    def id(self) -> bytes:
        """The medium's 16-byte id."""
        return bytes(ffi.buffer(lib.dls_medium_id(self._p), 16))

    @property
    def name(self) -> str:
        return pystr(lib.dls_medium_name(self._p))

    def append(self, record: bytes) -> int:
        """Appends one record (a msgpack map); returns its position once it
        is durable to the sync policy."""
        pos = ffi.new("uint64_t *")
        w = new_where()
        check(lib.dls_medium_append(self._p, record, len(record), pos, w), self.name, w)
        return int(pos[0])

    def append_fact(self, fact: bytes, secret: Optional[Secret] = None) -> int:
        """Appends a fact, sealed in an envelope for this medium when a
        secret is given."""
        return self.append(secret.seal(self.id, fact) if secret else fact)

    def seal(self) -> None:
        w = new_where()
        check(lib.dls_medium_seal(self._p, w), self.name, w)

    def cursor(self, start: int = 0) -> Cursor:
        return Cursor(self, start)

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class Attribution:
    kind: str             # "fact", "envelope", "seal", "malformed"
    attributed: bool
    why: Optional[str]    # cli.md's word, None when attributed
    author: str
    fact: bytes


class Resolver(Handle):
    """Who authored a record read from one medium: ``signed`` (envelopes
    verified under a keyring) or ``medium`` (bare facts are `party`'s)."""

    def __init__(self, stream: Stream, keyring: Optional[Keyring] = None,
                 party: Optional[str] = None) -> None:
        out = ffi.new("dls_resolver **")
        kr = keyring._p if keyring else ffi.NULL
        if party:
            rc = lib.dls_resolver_new_medium(out, stream.id, cstr(party), kr)
        else:
            if keyring is None:
                raise ValueError("a signed resolver needs a keyring")
            rc = lib.dls_resolver_new_signed(out, stream.id, kr)
        check(rc, stream.name)
        super().__init__(out[0])

    _free = lib.dls_resolver_del

    def attribute(self, record: bytes) -> Attribution:
        a = ffi.new("dls_attribution *")
        buf = ffi.from_buffer(record)
        lib.dls_resolver_attribute(self._p, buf, len(record), a)
        why = lib.dls_why_name(a.why)
        return Attribution(pystr(lib.dls_record_kind_name(a.kind)), bool(a.attributed),
                           None if why == ffi.NULL else pystr(why),
                           span(a.author).decode("utf-8", "replace"), span(a.fact))


__all__ = ["Stream", "Cursor", "Record", "Secret", "Keyring", "Resolver", "Attribution",
           "keygen", "DaoleaseError"]
