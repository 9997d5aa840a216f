"""kernels/field256.cuh's inline PTX run on the CPU through a model of its instructions (tests/ptx_model.py):
the asm text and operand bindings of add, sub, the conditional subtraction and the 32-bit-digit Montgomery
product, with the C++ around them mirrored step by step, against Python ints. No GPU needed."""

import random

import pytest

from hebatch.backend.gpu.loader import kernel_dir
from hebatch.field import BLS12_377_FR, BLS12_381_FR, BN254_FR

from .ptx_model import asm_blocks, run

FIELDS = [BN254_FR, BLS12_381_FR, BLS12_377_FR]
M64 = (1 << 64) - 1


@pytest.fixture(scope="module")
def blocks():
    found = asm_blocks((kernel_dir() / "field256.cuh").read_text())
    names = [ops for _, ops in found]
    v = lambda x: [f"{x}.v[{i}]" for i in range(4)]  # noqa: E731
    assert names == [
        ["d0", "d1", "d2", "d3", "borrow", "s0", "s1", "s2", "s3", "F::P0", "F::P1", "F::P2", "F::P3", "c"],
        ["s0", "s1", "s2", "s3", "c"] + v("a") + v("b"),
        ["d0", "d1", "d2", "d3", "borrow"] + v("a") + v("b"),
        v("r") + ["d0", "d1", "d2", "d3"] + [f"F::P{i} & borrow" for i in range(4)],
        v("r") + v("a") + v("b") + [f"F::P{i}" for i in range(4)],
        [f"acc[{i}]" for i in range(9)] + ["x"] + [f"y{i}" for i in range(4)],
        [f"acc[{i}]" for i in range(9)] + ["low", "lone", "x"] + [f"y{i}" for i in range(4)],
        [f"s[{i}]" for i in range(8)] + [f"even[{i}]" for i in range(8)] + ["lone"] + [f"odd[{i}]" for i in range(7)],
    ]
    return dict(
        zip(
            (
                "reduce_once",
                "fadd",
                "fsub_diff",
                "fsub_fix",
                "fsub_unreduced",
                "mad_pairs",
                "add_mad_pairs",
                "final_sum",
            ),
            (b for b, _ in found),
        )
    )


def limbs(x):
    return [(x >> (64 * i)) & M64 for i in range(4)]


def value(ls):
    return sum(v << (64 * i) for i, v in enumerate(ls))


def reduce_once(blocks, field, s, c):
    regs = run(blocks["reduce_once"], [0] * 5 + s + list(field.p_limbs) + [c])
    d, borrow = regs[:4], regs[4]
    return s if borrow != 0 else d


def fadd(blocks, field, a, b):
    regs = run(blocks["fadd"], [0] * 5 + limbs(a) + limbs(b))
    return value(reduce_once(blocks, field, regs[:4], regs[4]))


def fsub(blocks, field, a, b):
    regs = run(blocks["fsub_diff"], [0] * 5 + limbs(a) + limbs(b))
    d, borrow = regs[:4], regs[4]
    fix = run(blocks["fsub_fix"], [0] * 4 + d + [pl & borrow for pl in field.p_limbs])
    return value(fix[:4])


def fsub_unreduced(blocks, field, a, b):
    return value(run(blocks["fsub_unreduced"], [0] * 4 + limbs(a) + limbs(b) + list(field.p_limbs))[:4])


def mont_mul(blocks, field, a, b):
    """The C++ of mont_mul step by step (even/odd accumulators and the lone digit), the asm through the model;
    checks on the way the invariants the kernel relies on."""
    digits = lambda x: [(x >> (32 * i)) & 0xFFFFFFFF for i in range(8)]  # noqa: E731
    ad, bd, pd = digits(a), digits(b), digits(field.p)
    pinv = field.p_inv_neg & 0xFFFFFFFF
    even, odd, lone = [0] * 9, [0] * 9, 0
    num = lambda ds: sum(d << (32 * k) for k, d in enumerate(ds))  # noqa: E731
    for i in range(8):
        if i == 0:
            odd = run(blocks["mad_pairs"], odd + [bd[i]] + ad[1::2])[:9]
        else:
            regs = run(blocks["add_mad_pairs"], odd + [even[0], lone, bd[i]] + ad[1::2])
            odd, even[0] = regs[:9], regs[9]
        even = run(blocks["mad_pairs"], even + [bd[i]] + ad[0::2])[:9]
        m = (even[0] * pinv) & 0xFFFFFFFF
        even = run(blocks["mad_pairs"], even + [m] + pd[0::2])[:9]
        odd = run(blocks["mad_pairs"], odd + [m] + pd[1::2])[:9]
        assert even[0] == 0
        t = num(even) + (num(odd) << 32)
        assert t % 2**32 == 0 and t >> 32 < 2 * field.p  # the CIOS bound
        even, odd, lone = odd, even[2:] + [0, 0], even[1]
        assert num(even) + (num(odd) << 32) + lone == t >> 32
    s = run(blocks["final_sum"], [0] * 8 + even[:8] + [lone] + odd[:7])[:8]
    assert num(s) == num(even) + (num(odd) << 32) + lone  # nothing above digit 7
    limbs64 = [s[2 * k] | (s[2 * k + 1] << 32) for k in range(4)]
    return value(reduce_once(blocks, field, limbs64, 0))


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_ptx_field_arithmetic_model(blocks, field):
    rng = random.Random()
    p = field.p
    edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, 2**64 - 1, 2**64, 2**192, p - 2**64, 2**32]
    pairs = [(a, b) for a in edge for b in edge] + [(rng.randrange(p), rng.randrange(p)) for _ in range(300)]
    r_inv = pow(field.R, -1, p)
    for a, b in pairs:
        assert fadd(blocks, field, a, b) == (a + b) % p, (a, b)
        assert fsub(blocks, field, a, b) == (a - b) % p, (a, b)
        assert fsub_unreduced(blocks, field, a, b) == a - b + p, (a, b)
        assert mont_mul(blocks, field, a, b) == a * b * r_inv % p, (a, b)
        # the DIF butterfly's product: the twiddle first, the unreduced difference second
        assert mont_mul(blocks, field, b, a - b + p) == (a - b) * b * r_inv % p, (a, b)
    # mont_mul's second factor may be any 256-bit value (the bound needs a < p only)
    wide = [2**256 - 1, 2**256 - 2**32, 2**255, p, 2 * p - 1] + [rng.randrange(2**256) for _ in range(50)]
    for a in edge[:6] + [rng.randrange(p) for _ in range(20)]:
        for b in wide:
            assert mont_mul(blocks, field, a, b) == a * b * r_inv % p, (a, b)
