"""BFV parameters: ring degree, plaintext modulus, RNS ciphertext modulus, key-switching special prime."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..backend.interface import check_digit_limbs
from ..rlwe.keys import SIGMA
from ..rlwe.params import MAX_LOG_Q, ModulusChain, check_degree, check_plain_modulus, limb_bits, moduli, primes_for_bits

PRESET_T = 65537  # prime, = 1 mod 2n up to n = 32768 (2^16 | t - 1); 17 bits leaves room for depth
PRESET_T_65536 = 786433  # 3 * 2^18 + 1: prime, = 1 mod 2n at n = 65536 (65537 is not)

# Limb sizes of the presets: data limbs, then the special prime (its bits last); totals are the table's.
_PRESET_BITS = {
    "n4096": (4096, PRESET_T, [36, 36], 37),
    "n8192": (8192, PRESET_T, [43, 43, 44, 44], 44),
    "n16384": (16384, PRESET_T, [54, 54, 55, 55, 55, 55, 55], 55),
    "n32768": (32768, PRESET_T, [58] * 4 + [59] * 10, 59),
    "n65536": (65536, PRESET_T_65536, [59] * 29, 59),
}


@dataclass(frozen=True)
class Params(ModulusChain):
    """BFV parameters, validated on construction.

    n: ring degree, a power of two in 2^12 .. 2^16. t: plaintext modulus, a prime = 1 mod 2n (SIMD
    batching) below 2^31. The ciphertext modulus q is a product of distinct NTT primes (= 1 mod 2n,
    < 2^62), given as `q=[primes]` or `q_bits=[bit lengths]`; the key-switching special prime as
    `special=prime` or `special_bits=bits` (default: the largest q limb size). log2(q * special)
    must not exceed the HE standard's 128-bit bound for n (MAX_LOG_Q).

    digit_limbs: limbs of q per key-switching digit (default 1, one digit per limb). With digits of a
    limbs, key switching (relinearization, rotation) transforms ceil(L / a) digits instead of L against keys of
    as many rows, and the noise it adds is about the product of a - 1 limbs larger: noise budget
    lost where key switching's noise dominates, as in the first multiplications of fresh ciphertexts (see
    the README for measured depths). q, P and the security are unchanged; keys of one digit size do not
    serve another (the fingerprint differs).
    """

    scheme = "bfv"  # in the fingerprint (a class attribute, not a field)
    n: int
    t: int
    q: tuple[int, ...] = ()
    special: int = 0
    q_bits: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
    special_bits: int | None = field(default=None, compare=False, repr=False)
    digit_limbs: int = 1

    def __post_init__(self):
        n, t = self.n, self.t
        check_degree(n)
        check_plain_modulus(t, n)
        q = self.q
        if self.q_bits is not None:
            if q:
                raise ValueError("give q or q_bits, not both")
            q = tuple(primes_for_bits(limb_bits(self.q_bits), n, {t}))
        q, special = moduli(n, t, q, self.special, self.special_bits)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "special", special)
        object.__setattr__(self, "digit_limbs", check_digit_limbs(self.digit_limbs, len(q)))

    @classmethod
    def preset(cls, name: str, digit_limbs: int = 1) -> Params:
        """The presets n4096, n8192, n16384, n32768, n65536: log2(q * special) = 109, 218, 438, 881, 1770
        (the HE standard's 128-bit bound for each n); t = 65537, and 786433 at n65536. digit_limbs as for
        Params."""
        if name not in _PRESET_BITS:
            raise ValueError(f"preset must be one of {', '.join(_PRESET_BITS)}, got {name!r}")
        n, t, bits, special_bits = _PRESET_BITS[name]
        return cls(n=n, t=t, q_bits=tuple(bits), special_bits=special_bits, digit_limbs=digit_limbs)


__all__ = ["Params", "MAX_LOG_Q", "PRESET_T", "SIGMA"]
