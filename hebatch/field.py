"""Exact host-side number theory with Python ints.

This module is the one home for everything the transforms and kernels need to know about a
modulus: primality, NTT-friendly primes, primitive roots and roots of unity, and the
precomputed reduction constants (Barrett after Shivdikar et al., Shoup, Montgomery, Goldilocks),
and the named prime fields of zk provers (`PrimeField`). Array code here only converts between
Python ints and limb arrays; the backends do the arithmetic on arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

GOLDILOCKS = 2**64 - 2**32 + 1
"""The Goldilocks prime 2^64 - 2^32 + 1 (two-adicity 32): 64-bit, reduced without multiplications."""

BABYBEAR = 15 * 2**27 + 1
"""The BabyBear prime 15 * 2^27 + 1 (31-bit, two-adicity 27): fits uint32 arrays."""

GENERIC_MAX_BITS = 62
"""Generic moduli must be below 2^62 (Barrett needs two spare bits in a 64-bit word)."""

MAX_LOG_N = 28

_SMALL_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71)


def _check_int(value, name: str) -> int:
    """Return value as a Python int, refusing bools, floats and other non-integers."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return int(value.__index__())


@lru_cache(maxsize=4096)
def is_prime(q: int) -> bool:
    """Miller-Rabin: deterministic below 3.3e24 (the first 13 primes as bases), and with 20
    fixed prime bases above that (no known composite passes; error below 4^-20 for random input)."""
    q = _check_int(q, "q")
    if q < 2:
        return False
    for p in _SMALL_PRIMES:
        if q % p == 0:
            return q == p
    d, s = q - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in _SMALL_PRIMES[:13] if q < 3_317_044_064_679_887_385_961_981 else _SMALL_PRIMES:
        x = pow(a, d, q)
        if x in (1, q - 1):
            continue
        for _ in range(s - 1):
            x = x * x % q
            if x == q - 1:
                break
        else:
            return False
    return True


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def ntt_primes(bits: int, n: int, count: int) -> list[int]:
    """The `count` largest primes q < 2**bits with q = 1 mod 2n, in descending order.

    Such a prime has a primitive 2n-th root of unity, so it supports cyclic and negacyclic
    NTTs of length n. Deterministic: the same arguments always give the same list.
    """
    bits = _check_int(bits, "bits")
    n = _check_int(n, "n")
    count = _check_int(count, "count")
    if not 2 <= bits <= 256:
        raise ValueError(f"bits must be between 2 and 256, got {bits}")
    if not is_power_of_two(n):
        raise ValueError(f"n must be a power of two, got {n}")
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    step = 2 * n
    primes: list[int] = []
    k = (2**bits - 2) // step  # largest k with k*step + 1 < 2**bits
    while k >= 1 and len(primes) < count:
        q = k * step + 1
        if is_prime(q):
            primes.append(q)
        k -= 1
    if len(primes) < count:
        raise ValueError(f"only {len(primes)} primes below 2**{bits} are 1 mod 2n = {step}; asked for {count}")
    return primes


def factorize(m: int) -> dict[int, int]:
    """Prime factorisation {p: e} by trial division then Pollard's rho (Brent)."""
    m = _check_int(m, "m")
    if m < 1:
        raise ValueError(f"m must be positive, got {m}")
    factors: dict[int, int] = {}
    for p in _SMALL_PRIMES:
        while m % p == 0:
            factors[p] = factors.get(p, 0) + 1
            m //= p
    stack = [m] if m > 1 else []
    while stack:
        f = stack.pop()
        if is_prime(f):
            factors[f] = factors.get(f, 0) + 1
            continue
        d = _pollard_rho(f)
        stack += [d, f // d]
    return factors


def _pollard_rho(m: int) -> int:
    """A non-trivial factor of the odd composite m (Brent's variant with batched gcds)."""
    for c in range(1, 10_000):
        y, r, g, prod = 2, 1, 1, 1
        x = ys = y
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % m
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(128, r - k)):
                    y = (y * y + c) % m
                    prod = prod * abs(x - y) % m
                g = math.gcd(prod, m)
                k += 128
            r *= 2
        if g == m:  # batched gcd overshot: step back one at a time
            g = 1
            while g == 1:
                ys = (ys * ys + c) % m
                g = math.gcd(abs(x - ys), m)
        if g != m:
            return g
    raise ArithmeticError(f"Pollard rho found no factor of {m}")


