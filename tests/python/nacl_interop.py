#!/usr/bin/python3
"""Envelopes of attribution.md written and verified outside the C library.

An implementation of the envelope format from the specification alone, with
PyNaCl (Ed25519), Python's hmac (HMAC-SHA-512 truncated to 32 bytes, which is
libsodium's crypto_auth) and msgpack. tests/test_attrib.c drives it: one JSON
object a line on stdin, one answer a line on stdout.

  {"op": "sign", "kind": "ed25519"|"mac", "seed_hex"|"key_hex": ..., "author": ...,
   "medium_hex": ..., "fact_hex": ...}
      -> {"envelope_hex": ..., "message_hex": ..., "key_hex": <public or mac key>}
  {"op": "verify", "kind": ..., "key_hex": ..., "author": ..., "medium_hex": ...,
   "envelope_hex": ...}
      -> {"verifies": bool, "why": null|"signature"|"unknown-author"|"wrong-key-kind"|"malformed",
          "fact_hex": ...|null}
  Batch envelopes (attribution.md revision 4), the same with "facts_hex": [...]:
  {"op": "sign_batch", ... "facts_hex": [...]} -> {"envelope_hex", "message_hex", "key_hex"}
  {"op": "verify_batch", ...} -> {"verifies", "why", "facts_hex": [...]|null}
"""
import hashlib
import hmac
import json
import struct
import sys

import msgpack
import nacl.bindings
import nacl.exceptions
import nacl.signing

PREFIX = b"daolease.fact.v1"
BATCH_PREFIX = b"daolease.batch.v1"


def message(medium, author, fact):
    assert len(medium) == 16 and 1 <= len(author) <= 64
    return PREFIX + medium + bytes([len(author)]) + author + fact


def batch_message(medium, author, facts):
    assert len(medium) == 16 and 1 <= len(author) <= 64 and 1 <= len(facts) <= 4096
    m = BATCH_PREFIX + medium + bytes([len(author)]) + author + struct.pack("<I", len(facts))
    for f in facts:
        m += struct.pack("<I", len(f)) + f
    return m


def mac_tag(key, m):
    return hmac.new(key, m, hashlib.sha512).digest()[:32]


def sign(req):
    medium = bytes.fromhex(req["medium_hex"])
    author = req["author"].encode()
    fact = bytes.fromhex(req["fact_hex"])
    m = message(medium, author, fact)
    if req["kind"] == "ed25519":
        sk = nacl.signing.SigningKey(bytes.fromhex(req["seed_hex"]))
        tag = sk.sign(m).signature
        key = bytes(sk.verify_key)
        tag_key = "dao.env/sig"
    else:
        key = bytes.fromhex(req["key_hex"])
        tag = mac_tag(key, m)
        tag_key = "dao.env/mac"
    env = msgpack.packb({"dao.env/author": req["author"], "dao.env/fact": fact, tag_key: tag},
                        use_bin_type=True)
    return {"envelope_hex": env.hex(), "message_hex": m.hex(), "key_hex": key.hex()}


def sign_batch(req):
    medium = bytes.fromhex(req["medium_hex"])
    author = req["author"].encode()
    facts = [bytes.fromhex(h) for h in req["facts_hex"]]
    m = batch_message(medium, author, facts)
    if req["kind"] == "ed25519":
        sk = nacl.signing.SigningKey(bytes.fromhex(req["seed_hex"]))
        tag, key, tag_key = sk.sign(m).signature, bytes(sk.verify_key), "dao.env/sig"
    else:
        key = bytes.fromhex(req["key_hex"])
        tag, tag_key = mac_tag(key, m), "dao.env/mac"
    env = msgpack.packb({"dao.env/author": req["author"], "dao.env/facts": facts, tag_key: tag},
                        use_bin_type=True)
    return {"envelope_hex": env.hex(), "message_hex": m.hex(), "key_hex": key.hex()}


class Repeated(Exception):
    pass


def pairs(items):
    seen = set()
    for k, _ in items:
        ident = (type(k), k) if isinstance(k, (str, bytes, int)) else repr(k)
        if ident in seen:
            raise Repeated()
        seen.add(ident)
    return dict(items)


