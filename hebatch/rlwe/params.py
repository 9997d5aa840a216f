"""Parameter rules the RLWE schemes share: the ring degree, a batching plaintext modulus, RNS limbs and
the key-switching special prime, and the HE standard's 128-bit security bound on log2(q * special)."""

from __future__ import annotations

import hashlib
import math
from functools import cached_property

from ..field import is_power_of_two, is_prime, ntt_primes

# Largest log2(q * p) for 128-bit classical security with ternary secrets (HomomorphicEncryption.org
# standard, Table 1; 2^16 extrapolated as SEAL does). The special prime p counts, as in SEAL.
MAX_LOG_Q = {4096: 109, 8192: 218, 16384: 438, 32768: 881, 65536: 1770}


def check_degree(n) -> None:
    """ValueError unless n is a power of two from 2^12 to 2^16 (the degrees the security table covers)."""
    if not isinstance(n, int) or isinstance(n, bool) or not is_power_of_two(n) or not 4096 <= n <= 65536:
        raise ValueError(f"n must be a power of two from 2**12 to 2**16, got {n!r}")


def check_plain_modulus(t, n: int) -> None:
    """ValueError unless t is a prime = 1 mod 2n (SIMD batching) below 2^31."""
    if not isinstance(t, int) or isinstance(t, bool) or t < 3 or not is_prime(t):
        raise ValueError(f"t must be a prime (batching needs a prime plaintext modulus), got {t!r}")
    if t % (2 * n) != 1:
        raise ValueError(f"t must be 1 mod 2n = {2 * n} for SIMD batching, got t = {t} (t mod 2n = {t % (2 * n)})")
    if t >= 2**31:
        raise ValueError(f"t must be below 2**31, got a {t.bit_length()}-bit t")


def limb_bits(q_bits) -> list[int]:
    """The limb sizes of `q_bits` as ints, or a ValueError (each from 20 to 61 bits, at least one)."""
    bits = [int(b) for b in q_bits]
    if not bits or any(b < 20 or b > 61 for b in bits):
        raise ValueError(f"q_bits must be a non-empty list of limb sizes from 20 to 61 bits, got {list(q_bits)}")
    return bits


def primes_for_bits(bits_list: list[int], n: int, avoid: set[int]) -> list[int]:
    """Distinct NTT primes (= 1 mod 2n) with the requested bit lengths, none of them in `avoid`, in the
    caller's order of sizes."""
    out = []
    for bits in sorted(set(bits_list)):
        need = bits_list.count(bits)
        found = [p for p in ntt_primes(bits, n, need + len(avoid) + 1) if p not in avoid and p.bit_length() == bits]
        if len(found) < need:
            raise ValueError(f"q_bits: fewer than {need} primes of {bits} bits that are 1 mod 2n = {2 * n}")
        out.extend(found[:need])
    by_bits: dict[int, list[int]] = {}
    for p in out:
        by_bits.setdefault(p.bit_length(), []).append(p)
    return [by_bits[b].pop(0) for b in bits_list]


def moduli(n: int, t: int, q, special: int, special_bits: int | None) -> tuple[tuple[int, ...], int]:
    """(q, special) checked: q distinct NTT primes (= 1 mod 2n, < 2^62), the special prime given, of
    `special_bits` bits, or by default of the largest limb size; all differ from t; log2(q * special)
    within MAX_LOG_Q[n]; q far above t. ValueError naming the rule otherwise."""
    q = tuple(int(p) for p in q)
    if not q:
        raise ValueError("q: need at least one prime (give q=[...] or q_bits=[...])")
    special = int(special)
    if special_bits is not None:
        if special:
            raise ValueError("give special or special_bits, not both")
        special = primes_for_bits([int(special_bits)], n, set(q) | {t})[0]
    elif not special:
        special = primes_for_bits([max(p.bit_length() for p in q)], n, set(q) | {t})[0]
    for name, p in [("q", v) for v in q] + [("special", special)]:
        if p >= 2**62 or not is_prime(p) or p % (2 * n) != 1:
            raise ValueError(f"{name}: every prime must be < 2**62, prime and 1 mod 2n = {2 * n}; {p} is not")
    if len(set(q + (special,))) != len(q) + 1 or t in q + (special,):
        raise ValueError("q and special: the primes must be distinct and differ from t")
    log_q = sum(p.bit_length() for p in q) + special.bit_length()
    if log_q > MAX_LOG_Q[n]:
        raise ValueError(
            f"q: log2(q * special) = {log_q} bits exceeds {MAX_LOG_Q[n]}, the 128-bit security "
            f"bound of the HE standard for n = {n}"
        )
    if math.prod(q).bit_length() < t.bit_length() + 10:
        raise ValueError(f"q: the ciphertext modulus ({math.prod(q).bit_length()} bits) must be far above t")
    return q, special


class ModulusChain:
    """What both schemes' parameter sets derive from (n, t, q, special): sizes in bits and the
    fingerprint that keeps objects of different parameters (and schemes) apart. `scheme` names the
    scheme in the fingerprint."""

    scheme = "rlwe"
    n: int
    t: int
    q: tuple[int, ...]
    special: int
    digit_limbs: int = 1  # limbs of q per key-switching digit (BFV may take more; see bfv.Params)

    @property
    def log_q(self) -> int:
        """Bits of q (the data modulus; BGV: the whole chain)."""
        return sum(p.bit_length() for p in self.q)

    @property
    def log_qp(self) -> int:
        """Bits of q * special, the number the security table bounds."""
        return self.log_q + self.special.bit_length()

    @cached_property  # checked on every operation: hashed once (the parameter sets are frozen)
    def fingerprint(self) -> str:
        """A short hash of (scheme, n, t, q, special) and digit_limbs where it is not 1 (the keys' layout):
        objects of different parameters never mix."""
        text = f"{self.scheme}:{self.n}:{self.t}:{','.join(map(str, self.q))}:{self.special}"
        if self.digit_limbs != 1:
            text += f":digits{self.digit_limbs}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]


__all__ = ["MAX_LOG_Q", "check_degree", "check_plain_modulus", "limb_bits", "primes_for_bits", "moduli", "ModulusChain"]
