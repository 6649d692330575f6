"""daolease for Python: leases as data, over the C library (libdaolease)
through cffi. Nothing here re-implements a rule: every decision is the C
library's.

- :class:`Holder` / :class:`Lease` — agents: propose, observe, renew,
  release; ``with holder.claim(subject) as lease:``.
- :class:`Judge` — owners: the judge in your loop, your reclaim callback.
- :mod:`facts` — encode/decode lease facts; :class:`Stream` — media and
  cursors; :func:`keygen`, :class:`Secret`, :class:`Keyring`.
- :func:`audit` — replay a journal and its media (cli.md's JSON shapes).

Errors are :class:`DaoleaseError` carrying the C error's name
(``e.name == "DLS_ERR_SIZING"``), code and reason.
"""
from . import facts
from ._lib import LIBRARY_PATH, SONAME, DaoleaseError, error_name
from .audit import audit
from .holder import Event, ForkedHolder, Holder, Lease, LeaseLost, Refused
from .judge import Judge
from .stream import Attribution, Cursor, Keyring, Record, Resolver, Secret, Stream, keygen
from .values import Raw

__version__ = "0.1.0"
__all__ = ["facts", "DaoleaseError", "error_name", "LIBRARY_PATH", "SONAME", "audit", "Event",
           "ForkedHolder", "Holder", "Lease", "LeaseLost", "Refused", "Judge", "Attribution",
           "Cursor", "Keyring", "Record", "Resolver", "Secret", "Stream", "keygen", "Raw"]
