#!/usr/bin/python3
"""An independent reader/writer of daolease stream files (stream-format.md),
written from the specification with the Python standard library (zlib.crc32,
struct, fcntl) and python3-msgpack only, to check that the C library and a
program in another language read and write the same bytes.

  stream_interop.py check PATH             read a stream file, verify every
                                           record, print a JSON summary
  stream_interop.py check-dir DIR          the same over a segmented medium
  stream_interop.py write PATH W N [torn]  create a file of N records of
                                           writer W (and a torn tail)
  stream_interop.py append PATH W N        append N records of writer W under
                                           the writers' OFD lock

Records are the msgpack map {"w": writer, "i": seq, "p": bin(pad)} with
pad[k] = (seq*31 + k*7 + writer) & 0xff, the scheme of tests/test_stream.c.
Exit status 0 when everything read is valid, 1 otherwise.
"""
import errno
import fcntl
import json
import os
import struct
import sys
import time
import zlib

import msgpack

MAGIC = b"DAOLSTRM"
HEADER = 48
RECORD_MAX = 65536
R = 4 << 20
SEAL = b"\x81\xb1dao.stream/sealed\xc3"


def header(medium_id, base):
    return MAGIC + struct.pack("<HHI", 1, 0, HEADER) + medium_id + struct.pack("<QQ", base, 0)


def parse_header(b):
    if len(b) < HEADER:
        raise ValueError("short header")
    if b[:8] != MAGIC:
        raise ValueError("magic")
    version, flags, hlen = struct.unpack("<HHI", b[8:16])
    base, reserved = struct.unpack("<QQ", b[32:48])
    if version != 1 or flags != 0 or hlen != HEADER or reserved != 0:
        raise ValueError("header fields")
    return b[16:32], base


def record(payload):
    return struct.pack("<II", len(payload), zlib.crc32(payload) & 0xFFFFFFFF) + payload


def payload(writer, seq, pad):
    p = bytes(((seq * 31 + k * 7 + writer) & 0xFF) for k in range(pad))
    return msgpack.packb({"w": writer, "i": seq, "p": p}, use_bin_type=True)


def check_payload(b):
    m = msgpack.unpackb(b, raw=False, strict_map_key=True)
    if not isinstance(m, dict) or set(m) != {"w", "i", "p"}:
        raise ValueError("not a test record")
    w, i, p = m["w"], m["i"], m["p"]
    for k, v in enumerate(p):
        if v != (i * 31 + k * 7 + w) & 0xFF:
            raise ValueError("pad")
    return w, i


def walk(b):
    """Yields (offset, payload) of the good records after the header and
    returns (end, tail) where tail is clean / torn / corrupt (the R rule)."""
    off = HEADER
    out = []
    while True:
        if off == len(b):
            return out, off, "clean"
        bad = False
        if len(b) - off < 8:
            bad = True
        else:
            n, crc = struct.unpack("<II", b[off:off + 8])
            if n == 0 or n > RECORD_MAX or len(b) - off - 8 < n:
                bad = True
            elif zlib.crc32(b[off + 8:off + 8 + n]) & 0xFFFFFFFF != crc:
                bad = True
        if bad:
            return out, off, "torn" if len(b) - off <= R else "corrupt"
        out.append((off, b[off + 8:off + 8 + n]))
        off += 8 + n
        if out[-1][1] == SEAL:
            return out, off, "clean"


def summarize(files):
    """files: list of (base, bytes). Checks everything, returns a dict."""
    records, sealed, seal_pos, writers, tail = 0, False, None, {}, "clean"
    expect_base = None
    for base, b in files:
        _, fbase = parse_header(b)
        if fbase != base:
            raise ValueError("base differs from the name")
        if expect_base is not None and base != expect_base:
            raise ValueError("segments are not contiguous")
        recs, _, tail = walk(b)
        pos = base
        for _, p in recs:
            if p == SEAL:
                sealed, seal_pos = True, pos
                break
            w, i = check_payload(p)
            if i != writers.get(w, 0):
                raise ValueError("writer %d out of order at %d" % (w, pos))
            writers[w] = i + 1
            records += 1
            pos += 1
        expect_base = pos
        if sealed:
            break
    return {"records": records, "sealed": sealed, "seal_position": seal_pos,
            "tail": tail, "writers": {str(k): v for k, v in sorted(writers.items())}}


def cmd_check(path):
    with open(path, "rb") as f:
        b = f.read()
    _, base = parse_header(b)
    print(json.dumps(summarize([(base, b)])))
    return 0


def cmd_check_dir(d):
    with open(os.path.join(d, "medium.id"), "rb") as f:
        text = f.read()
    if len(text) != 33 or text[32:] != b"\n" or text[:32].decode() != text[:32].decode().lower():
        raise ValueError("medium.id")
    mid = bytes.fromhex(text[:32].decode())
    names = sorted(n for n in os.listdir(d)
                   if len(n) == 24 and n.endswith(".seg") and n[:20].isdigit())
    files = []
    for n in names:
        with open(os.path.join(d, n), "rb") as f:
            b = f.read()
        if parse_header(b)[0] != mid:
            raise ValueError("segment of another medium")
        files.append((int(n[:20]), b))
    s = summarize(files)
    s["segments"] = len(files)
    s["first"] = files[0][0] if files else None
    print(json.dumps(s))
    return 0


def cmd_write(path, writer, n, torn):
    data = header(os.urandom(16), 0)
    for i in range(n):
        data += record(payload(writer, i, (i * 13) % 300))
    if torn:
        r = record(payload(writer, n, 100))
        data += r[: len(r) // 2]
    tmp = "%s.tmp-%s" % (path, os.urandom(8).hex())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # never replaces an existing file
    finally:
        os.unlink(tmp)
    dfd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(dfd)
    os.close(dfd)
    return 0


def lock(fd, kind, timeout=5.0):
    """The writers' lock: an OFD lock on the whole file (start 0, length 0)."""
    fl = struct.pack("@hhqqi4x", kind, os.SEEK_SET, 0, 0, 0)
    waited = 0.0
    while True:
        try:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, fl)
            return
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES) or waited >= timeout:
                raise
        time.sleep(0.001)
        waited += 0.001


def cmd_append(path, writer, n):
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        lock(fd, fcntl.F_WRLCK)
        size = os.fstat(fd).st_size
        b = os.pread(fd, size, 0)
        parse_header(b)
        recs, end, tail = walk(b)
        if tail == "corrupt":
            raise ValueError("corrupt")
        if recs and recs[-1][1] == SEAL:
            raise ValueError("sealed")
        if end != size:
            os.ftruncate(fd, end)  # a torn tail
        data = b"".join(record(payload(writer, i, (i * 7) % 200)) for i in range(n))
        os.pwrite(fd, data, end)
        os.fdatasync(fd)
        lock(fd, fcntl.F_UNLCK)
    finally:
        os.close(fd)
    return 0


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "check":
            return cmd_check(argv[2])
        if len(argv) == 3 and argv[1] == "check-dir":
            return cmd_check_dir(argv[2])
        if len(argv) in (5, 6) and argv[1] == "write":
            return cmd_write(argv[2], int(argv[3]), int(argv[4]), len(argv) == 6)
        if len(argv) == 5 and argv[1] == "append":
            return cmd_append(argv[2], int(argv[3]), int(argv[4]))
    except (ValueError, OSError, msgpack.exceptions.UnpackException) as e:
        print(json.dumps({"error": str(e)}))
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
