"""kernels/field256.cuh built for the CPU with the host C++ compiler (FIELD256_HOST_CHAINS: each asm carry
chain replaced by a C++ twin of the same arithmetic), so the code around the chains - the even/odd
accumulators of mont_mul, their shifts, the final sum, the conditional subtractions - runs as written,
against Python ints. tests/test_field256_model.py checks the asm text of the chains themselves."""

import ctypes
import random

import numpy as np
import pytest

from hebatch.backend.gpu.loader import kernel_dir
from hebatch.field import BLS12_377_FR, BLS12_381_FR, BN254_FR

from .host_kernels import compiler, host_library

FIELDS = [BN254_FR, BLS12_381_FR, BLS12_377_FR]
STRUCTS = ["BN254Fr", "BLS12_381Fr", "BLS12_377Fr"]

SOURCE = r"""
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
#include "field256.cuh"
template <class F>
static void ops(const Fe* a, const Fe* b, Fe* out, long long count) {
    for (long long i = 0; i < count; ++i) {
        out[i] = mont_mul<F>(a[i], b[i]);
        out[count + i] = fadd<F>(a[i], b[i]);
        out[2 * count + i] = fsub<F>(a[i], b[i]);
        out[3 * count + i] = fsub_unreduced<F>(a[i], b[i]);
        out[4 * count + i] = mont_mul<F>(b[i], fsub_unreduced<F>(a[i], b[i]));  // the DIF butterfly's product
    }
}
extern "C" void host_field_ops(int field, const Fe* a, const Fe* b, Fe* out, long long count) {
    if (field == 0) ops<BN254Fr>(a, b, out, count);
    if (field == 1) ops<BLS12_381Fr>(a, b, out, count);
    if (field == 2) ops<BLS12_377Fr>(a, b, out, count);
}
"""

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C++ compiler")


@pytest.fixture(scope="module")
def lib():
    return host_library(SOURCE, headers=("field256.cuh",), defines=("FIELD256_HOST_CHAINS",))


def limbs(values):
    out = np.zeros((len(values), 4), dtype=np.uint64)
    for i, v in enumerate(values):
        for k in range(4):
            out[i, k] = (v >> (64 * k)) & ((1 << 64) - 1)
    return out


def ints(arr):
    return [sum(int(arr[i, k]) << (64 * k) for k in range(4)) for i in range(arr.shape[0])]


def call_host(fn, index, a, b, outputs):
    """fn(field index, a, b, out, count) on the limbs of the ints a and b; its `outputs` results per pair, as
    lists of ints."""
    A, B = limbs(a), limbs(b)
    out = np.zeros((outputs * len(a), 4), dtype=np.uint64)
    fn(
        ctypes.c_int(index),
        A.ctypes.data_as(ctypes.c_void_p),
        B.ctypes.data_as(ctypes.c_void_p),
        out.ctypes.data_as(ctypes.c_void_p),
        ctypes.c_longlong(len(a)),
    )
    n = len(a)
    got = ints(out)
    return [got[k * n : (k + 1) * n] for k in range(outputs)]


def run_ops(lib, index, a, b):
    return call_host(lib.host_field_ops, index, a, b, 5)


@pytest.mark.parametrize("index", range(3), ids=STRUCTS)
def test_host_field_ops_match_python_ints(lib, index):
    field = FIELDS[index]
    p, r_inv = field.p, pow(field.R, -1, field.p)
    rng = random.Random()
    edge = [
        0,
        1,
        2,
        p - 1,
        p - 2,
        (p - 1) // 2,
        (p + 1) // 2,
        2**32 - 1,
        2**32,
        2**64 - 1,
        2**64,
        2**192,
        p - 2**64,
        p - 2**32,
    ]
    pairs = [(x, y) for x in edge for y in edge] + [(rng.randrange(p), rng.randrange(p)) for _ in range(5000)]
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    prod, total, diff, lazy_diff, dif_prod = run_ops(lib, index, a, b)
    for i, (x, y) in enumerate(pairs):
        assert prod[i] == x * y * r_inv % p, (x, y)
        assert total[i] == (x + y) % p, (x, y)
        assert diff[i] == (x - y) % p, (x, y)
        assert lazy_diff[i] == x - y + p, (x, y)
        assert dif_prod[i] == (x - y) * y * r_inv % p, (x, y)
    # mont_mul's second factor may be any 256-bit value
    wide = [2**256 - 1, 2**256 - 2**32, 2**255, p, 2 * p - 1] + [rng.randrange(2**256) for _ in range(2000)]
    a = edge[:6] * len(wide) + [rng.randrange(p) for _ in wide]
    b = [w for w in wide for _ in range(6)] + wide
    prod = run_ops(lib, index, a, b)[0]
    for x, y, got in zip(a, b, prod):
        assert got == x * y * r_inv % p, (x, y)


# -- the FP64-pipe product of benchmarks/field256_throughput.cu ------------------------------------------

FP64_HEADER = kernel_dir().parent / "benchmarks" / "field256_fp64.cuh"
FP64_SOURCE = r"""
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
#include "field256.cuh"
"""


@pytest.fixture(scope="module")
def lib_fp64():
    if not FP64_HEADER.exists():
        pytest.skip("benchmarks/ is not beside kernels/ (an installed wheel)")
    body = FP64_HEADER.read_text().replace('#include "field256.cuh"', "")
    source = (
        FP64_SOURCE
        + body
        + r"""
template <class F>
static void products(const Fe* a, const Fe* b, Fe* out, long long count) {
    for (long long i = 0; i < count; ++i) out[i] = mont_mul_fp64<F>(a[i], b[i]);
}
extern "C" void host_fp64_products(int field, const Fe* a, const Fe* b, Fe* out, long long count) {
    if (field == 0) products<BN254Fr>(a, b, out, count);
    if (field == 1) products<BLS12_381Fr>(a, b, out, count);
    if (field == 2) products<BLS12_377Fr>(a, b, out, count);
}
"""
    )
    return host_library(source, headers=("field256.cuh",), defines=("FIELD256_HOST_CHAINS",))


@pytest.mark.parametrize("index", range(3), ids=STRUCTS)
def test_fp64_probe_product_matches_python_ints(lib_fp64, index):
    """The probe's product is exact for a < p and any b < 2^256, as mont_mul (its digit products rely on
    rounding toward zero, which the host build takes from an exact integer model of the FMA)."""
    field = FIELDS[index]
    p, r_inv = field.p, pow(field.R, -1, field.p)
    rng = random.Random()
    a = [0, 1, p - 1, 2**52 - 1, 2**52, 2**104 - 1, p - 2**52] + [rng.randrange(p) for _ in range(3000)]
    b = [2**256 - 1, p - 1, 2**255, 2 * p - 1, 2**208 - 1, 1, 0] + [rng.randrange(2**256) for _ in range(3000)]
    (products,) = call_host(lib_fp64.host_fp64_products, index, a, b, 1)
    for x, y, got in zip(a, b, products):
        assert got == x * y * r_inv % p, (x, y)
