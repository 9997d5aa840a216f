"""The RNS primitives the BFV scheme is built on: one abstract interface, one implementation per backend.

Arrays are uint64 of shape (..., L, n): batch axes, RNS limbs, coefficients. `moduli` is a tuple of
Python ints, odd primes < 2**62, one per limb of the result. Inputs are reduced unless a method says
otherwise; an operand whose limb axis has size 1 is used for every limb. Results are new arrays.
Both implementations give bit-identical results.
"""

from __future__ import annotations

import abc


class RnsOps(abc.ABC):
    """Element-wise RNS arithmetic, base conversion, automorphisms, NTTs and secure sampling."""

    xp = None  # numpy or cupy

    @abc.abstractmethod
    def asarray(self, x):
        """A NumPy array (or anything array-like) moved to this backend."""

    @abc.abstractmethod
    def to_host(self, x):
        """A backend array copied to a NumPy array."""

    @abc.abstractmethod
    def add(self, a, b, moduli):
        """(a + b) mod q_i."""

    @abc.abstractmethod
    def sub(self, a, b, moduli):
        """(a - b) mod q_i."""

    @abc.abstractmethod
    def neg(self, a, moduli):
        """(-a) mod q_i."""

    @abc.abstractmethod
    def mul(self, a, b, moduli):
        """a * b mod q_i, pointwise, from the full 128-bit product."""

    @abc.abstractmethod
    def mul_scalar(self, a, scalars, moduli):
        """a * s_i mod q_i; scalars: one Python int per limb, of any size (reduced first)."""

    @abc.abstractmethod
    def mul_add(self, a, b, c, moduli):
        """(a * b + c) mod q_i."""

    @abc.abstractmethod
    def reduce(self, x, moduli):
        """x: any uint64 values with a limb axis of size 1 -> x mod q_i for every limb i."""

    @abc.abstractmethod
    def from_signed(self, x, moduli):
        """x: int64 small signed values (|x| < 2**62), shape (..., n) or (..., 1, n) -> (..., L, n) residues."""

    @abc.abstractmethod
    def base_convert(self, x, src, dst):
        """Fast base conversion (BEHZ FastBConv) of x (..., len(src), n) from base src to base dst:
        y_j = sum_i [x_i (Q/q_i)^-1]_{q_i} (Q/q_i) mod p_j, Q = prod(src). Equals x + a Q mod p_j for
        some 0 <= a < len(src); no correction."""

    @abc.abstractmethod
    def centered_lift(self, x, m, moduli):
        """x: (..., 1, n) values in [0, m), any modulus m < 2**62; v = x if x <= m // 2 else x - m;
        returns v mod q_i for every limb (..., L, n)."""

    @abc.abstractmethod
    def automorphism(self, x, galois_elt, moduli, ntt_form):
        """x(X) -> x(X^g) in Z_q[X]/(X^n + 1), g odd < 2n, on coefficients (ntt_form=False) or on the
        natural-order negacyclic NTT values of hb.ntt (ntt_form=True)."""

    @abc.abstractmethod
    def ntt(self, x, moduli):
        """Negacyclic NTT of every limb, natural order (hb.ntt)."""

    @abc.abstractmethod
    def intt(self, x, moduli):
        """Exact inverse of ntt."""

    @abc.abstractmethod
    def random_uniform(self, shape, moduli):
        """Uniform residues of shape (..., L, n) from a cryptographically secure source."""

    @abc.abstractmethod
    def random_ternary(self, shape):
        """int64 values uniform in {-1, 0, 1} from a cryptographically secure source."""

    @abc.abstractmethod
    def random_gaussian(self, shape, sigma):
        """int64 rounded continuous Gaussian of deviation sigma, tails cut at 6 sigma, secure source."""


def automorphism_tables(n: int, galois_elt: int, ntt_form: bool):
    """Gather indices (and, on coefficients, negation flags) of x -> x(X^g), as NumPy arrays.

    Coefficients: out[(i g mod 2n) mod n] = +-x[i], negated when i g mod 2n >= n.
    NTT values X[k] = x(psi^(2k+1)): out[k] = X[k'] with 2k'+1 = g (2k+1) mod 2n."""
    import numpy as np

    if galois_elt % 2 == 0 or not 0 < galois_elt < 2 * n:
        raise ValueError(f"galois_elt must be odd and in (0, 2n) = (0, {2 * n}), got {galois_elt}")
    i = np.arange(n, dtype=np.int64)
    if ntt_form:
        src = ((galois_elt * (2 * i + 1)) % (2 * n) - 1) // 2
        return src, None
    k = (i * galois_elt) % (2 * n)
    dest = k % n
    src = np.empty(n, dtype=np.int64)
    negate = np.empty(n, dtype=bool)
    src[dest] = i
    negate[dest] = k >= n
    return src, negate


_INSTANCES: dict[str, RnsOps] = {}


def rns_ops(xp_or_name) -> RnsOps:
    """The (cached) RnsOps of "cpu" or "gpu", or of the array module numpy / cupy."""
    name = xp_or_name if isinstance(xp_or_name, str) else getattr(xp_or_name, "__name__", "")
    name = {"numpy": "cpu", "cupy": "gpu"}.get(name, name)
    if name not in ("cpu", "gpu"):
        raise ValueError(f"rns_ops needs 'cpu', 'gpu', numpy or cupy, got {xp_or_name!r}")
    if name not in _INSTANCES:
        if name == "cpu":
            from .rns_cpu import NumpyRnsOps

            _INSTANCES[name] = NumpyRnsOps()
        else:
            from .gpu_rns import CupyRnsOps  # imported lazily: CPU-only machines never import CuPy

            _INSTANCES[name] = CupyRnsOps()
    return _INSTANCES[name]


__all__ = ["RnsOps", "rns_ops", "automorphism_tables"]
