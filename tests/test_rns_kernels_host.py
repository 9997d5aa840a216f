"""kernels/rns.cu and CupyRnsOps's launch code, run on the CPU: the kernel source is built with the
system C++ compiler (tests/host_kernels.py) and CupyRnsOps drives it with NumPy arrays. Every result
is checked against exact Python-int oracles, so a wrong kernel or launch argument fails here,
without a GPU."""

import numpy as np
import pytest

from . import host_kernels, rns_checks

pytestmark = pytest.mark.skipif(host_kernels.compiler() is None, reason="needs a C++ compiler (g++ or clang++)")


@pytest.fixture(scope="module")
def ops():
    from hebatch.backend.gpu.rns import CupyRnsOps

    module = host_kernels.HostModule()
    return CupyRnsOps(xp=np, loader=lambda: module)


@pytest.fixture(scope="module")
def cpu():
    from hebatch.backend import get

    return get("cpu").rns


def to_host(x):
    return np.asarray(x)


@pytest.mark.parametrize("lead, limbs, n", [((), 1, 64), ((3,), 3, 128), ((2, 2), 5, 32)])
def test_elementwise(ops, cpu, lead, limbs, n):
    rng = np.random.default_rng()
    rns_checks.check_elementwise(ops, rng, lead, n, rns_checks.moduli_for(n, limbs), to_host, reference=cpu)


@pytest.mark.parametrize("lead, limbs, n", [((), 1, 64), ((3,), 4, 128)])
def test_lifts(ops, cpu, lead, limbs, n):
    rns_checks.check_lifts(
        ops, np.random.default_rng(), lead, n, rns_checks.moduli_for(n, limbs), to_host, reference=cpu
    )


@pytest.mark.parametrize("src_limbs, dst_limbs", [(1, 2), (3, 4), (8, 9), (20, 3), (5, 8), (6, 17)])
def test_base_convert(ops, cpu, src_limbs, dst_limbs):
    n = 64
    both = rns_checks.moduli_for(n, src_limbs + dst_limbs)
    src, dst = both[:src_limbs], both[src_limbs:]
    rns_checks.check_base_convert(ops, np.random.default_rng(), (2,), n, src, dst, to_host, reference=cpu)


def test_base_convert_sums_beyond_128_bits(ops):
    # 64 sources of 62 bits: the exact sums overflow 128 bits, so the carry word is exercised
    n = 64
    both = rns_checks.moduli_for(n, 66, bits=(62,))
    rns_checks.check_base_convert(ops, np.random.default_rng(), (2,), n, both[:64], both[64:], to_host)


@pytest.mark.parametrize("limbs, digit_limbs", [(4, 2), (5, 2), (7, 3), (3, 3), (6, 1), (9, 4), (11, 5)])
def test_digit_convert(ops, cpu, limbs, digit_limbs):
    n = 64
    q = rns_checks.moduli_for(n, limbs + 1)
    dst = q[:limbs] + q[limbs:]  # q and a special prime, as key switching takes them
    rns_checks.check_digit_convert(ops, np.random.default_rng(), (3,), n, q[:limbs], dst, digit_limbs, to_host, cpu)


def test_digit_convert_refuses_bad_arguments(ops, cpu):
    q = rns_checks.moduli_for(64, 4)
    x = np.zeros((3, 64), dtype=np.uint64)
    for backend in (ops, cpu):
        for bad in (0, 4, 1.5, True):
            with pytest.raises(ValueError, match="digit_limbs must be an int from 1 to 3"):
                backend.digit_convert(x, q[:3], q, bad)
        with pytest.raises(ValueError, match="x has 3 limbs"):
            backend.digit_convert(x, q[:2], q, 1)


def test_inner_product(ops):
    n = 64
    rng = np.random.default_rng()
    rns_checks.check_inner_product(ops, rng, (2,), 3, n, rns_checks.moduli_for(n, 3), to_host)
    # rows ordered limb first over batches of several items, for every part count
    for lead, parts in (((5,), 2), ((3, 3), 1), ((3,), 3), ((1,), 2)):
        rns_checks.check_inner_product(ops, rng, lead, 4, n, rns_checks.moduli_for(n, 2), to_host, parts=parts)
    # 20 digits of 62-bit values near q: the sums overflow 128 bits
    rns_checks.check_inner_product(ops, rng, (), 20, n, rns_checks.moduli_for(n, 2, bits=(62,)), to_host, parts=4)


@pytest.mark.parametrize("n", [4, 64, 256])
def test_automorphism(ops, cpu, n):
    rns_checks.check_automorphism(
        ops, np.random.default_rng(), (2,), n, rns_checks.moduli_for(n, 3), to_host, reference=cpu
    )


def test_random(ops):
    rns_checks.check_random(ops, to_host, n=1024)


def test_bad_arguments(ops):
    q = rns_checks.moduli_for(16, 2)
    a = np.zeros((2, 16), dtype=np.uint64)
    with pytest.raises(TypeError, match="dtype"):
        ops.add(a.astype(np.int64), a, q)
    with pytest.raises(ValueError, match="limb"):
        ops.neg(np.zeros((3, 16), dtype=np.uint64), q)
    with pytest.raises(ValueError, match="prime"):
        ops.add(a, a, (q[0], 15))
    with pytest.raises(ValueError, match="galois_elt"):
        ops.automorphism(a, 4, q, ntt_form=False)
    with pytest.raises(ValueError, match="src"):
        ops.base_convert(a, q[:1], q)
    many = rns_checks.moduli_for(16, 67)  # the fused floor and Shenoy-Kumaresan take at most 64 sources, as each step
    wide = np.zeros((1, 65, 16), dtype=np.uint64)
    with pytest.raises(ValueError, match="at most 64 source moduli"):
        ops.behz_scale_down(wide, np.zeros((1, 2, 16), dtype=np.uint64), 17, many[:65], many[65:66], many[66])


