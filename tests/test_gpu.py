"""GPU backend: bit-for-bit equal to the CPU backend, every size class, kind and algorithm.

The exact-oracle tests of test_ntt.py also run on the GPU (their `xp` fixture); these add the
GPU-only cases: GPU == CPU on random batches, large single transforms, streams, in-place and memory.
"""

import numpy as np
import pytest

import hebatch as hb
from hebatch.field import default_root
from hebatch.ntt import ntt_spread

from .oracle import random_residues

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")

Q60 = hb.ntt_primes(60, 2**17, 3)
Q50 = hb.ntt_primes(50, 2**17, 1)[0]
Q30 = hb.ntt_primes(30, 2**17, 1)[0]
KINDS = {
    "mod64": (Q60[:2], np.uint64),
    "goldilocks": ([hb.GOLDILOCKS], np.uint64),
    "mod32": ([hb.BABYBEAR, Q30], np.uint32),
    "mod32-in-uint64": ([hb.BABYBEAR], np.uint64),
}


def batch(moduli, rows, n, dtype, rng=None):
    rng = rng or np.random.default_rng()
    return np.stack([random_residues(rng, q, (rows, n), dtype) for q in moduli], axis=1)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("algorithm", ["4step", "radix2"])
def test_gpu_equals_cpu_all_sizes(kind, algorithm):
    moduli, dtype = KINDS[kind]
    for log_n in range(1, 18):
        n = 1 << log_n
        rows = max(1, min(64, 2**16 // n))
        x = batch(moduli, rows, n, dtype)
        xg = cp.asarray(x)
        for negacyclic in (False, True):
            for inverse in (False, True):
                got = hb.ntt(xg, moduli, negacyclic=negacyclic, inverse=inverse, algorithm=algorithm)
                want = hb.ntt(x, moduli, negacyclic=negacyclic, inverse=inverse, algorithm="radix2")
                assert got.dtype == x.dtype and got.shape == x.shape
                assert (got.get() == want).all(), (kind, algorithm, log_n, negacyclic, inverse)


@pytest.mark.parametrize("log_n", [18, 21, 23])
def test_gpu_equals_cpu_large(log_n):
    n = 1 << log_n
    q = hb.ntt_primes(61, n, 1)[0]
    negacyclic = log_n % 2 == 0
    for moduli, dtype in (([q], np.uint64), ([hb.GOLDILOCKS], np.uint64), ([hb.BABYBEAR], np.uint32)):
        x = batch(moduli, 1, n, dtype)[:, 0]
        want = hb.ntt(x, moduli[0], negacyclic=negacyclic, algorithm="radix2")
        for algorithm in ("4step", "radix2"):
            got = hb.ntt(cp.asarray(x), moduli[0], negacyclic=negacyclic, algorithm=algorithm).get()
            assert (got == want).all(), (algorithm, moduli)
            back = hb.intt(cp.asarray(got), moduli[0], negacyclic=negacyclic, algorithm=algorithm).get()
            assert (back == x).all(), (algorithm, moduli)


@pytest.mark.parametrize("log_n", [26, 27, 28])
def test_gpu_huge_single_transform(log_n):
    """Up to 2^28 points (2 GiB): a sparse random input checked at random outputs against the
    definition, and a dense random input through an exact round trip."""
    n = 1 << log_n
    rng = np.random.default_rng()
    for q in (hb.ntt_primes(60, 2**28, 1)[0], hb.GOLDILOCKS):
        psi = default_root(q, n, True)
        where = rng.choice(n, size=64, replace=False)
        values = random_residues(rng, q, 64)
        x = cp.zeros(n, dtype=cp.uint64)
        x[cp.asarray(where)] = cp.asarray(values)
        y = hb.ntt(x, q, negacyclic=True)
        for k in rng.integers(0, n, size=16):
            point = pow(psi, 2 * int(k) + 1, q)
            expected = sum(int(v) * pow(point, int(j), q) for j, v in zip(where, values)) % q
            assert int(y[int(k)]) == expected, (log_n, q, int(k))
        dense = cp.asarray(random_residues(rng, q, n))
        assert bool((hb.intt(hb.ntt(dense, q, negacyclic=True), q, negacyclic=True) == dense).all())
        del x, y, dense


def test_gpu_rns_mixed_kinds_and_polymul():
    n = 2**12
    moduli = Q60 + [hb.GOLDILOCKS, Q50]
    x = batch(moduli, 5, n, np.uint64)
    z = batch(moduli, 5, n, np.uint64)
    for negacyclic in (False, True):
        got = hb.ntt(cp.asarray(x), moduli, negacyclic=negacyclic).get()
        assert (got == hb.ntt(x, moduli, negacyclic=negacyclic)).all()
        prod = hb.polymul(cp.asarray(x), cp.asarray(z), moduli, negacyclic=negacyclic).get()
        assert (prod == hb.polymul(x, z, moduli, negacyclic=negacyclic)).all()
    for log_n in (4, 12, 16, 17):
        a = batch(Q60[:1], 3, 1 << log_n, np.uint64)[:, 0]
        b = batch(Q60[:1], 1, 1 << log_n, np.uint64)[:, 0]
        got = hb.polymul(cp.asarray(a), cp.asarray(b), Q60[0]).get()
        assert (got == hb.polymul(a, b, Q60[0])).all()


@pytest.mark.parametrize("bits", [(59, 60, 60), (54, 55), (40, 60)])  # unreduced first pass; (40, 60): the copy
def test_gpu_ntt_spread_equals_cpu(bits):
    rng = np.random.default_rng()
    moduli = [hb.ntt_primes(b, 2**17, 3)[k] for k, b in enumerate(bits)]
    for log_n in (6, 12, 14, 16):
        n = 1 << log_n
        x = rng.integers(0, max(moduli), size=(2, 5, n), dtype=np.uint64)
        want = hb.ntt(x[..., None, :] % np.array(moduli, dtype=np.uint64)[:, None], moduli, negacyclic=True)
        got = ntt_spread(cp.asarray(x), moduli, negacyclic=True)
        assert got.shape == (2, 5, len(moduli), n)
        assert (got.get() == want).all(), log_n


def test_gpu_many_limbs_limb_by_limb_equal_cpu():
    """30 limbs of 2^15 (BFV n32768's q and B_sk): the inverse's tables (n twiddles and n post factors a limb) exceed
    half the L2 of an H100, so its rows go limb by limb (recipes.limb_major_rows); forward and inverse equal the CPU's,
    and so does the spread transform of key-switching digits over the same limbs."""
    n, limbs = 1 << 15, 30
    moduli = hb.ntt_primes(60, n, limbs)
    x = batch(moduli, 3, n, np.uint64)
    want = hb.ntt(x, moduli, negacyclic=True)
    got = hb.ntt(cp.asarray(x), moduli, negacyclic=True)
    assert (got.get() == want).all()
    assert (hb.intt(got, moduli, negacyclic=True).get() == x).all()
    rows = np.random.default_rng().integers(0, min(moduli), size=(4, n), dtype=np.uint64)
    spread = ntt_spread(cp.asarray(rows), moduli, negacyclic=True)
    assert (spread.get() == hb.ntt(np.repeat(rows[:, None, :], limbs, axis=1), moduli, negacyclic=True)).all()


def test_gpu_streams_inplace_and_untouched_input():
    n = 2**16
    x = batch(Q60[:1], 8, n, np.uint64)[:, 0]
    want = hb.ntt(x, Q60[0])
    xg = cp.asarray(x)
    keep = xg.copy()
    stream = cp.cuda.Stream(non_blocking=True)
    y = hb.ntt(xg, Q60[0], stream=stream, check=False)
    stream.synchronize()
    assert (y.get() == want).all() and bool((xg == keep).all())
    same = hb.ntt(xg, Q60[0], inplace=True)
    assert same is xg and (xg.get() == want).all()
    with pytest.raises(TypeError, match="stream"):
        hb.ntt(x, Q60[0], stream=stream)


def test_gpu_validation_and_devices():
    x = cp.full(16, Q60[0], dtype=cp.uint64)
    with pytest.raises(ValueError, match="entries"):
        hb.ntt(x, Q60[0])
    with pytest.raises(TypeError, match="b must"):
        hb.polymul(cp.zeros(16, dtype=cp.uint64), np.zeros(16, dtype=np.uint64), Q60[0])


def test_gpu_extra_memory_at_most_one_copy():
    """Peak memory beyond input and output: one workspace copy (plus small tables).

    The call runs on a private memory pool, so the count is the transform's own: on the shared default
    pool, free_all_blocks releases only wholly free chunks, and free fragments of chunks that earlier
    tests left partly in use were counted as this call's (2^26 after the whole suite: 1092 MB against
    1090 MB, though the transform itself stays within output + workspace + tables)."""
    n = 2**26
    q = hb.ntt_primes(60, n, 1)[0]
    x = cp.asarray(random_residues(np.random.default_rng(), q, n))
    hb.ntt(x, q, check=False)  # tables and kernels built (kept by their caches on the default pool)
    cp.cuda.Device().synchronize()
    pool = cp.cuda.MemoryPool()
    with cp.cuda.using_allocator(pool.malloc):
        y = hb.ntt(x, q, check=False)
        cp.cuda.Device().synchronize()
    # every block the call took is still held by the pool (freed ones cached): total is its peak or more
    peak = pool.total_bytes()
    assert peak <= 2 * x.nbytes + 2**24, (peak, x.nbytes)
    del y
    pool.free_all_blocks()


def test_gpu_twiddle_grid_matches_cpu():
    from hebatch.backend import get

    rng = np.random.default_rng()
    for q, log_order in ((hb.ntt_primes(60, 2**20, 1)[0], 21), (hb.GOLDILOCKS, 29)):
        root = hb.field.root_of_unity(q, 1 << log_order)
        x = random_residues(rng, q, (48, 80))
        for args in ((5, 3, 1, 1), (2**40 + 7, 11, 2, 3), (0, 1, 1, 2)):
            want = get("cpu").ntt.twiddle_grid_mul(x, q, root, *args)
            xg = cp.asarray(x)
            got = get(xg).ntt.twiddle_grid_mul(xg, q, root, *args)
            assert (got.get() == want).all()
            strided = get(xg).ntt.twiddle_grid_mul(cp.asarray(x.T.copy()).T, q, root, *args)
            assert (strided.get() == want).all()
