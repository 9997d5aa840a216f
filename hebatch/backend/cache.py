"""The one cache of device tables (twiddles, modulus constants, bound launch programs) of every GPU
engine: per device, least recently used entries dropped first once the entries' bytes pass a budget
of BUDGET_FRACTION of the device's memory (HEBATCH_TABLE_CACHE_FRACTION overrides it).

An entry's bytes are those of the device arrays it holds (arrays shared by two entries, such as the
tables a bound program refers to, count in both: the total is an upper bound). An entry larger than
the budget is still kept until the next one arrives. Dropping an entry only drops the cache's
reference: work already queued, and recorded CUDA graphs (which keep their own references), are safe.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import OrderedDict

from ..device import device_properties

BUDGET_FRACTION = 0.125  # of the device's memory
DEFAULT_BUDGET_BYTES = 2 << 30  # when the device's memory cannot be read (stand-in array modules in tests)


def _nbytes(value, seen: set) -> int:
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v, seen) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v, seen) for v in value.values())
    size = getattr(value, "nbytes", None)
    if isinstance(size, int) and hasattr(value, "shape") and id(value) not in seen:
        seen.add(id(value))
        return size
    return 0


def _device_budget(device: int) -> int:
    fraction = float(os.environ.get("HEBATCH_TABLE_CACHE_FRACTION", BUDGET_FRACTION))
    try:
        total = device_properties(device)["memory_bytes"]
    except Exception:  # no CuPy, no driver, or a stand-in module without device properties
        return DEFAULT_BUDGET_BYTES
    return int(total * fraction)


class TableCache:
    """Device tables under (device, key); `get` builds a missing entry outside the lock."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict[int, OrderedDict] = {}
        self._bytes: dict[int, int] = {}
        self._budgets: dict[int, int] = {}
        self.budget_override: int | None = None  # bytes per device, for tests

    def budget(self, device: int) -> int:
        if self.budget_override is not None:
            return self.budget_override
        if device not in self._budgets:
            self._budgets[device] = _device_budget(device)
        return self._budgets[device]

    def lookup(self, device: int, key):
        """The entry under key (marked as just used), or None. No lock: on the hot path of every launch;
        the OrderedDict's own operations are atomic, and an entry dropped in between reads as a miss."""
        entries = self._entries.get(device)
        if entries is None:
            return None
        try:
            value = entries[key][0]
            entries.move_to_end(key)
        except KeyError:
            return None
        return value

    def get(self, device: int, key, build):
        value = self.lookup(device, key)
        if value is not None:
            return value
        value = build()
        size = _nbytes(value, set())
        with self._lock:
            entries = self._entries.setdefault(device, OrderedDict())
            if key in entries:  # built by another thread meanwhile: keep the first
                entries.move_to_end(key)
                return entries[key][0]
            entries[key] = (value, size)
            held = self._bytes.get(device, 0) + size
            budget = self.budget(device)
            while held > budget and len(entries) > 1:
                _, (_, dropped) = entries.popitem(last=False)
                held -= dropped
            self._bytes[device] = held
        return value

    def keys(self, device: int) -> list:
        with self._lock:
            return list(self._entries.get(device, ()))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes.clear()

    def stats(self) -> dict:
        with self._lock:
            return {
                device: {
                    "entries": len(entries),
                    "bytes": self._bytes.get(device, 0),
                    "budget_bytes": self.budget(device),
                }
                for device, entries in self._entries.items()
            }


TABLES = TableCache()


def instance_tokens():
    """Serial numbers that keep the keys of two engine instances apart (an id() can be reused)."""
    return itertools.count()
