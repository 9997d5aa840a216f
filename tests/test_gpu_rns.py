"""CupyRnsOps (kernels/rns.cu) on a GPU: every primitive equals the exact Python-int oracle and the
NumPy implementation bit for bit, on fresh random data with edge values, for several limb counts,
sizes 2^12..2^16 and moduli of 30 to 62 bits; sampling passes distribution checks. Skipped without
a GPU (tests/test_rns_kernels_host.py runs the same kernels' host build on any machine)."""

import numpy as np
import pytest

import hebatch as hb

from . import rns_checks

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def ops():
    from hebatch.backend import get

    return get("gpu").rns


@pytest.fixture(scope="module")
def cpu():
    from hebatch.backend import get

    return get("cpu").rns


def to_host(x):
    assert isinstance(x, cp.ndarray), type(x)
    return x.get()


SIZES = [(12, (3,), 8), (13, (2,), 5), (14, (2,), 4), (15, (), 3), (16, (), 3)]


def test_factory_returns_cupy_ops(ops):
    from hebatch.backend.gpu.rns import CupyRnsOps

    assert isinstance(ops, CupyRnsOps) and ops.xp is cp


@pytest.mark.parametrize("log_n, lead, limbs", SIZES)
def test_elementwise(ops, cpu, log_n, lead, limbs):
    n = 1 << log_n
    rns_checks.check_elementwise(
        ops, np.random.default_rng(), lead, n, rns_checks.moduli_for(n, limbs), to_host, reference=cpu
    )


@pytest.mark.parametrize("log_n, lead, limbs", SIZES)
def test_lifts(ops, cpu, log_n, lead, limbs):
    n = 1 << log_n
    rns_checks.check_lifts(
        ops, np.random.default_rng(), lead, n, rns_checks.moduli_for(n, limbs), to_host, reference=cpu
    )


@pytest.mark.parametrize("log_n", [12, 14, 16])
@pytest.mark.parametrize(
    "src_limbs, dst_limbs, bits", [(1, 2, (61,)), (8, 9, (61, 55)), (9, 8, (60, 40)), (20, 3, (61, 30)), (64, 2, (62,))]
)
def test_base_convert(ops, cpu, log_n, src_limbs, dst_limbs, bits):
    n = 1 << log_n
    while src_limbs * n > 2**20 and n > 1024:  # keep the Python-int oracle quick
        n //= 2
    both = rns_checks.moduli_for(n, src_limbs + dst_limbs, bits=bits)
    lead = (2,) if log_n < 16 else ()
    rns_checks.check_base_convert(
        ops, np.random.default_rng(), lead, n, both[:src_limbs], both[src_limbs:], to_host, reference=cpu
    )


@pytest.mark.parametrize(
    "log_n, digits, limbs, bits, lead, parts",
    [
        (12, 3, 4, (61, 55), (2,), 2),
        (14, 8, 2, (61,), (2,), 2),
        (16, 2, 2, (50,), (2,), 2),
        (12, 20, 2, (62,), (2,), 2),
        # rows ordered limb first over batches of several items, for every part count
        (14, 7, 8, (55,), (9,), 2),
        (12, 4, 3, (61,), (3, 3), 3),
        (12, 4, 3, (61,), (11,), 1),
    ],
)
def test_inner_product(ops, log_n, digits, limbs, bits, lead, parts):
    n = 1 << log_n
    rns_checks.check_inner_product(
        ops, np.random.default_rng(), lead, digits, n, rns_checks.moduli_for(n, limbs, bits=bits), to_host, parts=parts
    )


@pytest.mark.parametrize("log_n", [12, 14, 16])
def test_automorphism(ops, cpu, log_n):
    n = 1 << log_n
    rns_checks.check_automorphism(
        ops, np.random.default_rng(), (2,), n, rns_checks.moduli_for(n, 3), to_host, reference=cpu
    )


def test_random(ops):
    rns_checks.check_random(ops, to_host, n=1 << 14)


def test_on_a_side_stream(ops, cpu):
    """Results are right when everything runs on a non-default stream (nothing assumes stream 0)."""
    n = 1 << 14
    moduli = rns_checks.moduli_for(n, 4)
    rng = np.random.default_rng()
    a, b = rns_checks.residues(rng, (4,), moduli, n), rns_checks.residues(rng, (4,), moduli, n)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        da, db = cp.asarray(a), cp.asarray(b)
        prod = hb.intt(
            ops.mul(hb.ntt(da, moduli, negacyclic=True), hb.ntt(db, moduli, negacyclic=True), moduli),
            moduli,
            negacyclic=True,
        )
        conv = ops.base_convert(prod, moduli, moduli[:2])
    stream.synchronize()
    want = hb.intt(
        cpu.mul(hb.ntt(a, moduli, negacyclic=True), hb.ntt(b, moduli, negacyclic=True), moduli), moduli, negacyclic=True
    )
    assert (prod.get() == want).all()
    assert (conv.get() == cpu.base_convert(want, moduli, moduli[:2])).all()


@pytest.mark.parametrize("log_n, limbs, digit_limbs", [(12, 2, 2), (14, 7, 2), (15, 14, 3), (16, 29, 4)])
def test_digit_convert(ops, cpu, log_n, limbs, digit_limbs):
    n = 1 << log_n
    while limbs * n > 2**17 and n > 1024:  # keep the Python-int oracle quick
        n //= 2
    qp = rns_checks.moduli_for(n, limbs + 1, bits=(59, 58))
    lead = (2,) if limbs < 8 else ()
    rns_checks.check_digit_convert(ops, np.random.default_rng(), lead, n, qp[:limbs], qp, digit_limbs, to_host, cpu)


