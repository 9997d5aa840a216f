"""kernels/modarith.cuh built for the CPU, against Python integers. The Goldilocks butterfly keeps values
lazily anywhere below 2^64, so the edges (values at and above P, products near P) are checked directly;
random transform inputs almost never reach them. reduce_product and mul_tw_reduced, which end the kernels' twiddle
and general products, are checked for every reduction kind on word-wide inputs."""

import ctypes
import importlib.util
import itertools
import pathlib

import numpy as np
import pytest

from hebatch.arith import with_companions
from hebatch.backend.kernels import modconst_rows
from hebatch.field import BABYBEAR, ntt_primes

from .host_kernels import compiler, host_library

P = 2**64 - 2**32 + 1

SOURCE = r"""
#include "modarith.cuh"
// rounds butterflies per element, each round's outputs the next round's inputs; then reduce()
extern "C" void goldilocks_ct(const u64* x, const u64* y, const u64* w, u64* out_x, u64* out_y, u64* reduced,
                              long long count, int rounds) {
    const ModConst c = {};
    const Goldilocks g(c);
    for (long long i = 0; i < count; ++i) {
        u64 a = x[i], b = y[i];
        const Tw64 t = {w[i], 0};
        for (int r = 0; r < rounds; ++r) g.ct(a, b, t);
        out_x[i] = a;
        out_y[i] = b;
        reduced[i] = g.reduce(a);
    }
}
"""

pytestmark = pytest.mark.skipif(compiler() is None, reason="needs a C++ compiler")


def _run(x, y, w, rounds):
    lib = host_library(SOURCE, headers=("modarith.cuh",))
    x, y, w = (np.array(v, dtype=np.uint64) for v in (x, y, w))
    out_x, out_y, reduced = (np.empty_like(x) for _ in range(3))
    args = [ctypes.c_void_p(a.ctypes.data) for a in (x, y, w, out_x, out_y, reduced)]
    lib.goldilocks_ct(*args, ctypes.c_longlong(len(x)), ctypes.c_int(rounds))
    return out_x, out_y, reduced


def _edges(rng):
    fixed = [0, 1, 2, 2**32 - 1, 2**32, P - 2, P - 1, P, P + 1, 2**64 - 2, 2**64 - 1]
    return (
        fixed
        + [int(v) for v in rng.integers(0, 2**64, size=4, dtype=np.uint64)]
        + [P + int(v) for v in rng.integers(0, 2**32 - 1, size=4, dtype=np.uint64)]
    )


@pytest.mark.parametrize("rounds", [1, 2, 7])
def test_goldilocks_butterfly_on_lazy_values_matches_python_ints(rounds):
    rng = np.random.default_rng()
    edges = _edges(rng)
    twiddles = [0, 1, 2, P - 1, P - 2**32] + [int(v) for v in rng.integers(0, P, size=3, dtype=np.uint64)]
    cases = list(itertools.product(edges, edges, twiddles))
    x, y, w = (list(c) for c in zip(*cases))
    got_x, got_y, reduced = _run(x, y, w, rounds)
    for i, (a, b, t) in enumerate(cases):
        for _ in range(rounds):
            a, b = (a + t * b) % P, (a - t * b) % P
        assert int(got_x[i]) % P == a and int(got_y[i]) % P == b, (x[i], y[i], w[i])
        assert int(reduced[i]) == a, (x[i], y[i], w[i])


PRODUCT_SOURCE = r"""
#include "modarith.cuh"
// reduce_product of a twiddle product (x * w, Shoup companion wq) and of a general product (a * b), and
// mul_tw_reduced of the twiddle product, per element
template <class A>
void products(const ModConst& c, const u64* x, const u64* w, const u64* wq, const u64* a, const u64* b, u64* tw_out,
              u64* exact_out, u64* mul_out, long long count) {
    const A arith(c);
    for (long long i = 0; i < count; ++i) {
        const typename A::Tw t = {(typename A::T)w[i], (typename A::T)wq[i]};
        tw_out[i] = arith.reduce_product(arith.mul_tw((typename A::T)x[i], t));
        exact_out[i] = arith.mul_tw_reduced((typename A::T)x[i], t);
        mul_out[i] = arith.reduce_product(arith.mul((typename A::T)a[i], (typename A::T)b[i]));
    }
}
#define PRODUCTS(A)                                                                                             \
    extern "C" void products_##A(u64 q, u64 mu, u32 m, const u64* x, const u64* w, const u64* wq, const u64* a, \
                                 const u64* b, u64* tw_out, u64* exact_out, u64* mul_out, long long count) {    \
        const ModConst c = {q, mu, m, 0};                                                                        \
        products<A>(c, x, w, wq, a, b, tw_out, exact_out, mul_out, count);                                       \
    }
PRODUCTS(Mod60)
PRODUCTS(Mod64)
PRODUCTS(Mod32)
PRODUCTS(Goldilocks)
"""


