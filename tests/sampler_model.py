"""An exact Python model of the GPU samplers of kernels/rns.cu: ChaCha20 (RFC 8439) vectorised over blocks
with NumPy, and the mapping from keystream to uniform residues, ternary values and rounded Gaussians.

The kernels draw call `call` of an engine under its 256-bit key with the nonce (stream, call mod 2^32,
call >> 32); draw i of a stream is the little-endian 128-bit integer of keystream bytes [16 i, 16 i + 16).
Integer samples are computed with Python ints; the Gaussian's floating point with Python's math module,
which calls the same C library as the host build of the kernels (so the two agree bit for bit there; a
GPU's log and cospi may differ in the last bit, which can move a value that lies within rounding error
of a half-integer or of the 6 sigma cut: `gaussian` reports those positions).
"""

from __future__ import annotations

import math

import numpy as np

U32 = np.uint32
U64 = np.uint64
CONSTANTS = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)  # "expand 32-byte k"
DRAWS_PER_BLOCK = 4
GAUSS_ATTEMPTS = 16


def key_words(key: bytes) -> tuple[np.uint64, ...]:
    """The four little-endian uint64 launch arguments that carry a 32-byte key."""
    if len(key) != 32:
        raise ValueError(f"key must have 32 bytes, got {len(key)}")
    return tuple(U64(w) for w in np.frombuffer(key, dtype="<u8"))


def key_bytes(words) -> bytes:
    return np.array([int(w) for w in words], dtype="<u8").tobytes()


def _rotl(x, r):
    return (x << U32(r)) | (x >> U32(32 - r))


def chacha20_blocks(key: bytes, nonce: bytes, counter: int, blocks: int) -> np.ndarray:
    """(blocks, 16) uint32: the ChaCha20 blocks of (key, counter + b mod 2^32, nonce), b < blocks."""
    if len(nonce) != 12:
        raise ValueError(f"nonce must have 12 bytes, got {len(nonce)}")
    state = np.empty((16, blocks), dtype=U32)
    state[0:4] = np.array(CONSTANTS, dtype=U32)[:, None]
    state[4:12] = np.frombuffer(key, dtype="<u4").astype(U32)[:, None]
    state[12] = (np.arange(blocks, dtype=np.uint64) + U64(counter)).astype(U32)  # wraps mod 2^32
    state[13:16] = np.frombuffer(nonce, dtype="<u4").astype(U32)[:, None]
    w = [state[i].copy() for i in range(16)]

    def quarter(a, b, c, d):
        w[a] += w[b]
        w[d] = _rotl(w[d] ^ w[a], 16)
        w[c] += w[d]
        w[b] = _rotl(w[b] ^ w[c], 12)
        w[a] += w[b]
        w[d] = _rotl(w[d] ^ w[a], 8)
        w[c] += w[d]
        w[b] = _rotl(w[b] ^ w[c], 7)

    with np.errstate(over="ignore"):
        for _ in range(10):
            quarter(0, 4, 8, 12)
            quarter(1, 5, 9, 13)
            quarter(2, 6, 10, 14)
            quarter(3, 7, 11, 15)
            quarter(0, 5, 10, 15)
            quarter(1, 6, 11, 12)
            quarter(2, 7, 8, 13)
            quarter(3, 4, 9, 14)
        out = np.stack([w[i] + state[i] for i in range(16)], axis=1)
    return out


def sampler_nonce(call: int, stream: int = 0) -> bytes:
    return np.array([stream, call & 0xFFFFFFFF, call >> 32], dtype="<u4").tobytes()