def verify(req):
    medium = bytes.fromhex(req["medium_hex"])
    key = bytes.fromhex(req["key_hex"])
    malformed = {"verifies": False, "why": "malformed", "fact_hex": None}
    try:
        env = msgpack.unpackb(bytes.fromhex(req["envelope_hex"]), raw=False,
                              use_list=True, strict_map_key=False,
                              object_pairs_hook=pairs)
    except (Repeated, ValueError, msgpack.ExtraData, msgpack.FormatError,
            msgpack.StackError, UnicodeDecodeError):
        return malformed
    if not isinstance(env, dict):
        return malformed
    author = env.get("dao.env/author")
    fact = env.get("dao.env/fact")
    sig = env.get("dao.env/sig")
    mac = env.get("dao.env/mac")
    if (not isinstance(author, str) or not 1 <= len(author.encode()) <= 64
            or not isinstance(fact, bytes) or len(fact) > 65536
            or (sig is None) == (mac is None)
            or (sig is not None and (not isinstance(sig, bytes) or len(sig) != 64))
            or (mac is not None and (not isinstance(mac, bytes) or len(mac) != 32))):
        return malformed
    if author != req["author"]:
        return {"verifies": False, "why": "unknown-author", "fact_hex": fact.hex()}
    if (req["kind"] == "mac") != (mac is not None):
        return {"verifies": False, "why": "wrong-key-kind", "fact_hex": fact.hex()}
    m = message(medium, author.encode(), fact)
    if mac is not None:
        ok = hmac.compare_digest(mac_tag(key, m), mac)
    else:
        try:
            nacl.signing.VerifyKey(key).verify(m, sig)
            ok = True
        except nacl.exceptions.BadSignatureError:
            ok = False
    return {"verifies": ok, "why": None if ok else "signature", "fact_hex": fact.hex()}


def verify_batch(req):
    medium = bytes.fromhex(req["medium_hex"])
    key = bytes.fromhex(req["key_hex"])
    raw = bytes.fromhex(req["envelope_hex"])
    malformed = {"verifies": False, "why": "malformed", "facts_hex": None}
    if len(raw) > 65536:
        return malformed
    try:
        env = msgpack.unpackb(raw, raw=False, use_list=True, strict_map_key=False,
                              object_pairs_hook=pairs)
    except (Repeated, ValueError, msgpack.ExtraData, msgpack.FormatError,
            msgpack.StackError, UnicodeDecodeError):
        return malformed
    if not isinstance(env, dict):
        return malformed
    author = env.get("dao.env/author")
    facts = env.get("dao.env/facts")
    sig = env.get("dao.env/sig")
    mac = env.get("dao.env/mac")
    if (not isinstance(author, str) or not 1 <= len(author.encode()) <= 64
            or "dao.env/fact" in env
            or not isinstance(facts, list) or not 1 <= len(facts) <= 4096
            or any(not isinstance(f, bytes) or len(f) > 4096 for f in facts)
            or (sig is None) == (mac is None)
            or (sig is not None and (not isinstance(sig, bytes) or len(sig) != 64))
            or (mac is not None and (not isinstance(mac, bytes) or len(mac) != 32))):
        return malformed
    shown = [f.hex() for f in facts]
    if author != req["author"]:
        return {"verifies": False, "why": "unknown-author", "facts_hex": shown}
    if (req["kind"] == "mac") != (mac is not None):
        return {"verifies": False, "why": "wrong-key-kind", "facts_hex": shown}
    m = batch_message(medium, author.encode(), facts)
    if mac is not None:
        ok = hmac.compare_digest(mac_tag(key, m), mac)
    else:
        try:
            nacl.signing.VerifyKey(key).verify(m, sig)
            ok = True
        except nacl.exceptions.BadSignatureError:
            ok = False
    return {"verifies": ok, "why": None if ok else "signature", "facts_hex": shown}


OPS = {"sign": sign, "verify": verify, "sign_batch": sign_batch, "verify_batch": verify_batch}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        out = OPS[req["op"]](req)
        sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
