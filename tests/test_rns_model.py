"""The inline PTX of kernels/rns.cu (the exact product sums of base conversion and the inner product) run on
the CPU through a model of its instructions (tests/ptx_model.py), against Python ints. No GPU needed."""

import random

from hebatch.backend.gpu.loader import kernel_dir

from .ptx_model import asm_blocks, run

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def test_product_sum_chain_is_exact():
    blocks = asm_blocks((kernel_dir() / "rns.cu").read_text())
    assert [ops for _, ops in blocks] == [
        [f"e[{i}]" for i in range(5)] + [f"o[{i}]" for i in range(3)] + ["a0", "a1", "b0", "b1"]
    ]
    chain = blocks[0][0]
    rng = random.Random()
    # extreme words first (every carry out of each digit), then random ones; sums pass 2^128 many times
    words = [M64, M64, 1, M64, 0, M64 - 1, M32, M64, M64 - M32, M64] + [
        rng.getrandbits(rng.choice((32, 62, 64))) for _ in range(300)
    ]
    parts = [0] * 8
    total = 0
    for k in range(0, len(words) - 1, 2):
        a, b = words[k], words[k + 1]
        parts = run(chain, parts + [a & M32, a >> 32, b & M32, b >> 32])[:8]
        total += a * b
        even = sum(d << (32 * i) for i, d in enumerate(parts[:5]))
        odd = sum(d << (32 * (i + 1)) for i, d in enumerate(parts[5:]))
        assert even + odd == total, (a, b)
    assert total >> 128 > 0