def draws(key: bytes, call: int, count: int, stream: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) uint64 arrays: the 128-bit draws 0 .. count - 1 of (call, stream)."""
    blocks = -(-count // DRAWS_PER_BLOCK)
    words = chacha20_blocks(key, sampler_nonce(call, stream), 0, blocks).astype(U64).reshape(-1, 4)[:count]
    lo = words[:, 0] | (words[:, 1] << U64(32))
    hi = words[:, 2] | (words[:, 3] << U64(32))
    return lo, hi


def _wide(lo, hi) -> list[int]:
    return [(int(h) << 64) | int(v) for v, h in zip(lo, hi)]


def uniform(key: bytes, call: int, shape, moduli) -> np.ndarray:
    """Element i (C order of shape (..., L, n)): X_i mod q_l with l = (i / n) % L."""
    shape = tuple(shape)
    limbs, n = shape[-2], shape[-1]
    count = math.prod(shape)
    values = _wide(*draws(key, call, count))
    out = [x % int(moduli[(i // n) % limbs]) for i, x in enumerate(values)]
    return np.array(out, dtype=U64).reshape(shape)


def ternary(key: bytes, call: int, shape) -> np.ndarray:
    shape = tuple(shape)
    values = _wide(*draws(key, call, math.prod(shape)))
    return np.array([x % 3 - 1 for x in values], dtype=np.int64).reshape(shape)


def gaussian(key: bytes, call: int, shape, sigma: float, cut: float = 6.0):
    """(samples, fragile, clamped): clamped marks samples set to +-cut sigma after every draw was rejected;
    fragile marks samples with a z (any attempt) within 1e-9 (relative) of a
    half-integer or of the cut, where a last-bit difference of log or cos could change the result.
    cut: in units of sigma (SAMPLER_GAUSS_CUT of the kernels)."""
    shape = tuple(shape)
    count = math.prod(shape)
    bound = cut * sigma
    z = [0.0] * count
    pending = list(range(count))
    fragile = np.zeros(count, dtype=bool)
    for attempt in range(GAUSS_ATTEMPTS):
        if not pending:
            break
        lo, hi = draws(key, call, count, stream=attempt)
        still = []
        for i in pending:
            u1 = float((int(lo[i]) >> 11) + 1) * 2.0**-53
            u2 = float(int(hi[i]) >> 11) * 2.0**-53
            # the host build's cospi(x) is cos(pi x); the GPU's cospi is correctly rounded to ~1 ulp
            v = sigma * math.sqrt(-2.0 * math.log(u1)) * math.cos(math.pi * (2.0 * u2))
            z[i] = v
            tol = 1e-9 * max(1.0, abs(v))
            fragile[i] |= abs(abs(v) - bound) < tol or abs(abs(v) - math.floor(abs(v)) - 0.5) < tol
            if abs(v) > bound:
                still.append(i)
        pending = still
    clamped = np.zeros(count, dtype=bool)
    for i in pending:
        z[i] = bound if z[i] > 0 else -bound
        clamped[i] = True
    out = np.array([round(v) for v in z], dtype=np.int64)  # Python's round: nearest, ties to even
    return out.reshape(shape), fragile.reshape(shape), clamped.reshape(shape)


# RFC 8439 ChaCha20 block function vectors: (key, nonce, counter, serialized block); section 2.3.2 and the
# five of appendix A.1.
RFC8439_BLOCKS = [
    (
        bytes(range(32)),
        bytes.fromhex("000000090000004a00000000"),
        1,
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e",
    ),
    (
        bytes(32),
        bytes(12),
        0,
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
    ),
    (
        bytes(32),
        bytes(12),
        1,
        "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
        "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f",
    ),
    (
        bytes(31) + b"\x01",
        bytes(12),
        1,
        "3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a"
        "8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0",
    ),
    (
        b"\x00\xff" + bytes(30),
        bytes(12),
        2,
        "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca"
        "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096",
    ),
    (
        bytes(32),
        bytes(11) + b"\x02",
        0,
        "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7"
        "8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d",
    ),
]


def hook_args(key: bytes, nonce: bytes, counter: int, blocks: int) -> tuple:
    """Launch arguments after `out` of the rns_chacha20_blocks test hook."""
    n0, n1, n2 = (np.uint32(w) for w in np.frombuffer(nonce, dtype="<u4"))
    return (np.int64(blocks), *key_words(key), np.uint32(counter), n0, n1, n2)
