"""Argument checks of the package's entry points (docs/python.md,
Arguments): a value of the wrong type is a TypeError, one of the right type
but out of range a ValueError, always raised before anything is appended —
never a silent coercion (1.5 s granted as 1 s, ``"yes"`` taken as true, a
str split into characters)."""
from numbers import Real
from typing import Any, List, Optional

SYNCS = ("none", "data", "group")


def flag(name: str, v: Any) -> bool:
    """A bool, nothing else (``shared="yes"`` is refused)."""
    if not isinstance(v, bool):
        raise TypeError(f"{name} is True or False, not {v!r}")
    return v


def seconds(name: str, v: Any) -> Optional[float]:
    """None, or a number of seconds >= 0 (not a bool, not a str)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, Real):
        raise TypeError(f"{name} is a number of seconds or None, not {v!r}")
    if v != v or v < 0:
        raise ValueError(f"{name} is a number of seconds >= 0, not {v!r}")
    return float(v)


def sequence(name: str, v: Any) -> List[Any]:
    """A list (or tuple, or other iterable) of items — never a str or bytes,
    which would be split into characters."""
    if isinstance(v, (str, bytes, bytearray)) or not hasattr(v, "__iter__"):
        raise TypeError(f"{name} is a list, not {type(v).__name__} {v!r} "
                        f"(one item: write [{v!r}])")
    return list(v)


def sync(v: Any) -> str:
    """A sync policy name."""
    if not isinstance(v, str):
        raise TypeError(f"sync is one of {', '.join(map(repr, SYNCS))}, not {v!r}")
    if v not in SYNCS:
        raise ValueError(f"sync is one of {', '.join(map(repr, SYNCS))}, not {v!r}")
    return v
