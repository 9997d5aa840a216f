"""The inline PTX of kernels/modarith.cuh (Shoup's product, Mod64's conditional subtraction and twiddle product;
Goldilocks reduction and butterfly, in 32-bit halves) run on the CPU through a model of its instructions
(tests/ptx_model.py), against Python ints. No GPU needed. The Goldilocks blocks keep values lazily anywhere below
2^64, so the edges (values at and above P, sums that wrap twice, differences that borrow twice) are listed
explicitly; random words almost never reach them."""

import itertools
import random

import pytest

from hebatch.backend.gpu.loader import kernel_dir

from .ptx_model import asm_blocks, run

P = 2**64 - 2**32 + 1
M32 = 2**32 - 1
EDGES = [0, 1, 2, M32, 2**32, 2**32 + 1, P - 2, P - 1, P, P + 1, 2**64 - 2**32, 2**64 - 2, 2**64 - 1]


def _blocks():
    blocks = asm_blocks((kernel_dir() / "modarith.cuh").read_text())
    assert [len(operands) for _, operands in blocks] == [10, 6, 10, 6, 8]
    return [chain for chain, _ in blocks]


def _halves(*words):
    return [h for w in words for h in (w & M32, w >> 32)]


def _words(rng, count):
    return EDGES + [rng.getrandbits(64) for _ in range(count)] + [P + rng.getrandbits(32) for _ in range(4)]


def test_goldilocks_reduce128_is_a_residue_below_2_64():
    _, _, _, reduce, _ = _blocks()
    rng = random.Random()
    words = _words(rng, 12)
    for lo, hi in itertools.product(words, words):
        r0, r1 = run(reduce, [0, 0, *_halves(lo, hi)])[:2]
        r = r0 | r1 << 32
        assert r < 2**64 and r % P == (lo + (hi << 64)) % P, (lo, hi)


@pytest.mark.parametrize("rounds", [1, 3])
def test_goldilocks_butterfly_adds_and_subtracts_lazy_words(rounds):
    _, _, _, _, butterfly = _blocks()
    rng = random.Random()
    words = _words(rng, 12)
    for a, b in itertools.product(words, words):
        x, y = a, b
        want_x, want_y = a % P, b % P
        for _ in range(rounds):  # (x, y) -> (x + y, x - y): each round's outputs feed the next
            s0, s1, d0, d1 = run(butterfly, [0, 0, 0, 0, *_halves(x, y)])[:4]
            x, y = s0 | s1 << 32, d0 | d1 << 32
            want_x, want_y = (want_x + want_y) % P, (want_x - want_y) % P
            assert x % P == want_x and y % P == want_y, (a, b)


def test_sub_if_carry_subtracts_exactly_when_x_reaches_the_bound():
    sub_if_carry = _blocks()[1]
    rng = random.Random()
    bounds = [1, 2, 2**32, 2**62, 2**64 - 1] + [2 * rng.getrandbits(rng.choice((40, 61, 62))) + 2 for _ in range(8)]
    for c in bounds:
        xs = [0, 1, c - 1, c, c + 1, 2**64 - 1, (c - 1) | M32, c & ~M32] + [rng.getrandbits(64) for _ in range(8)]
        for x in (v for v in xs if 0 <= v < 2**64):
            r0, r1 = run(sub_if_carry, [0, 0, *_halves(x, 2**64 - c)])[:2]
            assert r0 | r1 << 32 == (x - c if x >= c else x), (x, c)


@pytest.mark.parametrize("bits", [60, 62])
def test_mod64_twiddle_product_is_the_estimated_shoup_remainder(bits):
    """Mod64::mul_tw: x w + qhat (2^64 - q) mod 2^64 with qhat Shoup's quotient estimated from the three high partial
    products of x wq, for any word x: congruent to x w mod q and below 4q (the butterflies' lazy bound)."""
    mul_tw = _blocks()[2]
    rng = random.Random()
    for _ in range(6):
        q = rng.getrandbits(bits) | 1 << (bits - 1) | 1
        xs = [0, 1, q - 1, q, 4 * q - 1, 2**64 - 1, M32, 2**32] + [rng.getrandbits(64) for _ in range(24)]
        ws = [0, 1, q - 1] + [rng.randrange(q) for _ in range(8)]
        for x, w in itertools.product(xs, ws):
            wq = (w << 64) // q
            x0, x1, wq0, wq1 = x & M32, x >> 32, wq & M32, wq >> 32
            qhat = x1 * wq1 + (x0 * wq1 >> 32) + (x1 * wq0 >> 32)
            r0, r1 = run(mul_tw, [0, 0, *_halves(x, w, wq, 2**64 - q)])[:2]
            r = r0 | r1 << 32
            assert r == (x * w + qhat * (2**64 - q)) % 2**64, (q, x, w)
            assert r % q == x * w % q and r < 4 * q, (q, x, w)


@pytest.mark.parametrize("bits", [31, 60, 62, 63])
def test_shoup_product_is_reduced_with_the_exact_quotient(bits):
    """shoup_mul: x w + floor(x wq / 2^64) (2^64 - q) mod 2^64, then one conditional subtraction of q: x w mod q
    for any word x."""
    shoup = _blocks()[0]
    rng = random.Random()
    for _ in range(6):
        q = rng.getrandbits(bits) | 1 << (bits - 1) | 1
        xs = [0, 1, q - 1, q, 2**64 - 1, M32, 2**32] + [rng.getrandbits(64) for _ in range(24)]
        ws = [0, 1, q - 1] + [rng.randrange(q) for _ in range(8)]
        for x, w in itertools.product(xs, ws):
            wq = (w << 64) // q
            r0, r1 = run(shoup, [0, 0, *_halves(x, w, wq, 2**64 - q)])[:2]
            r = r0 | r1 << 32
            assert r == (x * w + (x * wq >> 64) * (2**64 - q)) % 2**64, (q, x, w)
            assert r < 2 * q and (r - q if r >= q else r) == x * w % q, (q, x, w)
