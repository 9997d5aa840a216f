"""BGV parameters: ring degree, plaintext modulus, a modulus chain q_0 .. q_{L-1}, key-switching prime.

Modulus switching drops the last limb. Every limb but q_0 is a prime = 1 mod t as well as 1 mod 2n,
so dividing by it keeps the plaintext exactly (q_i^-1 = 1 mod t): no per-ciphertext correction
factor is needed and ciphertexts of any two levels add after switching the higher one down.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..field import is_prime
from ..rlwe.keys import SIGMA
from ..rlwe.params import MAX_LOG_Q, ModulusChain, check_degree, check_plain_modulus, limb_bits, moduli

# Limb sizes of the presets: (n, t, q_0 bits, bits of every further limb, their count, special bits).
# A multiplication and the switch after it leave the noise at a fresh ciphertext's size (about 25 bits
# at t = 65537) when a limb has about 2 * 25 + log2(n) / 2 - 25 bits; the limbs are a little larger,
# the smallest sizes with enough primes = 1 mod 2 n t. q_0 holds the last level's noise and a rotation,
# the special prime the digits' size. Totals (with the special prime) are MAX_LOG_Q[n] or just below.
_PRESETS = {
    "n8192": (8192, 65537, 32, 38, 4, 34),
    "n16384": (16384, 65537, 38, 40, 9, 40),
    "n32768": (32768, 65537, 40, 42, 19, 42),
    "n65536": (65536, 786433, 44, 47, 35, 47),
}
PRESET_T = {name: spec[1] for name, spec in _PRESETS.items()}


def _chain_primes(bits_list, n: int, t: int, avoid: set[int]) -> list[int]:
    """Distinct primes of the requested bit lengths, none in `avoid`, largest first within each size:
    q_0 = 1 mod 2n (NTT-friendly), every further limb = 1 mod 2n t (NTT-friendly and 1 mod t)."""
    out, used = [], set(avoid)
    for i, bits in enumerate(bits_list):
        step = 2 * n * (t if i else 1)
        k = (2**bits - 2) // step
        while k >= 1:
            p = k * step + 1
            if p.bit_length() < bits:
                k = 0
                break
            if p not in used and is_prime(p):
                break
            k -= 1
        if k < 1:
            raise ValueError(
                f"q_bits: not enough {bits}-bit primes = 1 mod {step} (2n, times t after q_0); use larger limbs"
            )
        out.append(p)
        used.add(p)
    return out


@dataclass(frozen=True)
class Params(ModulusChain):
    """BGV parameters, validated on construction.

    n: ring degree, a power of two in 2^12 .. 2^16. t: the plaintext modulus, a prime = 1 mod 2n
    below 2^31 (SIMD batching). q: the modulus chain, distinct NTT primes (= 1 mod 2n, < 2^62); every
    limb after the first must also be 1 mod t (modulus switching then keeps plaintexts exact). Give
    `q=[primes]` or `q_bits=[bit lengths]` (chosen = 1 mod 2 n t); the key-switching prime as
    `special=prime` or `special_bits=bits` (default: the largest limb size). log2(q * special) must not
    exceed the HE standard's 128-bit bound (MAX_LOG_Q), as for BFV.
    """

    scheme = "bgv"  # in the fingerprint (a class attribute, not a field)
    n: int
    t: int
    q: tuple[int, ...] = ()
    special: int = 0
    q_bits: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
    special_bits: int | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        n, t = self.n, self.t
        check_degree(n)
        check_plain_modulus(t, n)
        q = self.q
        if self.q_bits is not None:
            if q:
                raise ValueError("give q or q_bits, not both")
            q = tuple(_chain_primes(limb_bits(self.q_bits), n, t, {t}))
        # the rules BGV shares with BFV: primes, distinctness, the special prime, the security bound
        q, special = moduli(n, t, q, self.special, self.special_bits)
        for i, p in enumerate(q[1:], 1):
            if p % t != 1:
                raise ValueError(
                    f"q: limb {i} ({p}) must be 1 mod t = {t} (modulus switching drops it and must "
                    "keep plaintexts exact); only q[0] is free"
                )
        min_bits = t.bit_length() + n.bit_length()
        if q[0].bit_length() < min_bits:
            raise ValueError(
                f"q: q[0] has {q[0].bit_length()} bits; the last level needs at least {min_bits} "
                f"(t, n and the rounding of a modulus switch)"
            )
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "special", special)

    @classmethod
    def preset(cls, name: str) -> Params:
        """The presets n8192, n16384, n32768 (t = 65537) and n65536 (t = 786433), each a chain within the
        128-bit bound of the HE standard."""
        if name not in _PRESETS:
            raise ValueError(f"preset must be one of {', '.join(_PRESETS)}, got {name!r}")
        n, t, first, bits, count, special_bits = _PRESETS[name]
        return cls(n=n, t=t, q_bits=(first,) + (bits,) * count, special_bits=special_bits)

    @property
    def levels(self) -> int:
        """Number of levels of the chain, L = len(q): a ciphertext at level l has the limbs q_0 .. q_l."""
        return len(self.q)


__all__ = ["Params", "MAX_LOG_Q", "PRESET_T", "SIGMA"]
