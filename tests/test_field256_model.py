"""kernels/field256.cuh's inline PTX run on the CPU through a model of its instructions (tests/ptx_model.py):
the asm text and operand bindings of add, sub, the conditional subtraction and the 32-bit-digit Montgomery
product, with the C++ around them mirrored step by step, against Python ints. No GPU needed."""

import random

import pytest

from hebatch.backend.cuda import kernel_dir
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
        [f"t[{i}]" for i in range(10)] + ["x"] + [f"y{i}" for i in range(8)],
    ]
    return dict(zip(("reduce_once", "fadd", "fsub_diff", "fsub_fix", "mad_row"), (b for b, _ in found)))


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


def mont_mul(blocks, field, a, b):
    digits = lambda x: [(x >> (32 * i)) & 0xFFFFFFFF for i in range(8)]  # noqa: E731
    ad, bd, pd = digits(a), digits(b), digits(field.p)
    pinv = field.p_inv_neg & 0xFFFFFFFF
    t = [0] * 10
    for i in range(8):
        t = run(blocks["mad_row"], t + [bd[i]] + ad)[:10]
        m = (t[0] * pinv) & 0xFFFFFFFF
        t = run(blocks["mad_row"], t + [m] + pd)[:10]
        assert t[0] == 0
        t = t[1:] + [0]
    s = [t[2 * k] | (t[2 * k + 1] << 32) for k in range(4)]
    return value(reduce_once(blocks, field, s, t[8]))


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
        assert mont_mul(blocks, field, a, b) == a * b * r_inv % p, (a, b)