def test_bfv_on_host_kernels_equals_cpu(ops):
    """The whole BFV scheme through CupyRnsOps's launch code and kernels (host build): decryptions
    right and every ciphertext bit equal to the NumPy backend's, with keys from either backend."""
    from hebatch import bfv

    params = bfv.Params.preset("n4096")
    cpu_ctx = bfv.Context(params, backend="cpu")
    ctx = bfv.Context(params, backend="cpu")
    ctx.ops = ops  # the GPU implementation, on NumPy arrays
    rng = np.random.default_rng()
    for keys in (cpu_ctx.keygen(rotations=[1]), ctx.keygen(rotations=[1])):
        rns_checks.check_bfv(ctx, cpu_ctx, keys, to_host, rng)


@pytest.mark.parametrize("lead, limbs, n", [((), 1, 64), ((2,), 3, 32), ((2, 3), 2, 16)])
def test_fused_steps(ops, cpu, lead, limbs, n):
    rns_checks.check_fused(ops, cpu, np.random.default_rng(), lead, n, limbs, to_host)


class _FakeCuda:
    """The parts of cupy.cuda that CupyRnsOps uses, counting the stream synchronisations."""

    def __init__(self):
        self.syncs = 0
        outer = self

        class Runtime:
            @staticmethod
            def getDevice():
                return 0

        class Stream:
            def synchronize(self):
                outer.syncs += 1

        self.runtime = Runtime()
        self.get_current_stream = Stream


def test_device_code_paths_with_a_cupy_like_module(cpu):
    """With an array module that has a `cuda` attribute (as CuPy), tables are uploaded and waited for
    once, then reused without waiting; results stay exact."""
    import types

    from hebatch.backend.gpu.rns import CupyRnsOps

    fake = types.ModuleType("fakecupy")
    fake.__dict__.update(
        {
            k: getattr(np, k)
            for k in ("ndarray", "asarray", "empty", "ascontiguousarray", "broadcast_to", "stack", "uint64")
        }
    )
    fake.cuda = _FakeCuda()
    module = host_kernels.HostModule()
    ops = CupyRnsOps(xp=fake, loader=lambda: module)
    rng = np.random.default_rng()
    n = 64
    q = rns_checks.moduli_for(n, 3)
    a, b = rns_checks.residues(rng, (2,), q, n), rns_checks.residues(rng, (2,), q, n)
    first = ops.mul_scalar(ops.mul(a, b, q), [5, 7, 11], q)
    syncs = fake.cuda.syncs
    assert syncs >= 1
    again = ops.mul_scalar(ops.mul(a, b, q), [5, 7, 11], q)
    assert fake.cuda.syncs == syncs, "a second call with the same shapes must not wait for the device"
    want = cpu.mul_scalar(cpu.mul(a, b, q), [5, 7, 11], q)
    assert (first == want).all() and (again == want).all()
    rns_checks.check_base_convert(ops, rng, (2,), n, q[:2], q[2:], to_host, reference=cpu)


def test_threads_taking_several_coefficients(cpu, monkeypatch):
    """Large launches give each thread several coefficients of its row: forced here on small data
    (a fresh CupyRnsOps, so no launch plan of the other tests is reused)."""
    from hebatch.backend.gpu import rns as gpu_rns

    monkeypatch.setattr(gpu_rns, "LARGE_LAUNCH", 1)
    module = host_kernels.HostModule()
    ops = gpu_rns.CupyRnsOps(xp=np, loader=lambda: module)
    assert gpu_rns.CupyRnsOps._geometry(6, 512, 132)[0][0] == 512 // (64 * gpu_rns.COLS_PER_THREAD)
    rng = np.random.default_rng()
    moduli = rns_checks.moduli_for(256, 3)
    rns_checks.check_elementwise(ops, rng, (2,), 256, moduli, to_host, reference=cpu)
    rns_checks.check_lifts(ops, rng, (2,), 256, moduli, to_host, reference=cpu)
    both = rns_checks.moduli_for(256, 5)
    rns_checks.check_base_convert(ops, rng, (2,), 256, both[:3], both[3:], to_host, reference=cpu)


def test_behz_extend_out_must_be_written_in_place(ops):
    n, limbs = 32, 3
    q, bsk, m_tilde, _ = rns_checks.behz_bases(n, limbs)
    x = rns_checks.residues(np.random.default_rng(), (2,), q, n)
    with pytest.raises(ValueError, match="out must have shape"):
        ops.behz_extend(x, q, bsk, m_tilde, out=np.empty((2, len(bsk) + 1, n), dtype=np.uint64))
    strided = np.empty((2, len(bsk), 2 * n), dtype=np.uint64)[..., ::2]  # its rows are not contiguous
    with pytest.raises(ValueError, match="contiguously"):
        ops.behz_extend(x, q, bsk, m_tilde, out=strided)


def test_automorphism_add_acc_must_be_written_in_place(ops):
    n = 32
    q = rns_checks.moduli_for(n, 2)
    x = rns_checks.residues(np.random.default_rng(), (2,), q, n)
    with pytest.raises(ValueError, match="acc must have shape"):
        ops.automorphism_add(x, 3, q, np.zeros((3, len(q), n), dtype=np.uint64))
    strided = np.zeros((2, len(q), 2 * n), dtype=np.uint64)[..., ::2]  # its rows are not contiguous
    with pytest.raises(ValueError, match="acc must hold each item's rows contiguously"):
        ops.automorphism_add(x, 3, q, strided)
