"""BFV parameters: ring degree, plaintext modulus, RNS ciphertext modulus, key-switching special prime."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from functools import cached_property

from ..field import is_power_of_two, is_prime, ntt_primes

# Largest log2(q * p) for 128-bit classical security with ternary secrets (HomomorphicEncryption.org
# standard, Table 1; 2^16 extrapolated as SEAL does). The special prime p counts, as in SEAL.
MAX_LOG_Q = {4096: 109, 8192: 218, 16384: 438, 32768: 881, 65536: 1770}

# Limb sizes of the presets: data limbs, then the special prime (its bits last); totals are the table's.
_PRESET_BITS = {
    "n4096": (4096, [36, 36], 37),
    "n8192": (8192, [43, 43, 44, 44], 44),
    "n16384": (16384, [54, 54, 55, 55, 55, 55, 55], 55),
    "n32768": (32768, [58] * 4 + [59] * 10, 59),
}
PRESET_T = 65537  # prime, = 1 mod 2n for every preset n (2^16 | t - 1); 17 bits leaves room for depth
SIGMA = 3.2


def _primes_for_bits(bits_list: list[int], n: int, avoid: set[int]) -> list[int]:
    """Distinct NTT primes (= 1 mod 2n) with the requested bit lengths, none of them in `avoid`."""
    out = []
    for bits in sorted(set(bits_list)):
        need = bits_list.count(bits)
        found = [p for p in ntt_primes(bits, n, need + len(avoid) + 1) if p not in avoid and p.bit_length() == bits]
        if len(found) < need:
            raise ValueError(f"q_bits: fewer than {need} primes of {bits} bits that are 1 mod 2n = {2 * n}")
        out.extend(found[:need])
    # keep the caller's order of sizes
    by_bits: dict[int, list[int]] = {}
    for p in out:
        by_bits.setdefault(p.bit_length(), []).append(p)
    return [by_bits[b].pop(0) for b in bits_list]


@dataclass(frozen=True)
class Params:
    """BFV parameters, validated on construction.

    n: ring degree, a power of two in 2^12 .. 2^16. t: plaintext modulus, a prime = 1 mod 2n (SIMD
    batching) below 2^31. The ciphertext modulus q is a product of distinct NTT primes (= 1 mod 2n,
    < 2^62), given as `q=[primes]` or `q_bits=[bit lengths]`; the key-switching special prime as
    `special=prime` or `special_bits=bits` (default: the largest q limb size). log2(q * special)
    must not exceed the HE standard's 128-bit bound for n (MAX_LOG_Q).
    """

    n: int
    t: int
    q: tuple[int, ...] = ()
    special: int = 0
    q_bits: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
    special_bits: int | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        n, t = self.n, self.t
        if not isinstance(n, int) or isinstance(n, bool) or not is_power_of_two(n) or not 4096 <= n <= 65536:
            raise ValueError(f"n must be a power of two from 2**12 to 2**16, got {n!r}")
        if not isinstance(t, int) or isinstance(t, bool) or t < 3 or not is_prime(t):
            raise ValueError(f"t must be a prime (batching needs a prime plaintext modulus), got {t!r}")
        if t % (2 * n) != 1:
            raise ValueError(f"t must be 1 mod 2n = {2 * n} for SIMD batching, got t = {t} (t mod 2n = {t % (2 * n)})")
        if t >= 2**31:
            raise ValueError(f"t must be below 2**31, got a {t.bit_length()}-bit t")
        q = self.q
        if self.q_bits is not None:
            if q:
                raise ValueError("give q or q_bits, not both")
            bits = [int(b) for b in self.q_bits]
            if not bits or any(b < 20 or b > 61 for b in bits):
                raise ValueError(
                    f"q_bits must be a non-empty list of limb sizes from 20 to 61 bits, got {list(self.q_bits)}"
                )
            q = tuple(_primes_for_bits(bits, n, {t}))
        q = tuple(int(p) for p in q)
        if not q:
            raise ValueError("q: need at least one prime (give q=[...] or q_bits=[...])")
        special = int(self.special)
        if self.special_bits is not None:
            if special:
                raise ValueError("give special or special_bits, not both")
            special = _primes_for_bits([int(self.special_bits)], n, set(q) | {t})[0]
        elif not special:
            special = _primes_for_bits([max(p.bit_length() for p in q)], n, set(q) | {t})[0]
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
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "special", special)

    @classmethod
    def preset(cls, name: str) -> Params:
        """The presets n4096, n8192, n16384, n32768: log2(q * special) = 109, 218, 438, 881, t = 65537."""
        if name not in _PRESET_BITS:
            raise ValueError(f"preset must be one of {', '.join(_PRESET_BITS)}, got {name!r}")
        n, bits, special_bits = _PRESET_BITS[name]
        return cls(n=n, t=PRESET_T, q_bits=tuple(bits), special_bits=special_bits)

    @property
    def log_q(self) -> int:
        """Bits of q alone (the data modulus)."""
        return sum(p.bit_length() for p in self.q)

    @property
    def log_qp(self) -> int:
        """Bits of q * special, the number the security table bounds."""
        return self.log_q + self.special.bit_length()

    @cached_property  # checked on every operation: hashed once (the dataclass is frozen)
    def fingerprint(self) -> str:
        """A short hash of (n, t, q, special): objects of different parameters never mix."""
        text = f"bfv:{self.n}:{self.t}:{','.join(map(str, self.q))}:{self.special}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]


__all__ = ["Params", "MAX_LOG_Q", "PRESET_T", "SIGMA"]
