"""The inline PTX of kernels/rns.cu (the exact product sums of base conversion and the inner product) run on
the CPU through a model of its instructions (tests/ptx_model.py), against Python ints. No GPU needed."""

import random

from hebatch.backend.gpu.loader import kernel_dir

from .ptx_model import asm_blocks, run

M64 = (1 << 64) - 1


def test_product_sum_chain_is_exact():
    blocks = asm_blocks((kernel_dir() / "rns.cu").read_text())
    assert [ops for _, ops in blocks] == [["lo", "mid", "top", "a", "b"]]
    chain = blocks[0][0]
    rng = random.Random()
    # extreme words first (every carry out of lo and mid), then random ones; sums pass 2^128 many times
    words = [M64, M64, 1, M64, 0, M64 - 1] + [rng.getrandbits(rng.choice((62, 64))) for _ in range(300)]
    lo = mid = top = 0
    total = 0
    for k in range(0, len(words) - 1, 2):
        a, b = words[k], words[k + 1]
        lo, mid, top = run(chain, [lo, mid, top, a, b])[:3]
        total += a * b
        assert lo + (mid << 64) + (top << 128) == total
    assert total >> 128 > 0
