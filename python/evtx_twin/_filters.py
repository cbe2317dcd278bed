"""The record filters of `Parser` (`event_ids`, `levels`, `providers`, `channels`, `since`,
`until`), checked and turned into the C ABI's `evtx_options` version 1 fields.

The engine decides them before rendering, as the CLIs' `--event-id`, `--level`, `--provider`,
`--channel`, `--since`, `--until` (the rules: shared-fixtures/README.md, "Filters"). Accepted:

* event_ids, levels: an int, a ``(first, last)`` tuple (inclusive), a ``range`` (its
  ``start`` to ``stop - 1``), the CLI's LIST text (``"4624,4700-4799"``), or a list of these;
* providers, channels: a name or a list of names (compared whole, ASCII case-insensitively);
* since (inclusive), until (exclusive): an aware `datetime`, the CLI's RFC 3339 TIME text
  (``"2024-05-01T08:00:00Z"``, up to 7 fraction digits) or a FILETIME int.

None (the default) or an empty list constrains nothing.
"""

from __future__ import annotations

import ctypes
import re
from datetime import datetime, timezone
from typing import Any

from . import _ffi

_U32 = 0xFFFFFFFF
_EPOCH = datetime(1601, 1, 1, tzinfo=timezone.utc)
_TIME = re.compile(r"(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2})(?:\.(\d{1,7}))?"
                   r"([Zz]|[+-]\d{2}:\d{2})", re.ASCII)


def ranges(value: Any, name: str) -> list[tuple[int, int]]:
    """`event_ids` / `levels` as inclusive (first, last) ranges."""
    if value is None:
        return []
    if isinstance(value, (str, int, tuple, range)):
        value = [value]
    out: list[tuple[int, int]] = []
    for item in value:
        if isinstance(item, str):
            for part in item.split(","):
                first, _, last = part.partition("-")
                if not (first.isascii() and first.isdigit()
                        and (not last or last.isascii() and last.isdigit())):
                    raise ValueError(f"{name}: expected a number or a range such as 4700-4799, "
                                     f"got {part!r}")
                out.append((int(first), int(last or first)))
        elif isinstance(item, bool):
            raise TypeError(f"{name}: a bool is not an id")
        elif isinstance(item, int):
            out.append((item, item))
        elif isinstance(item, range) and item.step == 1 and len(item):
            out.append((item.start, item.stop - 1))
        elif isinstance(item, tuple) and len(item) == 2 and all(
                isinstance(n, int) and not isinstance(n, bool) for n in item):
            out.append(item)
        else:
            raise TypeError(f"{name}: expected ints, (first, last) tuples, ranges or LIST text, "
                            f"not {item!r}")
    for first, last in out:
        if not 0 <= first <= last <= _U32:
            raise ValueError(f"{name}: the range {first}-{last} is empty or outside 0..2**32-1")
    return out


def names(value: Any, name: str) -> list[bytes]:
    """`providers` / `channels` as NUL-terminated UTF-8."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    out = []
    for item in value:
        if not isinstance(item, str) or not item or "\0" in item:
            raise ValueError(f"{name}: a name is a non-empty str without NUL, not {item!r}")
        out.append(item.encode("utf-8"))
    return out


def filetime(value: Any, name: str) -> int | None:
    """`since` / `until` as FILETIME ticks (100 ns since 1601-01-01 UTC)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}: a bool is not a time")
    if isinstance(value, int):
        ticks = value
    elif isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{name}: a datetime must be timezone-aware")
        delta = value - _EPOCH
        ticks = (delta.days * 86400 + delta.seconds) * 10_000_000 + delta.microseconds * 10
    elif isinstance(value, str):
        m = _TIME.fullmatch(value)
        if not m:
            raise ValueError(f"{name}: expected an RFC 3339 time such as 2024-05-01T08:00:00Z "
                             f"(at most 7 fraction digits), got {value!r}")
        zone = "+00:00" if m.group(3) in "Zz" else m.group(3)
        ticks = filetime(datetime.fromisoformat(m.group(1).replace("t", "T") + zone), name)
        ticks += int((m.group(2) or "0").ljust(7, "0"))
    else:
        raise TypeError(f"{name}: expected a datetime, RFC 3339 text or FILETIME int")
    if not 0 <= ticks <= 0xFFFFFFFFFFFFFFFF:
        raise ValueError(f"{name}: {value!r} is outside the FILETIME range (from 1601)")
    return ticks


class Filters:
    """The filters of one `Parser`, checked at construction; `apply` sets them on an
    `evtx_options` and keeps the arrays it points to alive as long as this object."""

    def __init__(self, event_ids=None, levels=None, providers=None, channels=None,
                 since=None, until=None):
        self.event_ids = ranges(event_ids, "event_ids")
        self.levels = ranges(levels, "levels")
        self.providers = names(providers, "providers")
        self.channels = names(channels, "channels")
        self.since = filetime(since, "since")
        self.until = filetime(until, "until")
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise ValueError("since must be earlier than until")
        self._arrays = (
            self._ranges(self.event_ids), self._ranges(self.levels),
            (ctypes.c_char_p * len(self.providers))(*self.providers),
            (ctypes.c_char_p * len(self.channels))(*self.channels),
        )

    @staticmethod
    def _ranges(items):
        return (_ffi.ValueRange * len(items))(*(_ffi.ValueRange(a, b) for a, b in items))

    def __bool__(self) -> bool:
        return bool(self.event_ids or self.levels or self.providers or self.channels
                    or self.since is not None or self.until is not None)

    def apply(self, o: _ffi.Options) -> None:
        event_ids, levels, providers, channels = self._arrays
        o.event_ids, o.event_ids_count = event_ids, len(self.event_ids)
        o.levels, o.levels_count = levels, len(self.levels)
        o.providers, o.providers_count = providers, len(self.providers)
        o.channels, o.channels_count = channels, len(self.channels)
        o.since, o.since_set = self.since or 0, int(self.since is not None)
        o.until, o.until_set = self.until or 0, int(self.until is not None)