@lru_cache(maxsize=256)
def primitive_root(q: int) -> int:
    """The smallest generator of the multiplicative group Z_q^* of the prime q."""
    q = _check_int(q, "q")
    if not is_prime(q):
        raise ValueError(f"q must be prime, got {q}")
    if q == 2:
        return 1
    order = q - 1
    cofactors = [order // p for p in factorize(order)]
    for g in range(2, q):
        if all(pow(g, c, q) != 1 for c in cofactors):
            return g
    raise ArithmeticError(f"no generator found for {q}")  # unreachable for a prime


def two_adicity(q: int) -> int:
    """The largest s with 2**s dividing q - 1."""
    return ((q - 1) & -(q - 1)).bit_length() - 1


def root_of_unity(q: int, order: int) -> int:
    """g**((q-1)/order) with g = primitive_root(q): a primitive `order`-th root of unity."""
    if (q - 1) % order:
        raise ValueError(f"modulus {q} is not 1 mod {order}: it has no primitive {order}-th root of unity")
    return pow(primitive_root(q), (q - 1) // order, q)


@lru_cache(maxsize=4096)
def default_root(q: int, n: int, negacyclic: bool) -> int:
    """The root the public API uses by default: w = g^((q-1)/n), or psi = g^((q-1)/(2n))."""
    return root_of_unity(q, 2 * n if negacyclic else n)


def check_root(root: int, q: int, n: int, negacyclic: bool) -> None:
    """Raise ValueError unless `root` is a primitive n-th (cyclic) or 2n-th (negacyclic) root mod q."""
    order = 2 * n if negacyclic else n
    what = "psi, a primitive 2n-th" if negacyclic else "w, a primitive n-th"
    if not 0 < root < q or pow(root, order, q) != 1 or pow(root, order // 2, q) != q - 1:
        raise ValueError(f"root={root} is not {what} root of unity mod {q} for n={n}")


# ---------------------------------------------------------------------------------------------
# Reduction constants. A Modulus carries every constant any backend or kernel needs for q.
# ---------------------------------------------------------------------------------------------

KIND_U32 = "u32"  # q < 2^32: products fit one 64-bit word
KIND_GENERIC = "generic"  # 2^32 <= q < 2^62: Barrett / Shoup on 64-bit words
KIND_GOLDILOCKS = "goldilocks"  # q = 2^64 - 2^32 + 1: shift-and-add reduction


@dataclass(frozen=True)
class Modulus:
    """A prime modulus and its precomputed reduction constants.

    Barrett (Shivdikar et al., Algorithm 4, a Dhem-Quisquater instance): with m = bit length of q,
    mu = floor(2^(2m+1) / q); for x < 2^(2m), quot = ((x >> (m-2)) * mu) >> (m+3) is at most one
    below floor(x / q), so one conditional subtraction finishes the reduction.
    Montgomery: R = 2^64, q_inv_neg = -q^-1 mod R, r2 = R^2 mod q.
    """

    q: int
    bits: int
    kind: str
    barrett_mu: int
    montgomery_q_inv_neg: int
    montgomery_r2: int

    @property
    def barrett_shift_in(self) -> int:
        return self.bits - 2

    @property
    def barrett_shift_out(self) -> int:
        return self.bits + 3

    def shoup(self, w: int) -> int:
        """Shoup's companion floor(w * 2^64 / q) for multiplying by the fixed w (needs q < 2^63)."""
        return (w << 64) // self.q

    def barrett_reduce(self, x: int) -> int:
        """Reference model of the kernels' Barrett reduction (x < 2^(2m)), for tests."""
        quot = ((x >> self.barrett_shift_in) * self.barrett_mu) >> self.barrett_shift_out
        rem = x - quot * self.q
        return rem - self.q if rem >= self.q else rem


@lru_cache(maxsize=1024)
def modulus_info(q: int) -> Modulus:
    """Validate q as an NTT modulus and return its constants (cached)."""
    q = _check_int(q, "modulus")
    if q != GOLDILOCKS and q >= 2**GENERIC_MAX_BITS:
        raise ValueError(f"modulus {q} is too large: generic moduli must be < 2**62 (or be hb.GOLDILOCKS)")
    if not is_prime(q):
        raise ValueError(f"modulus {q} is not prime")
    bits = q.bit_length()
    if q == GOLDILOCKS:
        kind = KIND_GOLDILOCKS
    elif q < 2**32:
        kind = KIND_U32
    else:
        kind = KIND_GENERIC
    mu = (1 << (2 * bits + 1)) // q
    q_inv_neg = (-pow(q, -1, 2**64)) % 2**64 if q > 2 else 0
    return Modulus(q, bits, kind, mu, q_inv_neg, pow(2, 128, q))


# ---------------------------------------------------------------------------------------------
# Prime fields of zk-SNARK provers: 256-bit scalar fields stored as four 64-bit limbs.
# ---------------------------------------------------------------------------------------------

LIMB_BITS = 64
_LIMB_MASK = (1 << LIMB_BITS) - 1


@lru_cache(maxsize=256)
def _field_root(p: int, generator: int, n: int) -> int:
    """generator^((p-1)/n) mod p, cached: every field transform asks for its root (a 256-bit power)."""
    return pow(generator, (p - 1) // n, p)


@dataclass(frozen=True)
class PrimeField:
    """A prime field F_p with a fixed multiplicative generator, as zk provers name them.

    Elements are stored as `limbs` little-endian 64-bit words (arrays of shape (..., limbs) of
    uint64, standard form, each element < p). Fields with limbs == 1 (Goldilocks, BabyBear) keep
    the one-word layout of the integer API: arrays (..., n) of uint64 (uint32 for BabyBear).
    Montgomery constants, for R = 2^(64 * limbs): R mod p, R2 = R^2 mod p, p_inv_neg = -p^-1 mod 2^64.
    """

    name: str
    p: int
    generator: int
    two_adicity: int
    limbs: int = 4
    R: int = field(init=False, repr=False)
    R2: int = field(init=False, repr=False)
    p_inv_neg: int = field(init=False, repr=False)

    def __post_init__(self):
        if self.p.bit_length() > LIMB_BITS * self.limbs:
            raise ValueError(f"p has {self.p.bit_length()} bits, more than {self.limbs} limbs of 64 bits hold")
        if not is_prime(self.p):
            raise ValueError(f"{self.name}: p = {self.p} is not prime")
        if self.two_adicity != two_adicity(self.p):
            raise ValueError(f"{self.name}: two_adicity {self.two_adicity} is wrong, p - 1 has 2^{two_adicity(self.p)}")
        if pow(self.generator, (self.p - 1) // 2, self.p) != self.p - 1:  # else no root of order 2^two_adicity
            raise ValueError(
                f"{self.name}: generator {self.generator} is a square mod p, so it generates no "
                "root of unity of the full two-adic order"
            )
        r = 1 << (LIMB_BITS * self.limbs)
        object.__setattr__(self, "R", r % self.p)
        object.__setattr__(self, "R2", r * r % self.p)
        object.__setattr__(self, "p_inv_neg", (-pow(self.p, -1, 1 << LIMB_BITS)) % (1 << LIMB_BITS))

    def __str__(self) -> str:
        return self.name

    @property
    def bits(self) -> int:
        return self.p.bit_length()

    @property
    def p_limbs(self) -> tuple[int, ...]:
        """p as little-endian 64-bit limbs."""
        return int_to_limbs(self.p, self.limbs)

    @property
    def R2_limbs(self) -> tuple[int, ...]:
        return int_to_limbs(self.R2, self.limbs)

    def root_of_unity(self, n: int) -> int:
        """generator^((p-1)/n): a primitive n-th root of unity, n a power of two <= 2^two_adicity."""
        n = _check_int(n, "n")
        if not is_power_of_two(n) or n > 1 << self.two_adicity:
            raise ValueError(
                f"n must be a power of two <= 2**{self.two_adicity} (the two-adicity of {self.name}), got {n}"
            )
        return _field_root(self.p, self.generator, n)

    # -- conversions (host side, Python ints; the backends convert arrays in bulk) ---------------
    def to_limbs(self, values):
        """Python ints (an int, nested lists or an integer/object array), each 0 <= v < p ->
        uint64 array of shape (..., limbs), little-endian limbs, standard form."""
        obj = np.array(values, dtype=object)
        flat = obj.reshape(-1).tolist()
        for v in flat:
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise TypeError(f"values must be integers, got {type(v).__name__} {v!r}")
        ints = [v.__index__() for v in flat]
        if ints and (min(ints) < 0 or max(ints) >= self.p):
            raise ValueError(f"values must be elements of {self.name}: 0 <= v < p")
        width = 8 * self.limbs  # little-endian bytes = little-endian 64-bit limbs
        raw = b"".join(v.to_bytes(width, "little") for v in ints)
        words = np.frombuffer(raw, dtype="<u8").astype(np.uint64)
        return words.reshape(obj.shape + (self.limbs,))

    def from_limbs(self, arr):
        """uint64 array (..., limbs) -> object array (...) of Python ints (a Python int for one element)."""
        a = np.asarray(arr)
        if a.ndim < 1 or a.shape[-1] != self.limbs:
            raise ValueError(f"arr must have a last axis of {self.limbs} limbs, got shape {a.shape}")
        raw = np.ascontiguousarray(a, dtype="<u8").tobytes()
        width = 8 * self.limbs
        values = [int.from_bytes(raw[i : i + width], "little") for i in range(0, len(raw), width)]
        if a.ndim == 1:
            return values[0]
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(a.shape[:-1])

    def to_montgomery(self, arr):
        """Standard-form limb array -> Montgomery form (a * R mod p), same shape."""
        return self._map_ints(arr, lambda v: v * self.R % self.p)

    def from_montgomery(self, arr):
        """Montgomery-form limb array -> standard form (a * R^-1 mod p), same shape."""
        r_inv = pow(self.R, -1, self.p)
        return self._map_ints(arr, lambda v: v * r_inv % self.p)

    def _map_ints(self, arr, fn):
        ints = self.from_limbs(arr)
        if isinstance(ints, int):
            return self.to_limbs(fn(ints))
        return self.to_limbs(np.frompyfunc(fn, 1, 1)(ints))


def int_to_limbs(value: int, limbs: int) -> tuple[int, ...]:
    """The little-endian 64-bit limbs of the non-negative int value (which must fit)."""
    if value < 0 or value.bit_length() > LIMB_BITS * limbs:
        raise ValueError(f"{value} does not fit {limbs} limbs of 64 bits")
    return tuple((value >> (LIMB_BITS * k)) & _LIMB_MASK for k in range(limbs))


BN254_FR = PrimeField("bn254", 21888242871839275222246405745257275088548364400416034343698204186575808495617, 5, 28)
"""The scalar field of BN254 (alt_bn128): 254 bits, generator 5, two-adicity 28."""

BLS12_381_FR = PrimeField("bls12-381", 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001, 7, 32)
"""The scalar field of BLS12-381: 255 bits, generator 7, two-adicity 32."""

BLS12_377_FR = PrimeField("bls12-377", 0x12AB655E9A2CA55660B44D1E5C37B00159AA76FED00000010A11800000000001, 22, 47)
"""The scalar field of BLS12-377: 253 bits, generator 22, two-adicity 47."""

GOLDILOCKS_FIELD = PrimeField("goldilocks", GOLDILOCKS, 7, 32, limbs=1)
"""Goldilocks as a PrimeField (one 64-bit word per element; generator 7 = primitive_root)."""

BABYBEAR_FIELD = PrimeField("babybear", BABYBEAR, 31, 27, limbs=1)
"""BabyBear as a PrimeField (one word per element; generator 31 = primitive_root)."""

NAMED_FIELDS = {f.name: f for f in (BN254_FR, BLS12_381_FR, BLS12_377_FR, GOLDILOCKS_FIELD, BABYBEAR_FIELD)}


def field_by_name(name: str) -> PrimeField:
    """The named field: "bn254", "bls12-381", "bls12-377", "goldilocks" or "babybear"
    (case-insensitive; "_" may stand for "-")."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    key = name.strip().lower().replace("_", "-")
    key = {"bn254-fr": "bn254", "bls12-381-fr": "bls12-381", "bls12-377-fr": "bls12-377"}.get(key, key)
    if key not in NAMED_FIELDS:
        raise ValueError(f"name must be one of {', '.join(map(repr, NAMED_FIELDS))}, got {name!r}")
    return NAMED_FIELDS[key]
