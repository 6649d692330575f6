#!/usr/bin/python3
"""Interoperability of the vocabulary codec with msgpack-python
(vocabulary.md: facts are plain msgpack; writers use the shortest form).

  vocab_interop.py check < hex-lines
      Each line is a fact written by the C codec. Decode it with
      msgpack-python, check the keys come in vocabulary.md's table order
      (dispatch key first, then the kind's row, then other vocabulary keys in
      the Keys table's order), re-encode it and require the very same bytes.
      Prints "ok N" and exits 0, or names the first bad line and exits 1.

  vocab_interop.py make
      Prints "kind hex" lines: facts of every kind written by msgpack-python
      in table order, for the C codec to decode and re-encode.
"""
import os
import random
import sys

import msgpack

P = "dao.lease/"
ROWS = {
    "proposed": ["proposal", "subject", "seq", "duration", "mode"],
    "accepted": ["lease", "subject", "holder", "duration", "medium", "proposal", "max", "mode"],
    "rejected": ["proposal", "holder", "reason"],
    "released": ["lease", "commit"],
    "lapsed": ["lease", "cause"],
    "renewal": ["lease", "seq"],
    "tick": ["reading"],
}
KEYS = ["lease", "proposal", "subject", "holder", "medium", "duration", "max", "reading",
        "cause", "seq", "mode", "commit", "reason"]


def unpack(b):
    return msgpack.unpackb(b, raw=False, strict_map_key=False,
                           unicode_errors="surrogateescape")


def pack(v):
    return msgpack.packb(v, use_bin_type=True, unicode_errors="surrogateescape")


def expected_order(fact):
    if P + "status" in fact:
        first, value = P + "status", fact[P + "status"]
    else:
        first, value = P + "event", fact[P + "event"]
    row = ROWS[value]
    order = [first] + [P + k for k in row if P + k in fact]
    order += [P + k for k in KEYS if P + k in fact and k not in row]
    return order


def check():
    n = 0
    for lineno, line in enumerate(sys.stdin, 1):
        line = line.strip()
        if not line:
            continue
        raw = bytes.fromhex(line)
        fact = unpack(raw)
        if list(fact.keys()) != expected_order(fact):
            print("line %d: key order %r" % (lineno, list(fact.keys())))
            return 1
        again = pack(fact)
        if again != raw:
            print("line %d: re-encoded differs:\n %s\n %s" % (lineno, line, again.hex()))
            return 1
        n += 1
    print("ok %d" % n)
    return 0


def make():
    rnd = random.Random(int(os.environ.get("DLS_SEED", "7")))
    medium = bytes(range(16))
    units = ["ns", "us", "ms", "s", "min", "h"]

    def dur(lo=1):
        return {rnd.choice(units): rnd.randint(lo, 1000000)}

    subjects = ["job/42", ["shard", 7], {"table": "orders", "part": 3}, b"\x00\x01",
                [1.5, None, True, -7, 2 ** 64 - 1, {"k": [[]]}], "ü-subject"]
    out = []
    for i in range(200):
        subject = rnd.choice(subjects)
        prop = rnd.choice([rnd.randbytes(16), "east-%04d" % i, "x"])
        holder = rnd.choice(["worker-east", "w", "h" * 64, "agent-\u00e9"])
        lease = rnd.choice([1, 31, 2 ** 31, 2 ** 63 - 1])
        seq = rnd.choice([1, 255, 65536, 2 ** 63 - 1])
        facts = [
            ("proposal", {P + "status": "proposed", P + "proposal": prop, P + "subject": subject,
                          P + "seq": seq, P + "duration": dur(), P + "mode": "shared"}),
            ("proposal", {P + "status": "proposed", P + "proposal": prop, P + "subject": subject,
                          P + "seq": seq}),
            ("grant", {P + "status": "accepted", P + "lease": lease, P + "subject": subject,
                       P + "holder": holder, P + "duration": dur(), P + "medium": medium,
                       P + "proposal": prop, P + "max": dur(), P + "mode": "exclusive"}),
            ("grant", {P + "status": "accepted", P + "lease": lease, P + "subject": subject,
                       P + "holder": holder, P + "duration": dur(), P + "medium": medium}),
            ("refusal", {P + "status": "rejected", P + "proposal": prop, P + "holder": holder,
                         P + "reason": rnd.choice(["unavailable", "reentrant", ""])}),
            ("release", {P + "status": "released", P + "lease": lease,
                         P + "commit": rnd.choice([True, False])}),
            ("reclaim", {P + "status": "lapsed", P + "lease": lease,
                         P + "cause": rnd.choice(["release", "cap", "policy", "silence"])}),
            ("renewal", {P + "event": "renewal", P + "lease": lease, P + "seq": seq}),
            ("tick", {P + "event": "tick", P + "reading": dur(0)}),
        ]
        kind, fact = facts[i % len(facts)]
        out.append("%s %s" % (kind, pack(fact).hex()))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(check() if sys.argv[1:] == ["check"] else make() if sys.argv[1:] == ["make"] else 2)
