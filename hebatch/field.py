"""Exact host-side number theory with Python ints.

This module is the one home for everything the transforms and kernels need to know about a
modulus: primality, NTT-friendly primes, primitive roots and roots of unity, and the
precomputed reduction constants (Barrett after Shivdikar et al., Shoup, Montgomery, Goldilocks).
Nothing here touches arrays; the backends turn these integers into tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

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
        raise ValueError(
            f"only {len(primes)} primes below 2**{bits} are 1 mod 2n = {step}; asked for {count}"
        )
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


def bit_reverse(i: int, bits: int) -> int:
    return int(format(i, f"0{bits}b")[::-1], 2) if bits else 0
