"""The inline PTX of kernels/modarith.cuh (Mod64's conditional subtraction; Goldilocks reduction and butterfly, in
32-bit halves) run on the CPU through a model of its instructions (tests/ptx_model.py), against Python ints. No
GPU needed. The Goldilocks blocks keep values lazily anywhere below 2^64, so the edges (values at and above P,
sums that wrap twice, differences that borrow twice) are listed explicitly; random words almost never reach
them."""

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
    assert [len(operands) for _, operands in blocks] == [6, 6, 8]
    return [chain for chain, _ in blocks]


def _halves(*words):
    return [h for w in words for h in (w & M32, w >> 32)]


def _words(rng, count):
    return EDGES + [rng.getrandbits(64) for _ in range(count)] + [P + rng.getrandbits(32) for _ in range(4)]


def test_goldilocks_reduce128_is_a_residue_below_2_64():
    _, reduce, _ = _blocks()
    rng = random.Random()
    words = _words(rng, 12)
    for lo, hi in itertools.product(words, words):
        r0, r1 = run(reduce, [0, 0, *_halves(lo, hi)])[:2]
        r = r0 | r1 << 32
        assert r < 2**64 and r % P == (lo + (hi << 64)) % P, (lo, hi)


@pytest.mark.parametrize("rounds", [1, 3])
def test_goldilocks_butterfly_adds_and_subtracts_lazy_words(rounds):
    _, _, butterfly = _blocks()
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
    sub_if_carry = _blocks()[0]
    rng = random.Random()
    bounds = [1, 2, 2**32, 2**62, 2**64 - 1] + [2 * rng.getrandbits(rng.choice((40, 61, 62))) + 2 for _ in range(8)]
    for c in bounds:
        xs = [0, 1, c - 1, c, c + 1, 2**64 - 1, (c - 1) | M32, c & ~M32] + [rng.getrandbits(64) for _ in range(8)]
        for x in (v for v in xs if 0 <= v < 2**64):
            r0, r1 = run(sub_if_carry, [0, 0, *_halves(x, 2**64 - c)])[:2]
            assert r0 | r1 << 32 == (x - c if x >= c else x), (x, c)