@pytest.mark.parametrize(
    "arith, q",
    [
        ("Mod60", ntt_primes(60, 2**17, 1)[0]),  # Mod60 serves every modulus below 2^60, small ones too
        ("Mod60", ntt_primes(45, 2**17, 1)[0]),
        ("Mod60", ntt_primes(31, 2**17, 1)[0]),
        ("Mod64", ntt_primes(62, 2**17, 1)[0]),
        ("Mod32", BABYBEAR),
        ("Goldilocks", P),
    ],
)
def test_reduce_product_ends_every_product_below_q(arith, q):
    """reduce_product (the kernels' final reduction after a twiddle product or a general product) and
    mul_tw_reduced (a twiddle product with its reduction, where an inverse stores) give the exact residue, for
    inputs anywhere in the word (twiddle products) and reduced operands (general products), edges included."""
    rng = np.random.default_rng()
    bits = 32 if arith == "Mod32" else 64
    word_max = 2**bits - 1
    xs = [0, 1, q - 1, q, 2 * q - 1, word_max] + [int(v) for v in rng.integers(0, 2**64, size=60, dtype=np.uint64)]
    xs = [v & word_max for v in xs]
    ws = [0, 1, q - 1] + [int(v) for v in rng.integers(0, q, size=63, dtype=np.uint64)]
    ops = [q - 1, 0, 1] + [int(v) for v in rng.integers(0, q, size=63, dtype=np.uint64)]
    ops_b = [q - 1, q - 1, 1] + [int(v) for v in rng.integers(0, q, size=63, dtype=np.uint64)]
    companions = [0 if arith == "Goldilocks" else (w << bits) // q for w in ws]
    m = q.bit_length()
    mu = (1 << (2 * m + 1)) // q
    lib = host_library(PRODUCT_SOURCE, headers=("modarith.cuh",))
    arrays = [np.array(v, dtype=np.uint64) for v in (xs, ws, companions, ops, ops_b)]
    tw_out, exact_out, mul_out = (np.zeros(len(xs), dtype=np.uint64) for _ in range(3))
    getattr(lib, f"products_{arith}")(
        ctypes.c_uint64(q),
        ctypes.c_uint64(mu & (2**64 - 1)),
        ctypes.c_uint32(m),
        *(ctypes.c_void_p(a.ctypes.data) for a in (*arrays, tw_out, exact_out, mul_out)),
        ctypes.c_longlong(len(xs)),
    )
    for i in range(len(xs)):
        assert int(tw_out[i]) == xs[i] * ws[i] % q, (arith, q, xs[i], ws[i])
        assert int(exact_out[i]) == xs[i] * ws[i] % q, (arith, q, xs[i], ws[i])
        assert int(mul_out[i]) == ops[i] * ops_b[i] % q, (arith, q, ops[i], ops_b[i])


BUTTERFLY_BENCHMARK = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "butterfly_throughput"
BUTTERFLY_ROUNDS = r"""
#define ROUNDS(A)                                                                                                   \
    extern "C" void rounds_##A(A::T* x, const A::Tw* tw, const ModConst* c, int rounds, unsigned blocks,           \
                               unsigned threads) {                                                                  \
        for (unsigned b = 0; b < blocks; ++b)                                                                       \
            for (unsigned t = 0; t < threads; ++t) {                                                                \
                host_set_dims(b, 0, t, blocks, 1, threads);                                                         \
                butterfly_rounds<A>(x, tw, c, rounds);                                                              \
            }                                                                                                       \
    }
ROUNDS(Mod60)
ROUNDS(Mod64)
ROUNDS(Goldilocks)
ROUNDS(Mod32)
"""


@pytest.mark.parametrize("name", ["q60", "q62", "goldilocks", "babybear"])
def test_butterfly_benchmark_rounds_match_python_ints(name):
    """benchmarks/butterfly_throughput.cu built for the CPU (2 blocks of 8 threads, 3 rounds) equals its Python-int
    oracle for every arithmetic it times."""
    spec = importlib.util.spec_from_file_location("butterfly_throughput", BUTTERFLY_BENCHMARK.with_suffix(".py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ((_, q, arith, dtype),) = [c for c in bench.CASES if c[0] == name]
    bits = 32 if dtype == np.uint32 else 64
    lib = host_library(BUTTERFLY_BENCHMARK.with_suffix(".cu").read_text() + BUTTERFLY_ROUNDS, headers=("modarith.cuh",))
    rng = np.random.default_rng()
    blocks, threads, rounds = 2, 8, 3
    stride = blocks * threads
    tw = with_companions(q, rng.integers(1, min(q, 2**63), size=256, dtype=np.uint64), bits)
    x = (rng.integers(0, 2**63, size=16 * stride, dtype=np.uint64) % np.uint64(q)).astype(dtype)
    before = x.copy()
    consts = modconst_rows([q])
    getattr(lib, f"rounds_{arith}")(
        *(ctypes.c_void_p(a.ctypes.data) for a in (x, tw, consts)),
        ctypes.c_int(rounds),
        ctypes.c_uint(blocks),
        ctypes.c_uint(threads),
    )
    for i in range(stride):
        values = [int(before[i + e * stride]) for e in range(16)]
        want = bench.oracle(values, tw[(i & 31) * 8 : (i & 31) * 8 + 8, 0], q, rounds)
        assert [int(x[i + e * stride]) for e in range(16)] == want, (name, i)