@pytest.mark.parametrize("preset, digit_limbs", [("n4096", 1), ("n16384", 1), ("n8192", 2), ("n16384", 3)])
def test_bfv_end_to_end(preset, digit_limbs):
    """Context(backend="gpu"): decryptions equal the plaintext computation and the CPU backend's, and
    every ciphertext equals the CPU backend's bit for bit, with keys from the CPU and from the GPU; key-switching
    digits of one limb and of several."""
    from hebatch import bfv

    params = bfv.Params.preset(preset, digit_limbs=digit_limbs)
    ctx = bfv.Context(params, backend="gpu")
    cpu_ctx = bfv.Context(params, backend="cpu")
    assert ctx.backend == "gpu" and ctx.xp is cp
    rng = np.random.default_rng()
    for keys in (cpu_ctx.keygen(rotations=[1]), ctx.keygen(rotations=[1])):
        rns_checks.check_bfv(ctx, cpu_ctx, keys, lambda a: a.get() if isinstance(a, cp.ndarray) else a, rng)


def test_bfv_largest_preset():
    """n65536 (29 limbs, t = 786433): a product of a public-key and a secret-key encryption, relinearized
    and rotated, decrypts to the slot-wise product, rotated; both encryptions and the decryptions (a 30 MB
    ciphertext, a 16 MB secret key) replay their graphs, once each of the first three calls and for both later
    decryptions; the other steps' operands exceed the replayer's 32 MiB, or their keys its 256 MiB, and run their
    launches directly."""
    from hebatch import bfv

    params = bfv.Params.preset("n65536")
    ctx = bfv.Context(params, backend="gpu")
    keys = ctx.keygen(rotations=[1], columns=False)
    rng = np.random.default_rng()
    v, w = (rng.integers(0, params.t, size=(params.n,), dtype=np.int64) for _ in range(2))
    for _ in range(3):  # the third call of each replays its graph
        a, b = ctx.encrypt(keys.public, ctx.encode(v)), ctx.encrypt_symmetric(keys.secret, ctx.encode(w))
        assert (cp.asnumpy(ctx.decode(ctx.decrypt(keys.secret, a))) == v).all()
    want = v * w % params.t
    prod = ctx.multiply(a, b, keys.relin)
    assert (cp.asnumpy(ctx.decode(ctx.decrypt(keys.secret, prod))) == want).all()
    got = cp.asnumpy(ctx.decode(ctx.decrypt(keys.secret, ctx.rotate(prod, 1, keys.galois))))
    half = params.n // 2
    assert (got == np.concatenate([np.roll(want[:half], -1), np.roll(want[half:], -1)])).all()
    assert ctx.graphs.replays == 5


@pytest.mark.parametrize("log_n, lead, limbs", [(12, (2,), 2), (14, (3,), 7), (15, (), 14)])
def test_fused_steps(ops, cpu, log_n, lead, limbs):
    rns_checks.check_fused(ops, cpu, np.random.default_rng(), lead, 1 << log_n, limbs, to_host)


@pytest.mark.parametrize("preset, digit_limbs", [("n4096", 1), ("n16384", 1), ("n32768", 1), ("n32768", 2)])
def test_bfv_graph_replay(preset, digit_limbs):
    """Context(graphs=True): multiply (with and without relinearization, squaring), relinearize,
    rotations and decryption replayed from CUDA graphs give ciphertexts identical to launching every kernel, on fresh
    inputs at every call, with a second relinearization key moving in; no recording falls back. n32768: the
    one-ciphertext graphs hold copies of its 110 MB keys (above the replayer's 32 MiB of inputs)."""
    import warnings

    from hebatch import bfv

    params = bfv.Params.preset(preset, digit_limbs=digit_limbs)
    ctx = bfv.Context(params, backend="gpu")
    plain = bfv.Context(params, backend="gpu", graphs=False)
    assert ctx.graphs is not None and plain.graphs is None
    keys, other = ctx.keygen(rotations=[1]), ctx.keygen(rotations=[1])
    rng = np.random.default_rng()

    def fresh(batch, k):
        return ctx.encrypt(k.public, ctx.encode(rng.integers(0, params.t, size=(batch, params.n), dtype=np.int64)))

    def same(x, y):
        assert (x.data.get() == y.data.get()).all()

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for batch in (1, 3):
            for k in (keys, keys, keys, other, keys):
                a, b = fresh(batch, k), fresh(batch, k)
                same(ctx.multiply(a, b, k.relin), plain.multiply(a, b, k.relin))
                same(ctx.multiply(a, a, k.relin), plain.multiply(a, a, k.relin))
                c3 = ctx.multiply(a, b)
                same(c3, plain.multiply(a, b))
                same(ctx.relinearize(c3, k.relin), plain.relinearize(c3, k.relin))
                same(ctx.rotate(a, 1, k.galois), plain.rotate(a, 1, k.galois))
                same(ctx.rotate_columns(a, k.galois), plain.rotate_columns(a, k.galois))
                same(ctx.decrypt(k.secret, a), plain.decrypt(k.secret, a))  # another secret moves in
            m = rng.integers(0, params.t, size=(batch, params.n), dtype=np.int64)
            ct = ctx.encrypt(keys.public, ctx.encode(m))
            for _ in range(3):
                ct = ctx.rotate(ct, 1, keys.galois)
            got = ctx.decode(ctx.decrypt(keys.secret, ct))
            half = params.n // 2
            want = np.concatenate([np.roll(m[:, :half], -3, axis=1), np.roll(m[:, half:], -3, axis=1)], axis=1)
            assert (cp.asnumpy(got) == want).all()
    assert ctx.graphs.replays >= 2 * 6 * 3
