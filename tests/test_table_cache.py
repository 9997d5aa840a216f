"""The device-table cache of the GPU engines: byte budget, least recently used dropped first."""

import numpy as np

from hebatch.backend import cache_stats
from hebatch.backend.cache import TableCache


def test_budget_drops_least_recently_used():
    cache = TableCache()
    cache.budget_override = 3000
    built = []

    def table(size):
        def build():
            built.append(size)
            return (np.zeros(size, dtype=np.uint8), {"same": np.zeros(8, dtype=np.uint8)}, 7)

        return build

    a = cache.get(0, "a", table(1000))
    cache.get(0, "b", table(992))
    assert cache.get(0, "a", table(1)) is a and built == [1000, 992]  # a hit, now the most recent
    cache.get(0, "c", table(992))  # 3000 bytes with a's 1008 and b's 1000: over the budget, b goes
    assert cache.keys(0) == ["a", "c"]
    assert cache.stats() == {0: {"entries": 2, "bytes": 2008, "budget_bytes": 3000}}
    cache.get(1, "a", table(5000))  # devices apart; an entry over the budget stays until the next one
    assert cache.keys(1) == ["a"] and cache.stats()[1]["bytes"] == 5008
    cache.get(1, "b", table(10))
    assert cache.keys(1) == ["b"]
    assert cache.lookup(0, "b") is None and cache.lookup(2, "a") is None


def test_shared_arrays_count_once_per_entry():
    cache = TableCache()
    shared = np.zeros(100, dtype=np.uint8)
    cache.get(0, "k", lambda: (shared, [shared, {"x": shared}], shared.view()))
    assert cache.stats()[0]["bytes"] == 200  # the array once, its view once


def test_cache_stats_shape():
    for stats in cache_stats().values():
        assert set(stats) == {"entries", "bytes", "budget_bytes"} and stats["budget_bytes"] > 0
