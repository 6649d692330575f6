"""The configuration file of ``daolease judge`` and ``daolease run``
(docs/config.md), read into a dict with paths made absolute.

Only what the file says is read here; every rule about it (defaults,
ranges, which keys a role needs) stays in the C library or is checked by
the C call the values are handed to."""
from __future__ import annotations

import json
import os
from typing import Any, Dict

from ._lib import DaoleaseError, lib

KNOWN = {"party", "key", "keyring", "grantor", "journal", "medium", "media", "ticks", "sync",
         "tolerance", "cadence", "duration", "min_duration", "max_duration", "max",
         "lock_delay", "grace", "heartbeat", "takeover_after", "create_journal",
         "drain_budget", "drain_per_s"}
PATHS = ("key", "keyring", "journal", "medium")


def _abs(base: str, p: str) -> str:
    if p.startswith("redis://") or os.path.isabs(p):
        return p
    return os.path.join(base, p)


def load(path: str, need: tuple = ()) -> Dict[str, Any]:
    """Reads a configuration file; unknown keys and missing required keys
    raise DaoleaseError(DLS_ERR_CONFIG) naming the file and the key."""
    def fail(msg: str):
        raise DaoleaseError(lib.DLS_ERR_CONFIG, msg, context=path)
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f, object_pairs_hook=_no_dupes(fail))
    except OSError as e:
        fail(e.strerror or str(e))
    except ValueError as e:
        fail(f"not JSON: {e}")
    if not isinstance(cfg, dict):
        fail("not a JSON object")
    for k in cfg:
        if k not in KNOWN:
            fail(f'key "{k}": unknown key')
    for k in ("party", "key", "keyring", "journal") + tuple(need):
        if k not in cfg:
            fail(f'key "{k}": missing')
    base = os.path.dirname(os.path.abspath(path))
    for k in PATHS:
        if k in cfg:
            cfg[k] = _abs(base, cfg[k])
    if "media" in cfg:
        media = []
        for m in cfg["media"]:
            if isinstance(m, dict):
                media.append((_abs(base, m["medium"]), m.get("party")))
            elif "=" in m and not m.startswith("redis://"):
                p, party = m.split("=", 1)
                media.append((_abs(base, p), party))
            else:
                media.append((_abs(base, m), None))
        cfg["media"] = media
    return cfg


def _no_dupes(fail):
    def hook(pairs):
        d = {}
        for k, v in pairs:
            if k in d:
                fail(f'key "{k}": repeated')
            d[k] = v
        return d
    return hook
