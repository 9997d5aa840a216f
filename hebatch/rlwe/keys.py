"""Key generation over the RNS limbs of q and the special prime P: the ternary secret, the public key
and the key-switching keys of the RNS gadget (relinearization and Galois keys), all in NTT form and
from the engine's secure sources. Sizes: L = len(q) limbs; keys over q + (P,) have L + 1."""

from __future__ import annotations

import hashlib

import numpy as np

from ..device import to_host
from . import ring
from .switching import digit_count

SIGMA = 3.2  # standard deviation of the Gaussian errors (the HE standard's value)


def secret_key(ops, qp, n: int):
    """A ternary secret s in NTT form over the limbs `qp` (q and the special prime): (len(qp), n)."""
    return ring.ntt(ops.from_signed(ops.random_ternary((1, n)), qp), qp)


def public_key(ops, q, s_ntt, error_factor: int = 1):
    """(-(a s + f e), a) in NTT form over q, a uniform, e Gaussian, f = error_factor (1 for BFV; t for
    BGV, whose errors are multiples of t): data (2, L, n)."""
    L, n = len(q), int(s_ntt.shape[-1])
    a = ops.random_uniform((L, n), q)
    e = ring.ntt(ops.from_signed(ops.random_gaussian((1, n), SIGMA), q), q)
    if error_factor != 1:
        e = ops.mul_scalar(e, [error_factor] * L, q)
    pk0 = ops.neg(ops.add(ops.mul(a, s_ntt[:L], q), e, q), q)
    return ops.xp.stack([pk0, a])


def key_id_of(public_data, salt: bytes = b"") -> str:
    """A key set's id: the start of the SHA-256 of `salt` and its public key's data."""
    data = np.ascontiguousarray(to_host(public_data), dtype=np.uint64)
    return hashlib.sha256(salt + data.tobytes()).hexdigest()[:16]


def check_secret_matches(secret_data, public_data, q) -> None:
    """ValueError unless public = (-(a s + e), a) over the limbs q for this secret s and an error e small
    against every limb: pk0 + pk1 s = -e, whose centred coefficients are tiny (a foreign secret gives
    uniform ones: each passes the bound below with probability < 1/4, all n of them with probability
    < 4^-n). Exact products with Python ints (load time only)."""
    q = tuple(int(p) for p in q)
    s_ntt = to_host(secret_data)[: len(q)].astype(object)
    pk = to_host(public_data).astype(object)
    col = np.array(q, dtype=object).reshape(-1, 1)
    e = ring.intt(((pk[0] + pk[1] * s_ntt) % col).astype(np.uint64), q)
    for limb, qi in zip(to_host(e), q):
        centred = np.minimum(limb, np.uint64(qi) - limb)
        if int(centred.max()) >= qi // 8:
            raise ValueError("b: the secret key does not belong to this key set's public key")


def key_switching_key(ops, q, special: int, s_ntt, target_ntt, target_factors=None, digit_limbs: int = 1):
    """Key-switching key from target to s over q and the special prime P: data (D, 2, L + 1, n), one row per
    digit of `digit_limbs` limbs of q (D = switching.digit_count), row k = (-(a_k s) + e_k + P g_k target, a_k),
    g_k the k-th RNS gadget element ((Q/Q_k) [(Q/Q_k)^-1]_{Q_k}, Q_k the product of the digit's limbs: 1 mod
    those limbs, 0 mod the others). target_factors (one per limb of q + (P,)), if given, multiply the target
    first (BGV keeps t^-1 target there)."""
    q = tuple(q)
    qp = q + (special,)
    L, n = len(q), int(s_ntt.shape[-1])
    D = digit_count(L, digit_limbs)
    if target_factors is not None:
        target_ntt = ops.mul_scalar(target_ntt, list(target_factors), qp)
    a = ops.random_uniform((D, L + 1, n), qp)
    e = ring.ntt(ops.from_signed(ops.random_gaussian((D, 1, n), SIGMA), qp), qp)
    b = ops.sub(e, ops.mul(a, s_ntt, qp), qp)
    rows = []
    for k in range(D):
        factors = [special if i // digit_limbs == k else 0 for i in range(L)] + [0]
        rows.append(ops.add(b[k], ops.mul_scalar(target_ntt, factors, qp), qp))
    return ops.xp.stack([ops.xp.stack(rows), a], axis=1)


def relin_key(ops, q, special: int, s_ntt, target_factors=None, digit_limbs: int = 1):
    """The key-switching key from s^2 to s (data (D, 2, L + 1, n))."""
    qp = tuple(q) + (special,)
    target = ops.mul(s_ntt, s_ntt, qp)
    return ops.asarray(key_switching_key(ops, q, special, s_ntt, target, target_factors, digit_limbs))


def galois_keys(ops, q, special: int, s_ntt, elements, target_factors=None, digit_limbs: int = 1):
    """The key-switching keys from s(X^g) to s for every Galois element g of `elements`: data
    (len(elements), D, 2, L + 1, n)."""
    q = tuple(q)
    qp = q + (special,)
    L, n = len(q), int(s_ntt.shape[-1])
    keys = [
        key_switching_key(
            ops, q, special, s_ntt, ops.automorphism(s_ntt, g, qp, ntt_form=True), target_factors, digit_limbs
        )
        for g in elements
    ]
    D = digit_count(L, digit_limbs)
    return ops.xp.stack(keys) if keys else ops.xp.zeros((0, D, 2, L + 1, n), dtype=np.uint64)


__all__ = [
    "SIGMA",
    "secret_key",
    "public_key",
    "key_id_of",
    "check_secret_matches",
    "key_switching_key",
    "relin_key",
    "galois_keys",
]
