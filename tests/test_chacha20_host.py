"""kernels/chacha20.cuh (the ChaCha20 block function of RFC 8439) built for the CPU: the RFC's
known-answer vectors, and agreement with an independent Python model of the RFC's description."""

import ctypes
import os
import struct

import numpy as np
import pytest

from .host_kernels import compiler, host_library

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C++ compiler")

SOURCE = r"""
#include "chacha20.cuh"
extern "C" void host_chacha20_blocks(const unsigned *key, unsigned counter, const unsigned *nonce,
                                     unsigned *out, unsigned blocks) {
    for (unsigned b = 0; b < blocks; ++b) chacha20_block(key, counter + b, nonce, out + 16 * b);
}
"""


def keystream(key: bytes, counter: int, nonce: bytes, blocks: int) -> bytes:
    lib = host_library(SOURCE, headers=("chacha20.cuh",))
    fn = lib.host_chacha20_blocks
    fn.restype = None
    k = np.frombuffer(key, dtype="<u4").astype(np.uint32)
    nc = np.frombuffer(nonce, dtype="<u4").astype(np.uint32)
    out = np.zeros(16 * blocks, dtype=np.uint32)
    fn(
        ctypes.c_void_p(k.ctypes.data),
        ctypes.c_uint32(counter),
        ctypes.c_void_p(nc.ctypes.data),
        ctypes.c_void_p(out.ctypes.data),
        ctypes.c_uint32(blocks),
    )
    return out.astype("<u4").tobytes()


def model_block(key: bytes, counter: int, nonce: bytes) -> bytes:
    """RFC 8439 section 2.3, written from its description (Python ints)."""
    mask = 0xFFFFFFFF
    state = [
        0x61707865,
        0x3320646E,
        0x79622D32,
        0x6B206574,
        *struct.unpack("<8I", key),
        counter,
        *struct.unpack("<3I", nonce),
    ]
    w = list(state)

    def qr(a, b, c, d):
        for x, y, z, r in ((a, b, d, 16), (c, d, b, 12), (a, b, d, 8), (c, d, b, 7)):
            w[x] = (w[x] + w[y]) & mask
            w[z] ^= w[x]
            w[z] = ((w[z] << r) | (w[z] >> (32 - r))) & mask

    for _ in range(10):
        for idx in (
            (0, 4, 8, 12),
            (1, 5, 9, 13),
            (2, 6, 10, 14),
            (3, 7, 11, 15),
            (0, 5, 10, 15),
            (1, 6, 11, 12),
            (2, 7, 8, 13),
            (3, 4, 9, 14),
        ):
            qr(*idx)
    return struct.pack("<16I", *((a + b) & mask for a, b in zip(w, state)))


def test_rfc8439_block_function_2_3_2():
    key = bytes(range(32))
    nonce = bytes.fromhex("000000090000004a00000000")
    want = bytes.fromhex(
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
    )
    assert keystream(key, 1, nonce, 1) == want
    assert model_block(key, 1, nonce) == want


def test_rfc8439_keystream_appendix_a1():
    # test vector 1: all-zero key and nonce, counter 0
    want = bytes.fromhex(
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
    )
    assert keystream(bytes(32), 0, bytes(12), 1) == want


def test_matches_model_on_random_inputs():
    for _ in range(20):
        key, nonce = os.urandom(32), os.urandom(12)
        counter = int.from_bytes(os.urandom(4), "little") & 0xFFFFFF00
        got = keystream(key, counter, nonce, 3)
        assert got == b"".join(model_block(key, counter + i, nonce) for i in range(3))
