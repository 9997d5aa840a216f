"""The RNS primitives the BFV scheme is built on: one abstract interface, one implementation per backend.

Arrays are uint64 of shape (..., L, n): batch axes, RNS limbs, coefficients. `moduli` is a tuple of
Python ints, odd primes < 2**62, one per limb of the result. Inputs are reduced unless a method says
otherwise; an operand whose limb axis has size 1 is used for every limb. Results are new arrays.
Both implementations give bit-identical results.
"""

from __future__ import annotations

import abc
import math


class RnsOps(abc.ABC):
    """Element-wise RNS arithmetic, base conversion, automorphisms and secure sampling (the ring NTTs
    belong to the transforms layer: hebatch.ntt)."""

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
    def random_uniform(self, shape, moduli):
        """Uniform residues of shape (..., L, n) from a cryptographically secure source."""

    @abc.abstractmethod
    def random_ternary(self, shape):
        """int64 values uniform in {-1, 0, 1} from a cryptographically secure source."""

    @abc.abstractmethod
    def random_gaussian(self, shape, sigma):
        """int64 rounded continuous Gaussian of deviation sigma, tails cut at 6 sigma, secure source."""

    # -- fused steps: generic compositions of the primitives above; a backend may override each with
    # -- fewer launches (CupyRnsOps does), giving the same residues.
    def inner_product(self, x, key, moduli):
        """Key-switching inner product over the digit axis: x (..., K, L, n), key (K, C, L, n) ->
        (..., C, L, n) with out[..., c, :, :] = sum_k x[..., k, :, :] * key[k, c] mod q_i."""
        acc = None
        for k in range(x.shape[-3]):
            term = self.mul(x[..., k, None, :, :], key[k], moduli)
            acc = term if acc is None else self.add(acc, term, moduli)
        return acc

    def mod_down(self, x, moduli, special, add=None):
        """Division by the special prime with rounding: x (..., L + 1, n) over moduli + (special,) ->
        (x_i - [x_p]_centered) * special^-1 mod q_i, shape (..., L, n); plus `add` (..., L, n) if given."""
        moduli = tuple(moduli)
        count = len(moduli)
        lifted = self.centered_lift(x[..., count:, :], special, moduli)
        out = self.mul_scalar(self.sub(x[..., :count, :], lifted, moduli), [pow(special, -1, q) for q in moduli],
                              moduli)
        return out if add is None else self.add(out, add, moduli)

    def tensor(self, a, b, moduli):
        """Tensor product of 2-component ciphertexts in NTT form: a, b (..., 2, L, n) ->
        (..., 3, L, n) = (a0 b0, a0 b1 + a1 b0, a1 b1)."""
        a0, a1, b0, b1 = a[..., 0, :, :], a[..., 1, :, :], b[..., 0, :, :], b[..., 1, :, :]
        return self.xp.stack([self.mul(a0, b0, moduli), self.mul_add(a0, b1, self.mul(a1, b0, moduli), moduli),
                              self.mul(a1, b1, moduli)], axis=-3)

    def behz_extend(self, x, q, bsk, m_tilde):
        """BEHZ exact extension of x (..., len(q), n) from base q to B_sk: FastBConv of m~ x to B_sk and
        m~, then the small Montgomery reduction by m~ (removes FastBConv's multiple of Q)."""
        q, bsk = tuple(q), tuple(bsk)
        big_q = math.prod(q)
        y = self.base_convert(self.mul_scalar(x, [m_tilde] * len(q), q), q, bsk + (m_tilde,))
        r = self.mul_scalar(y[..., -1:, :], [(-pow(big_q, -1, m_tilde)) % m_tilde], (m_tilde,))
        r_lift = self.centered_lift(r, m_tilde, bsk)
        z = self.add(y[..., :-1, :], self.mul_scalar(r_lift, [big_q % b for b in bsk], bsk), bsk)
        return self.mul_scalar(z, [pow(m_tilde, -1, b) for b in bsk], bsk)

    def behz_floor(self, d_q, d_bsk, t, q, bsk):
        """BEHZ fast floor of t d / Q into B_sk, d given over q and over B_sk:
        (t d_bsk - FastBConv(t d_q, q -> B_sk)) * Q^-1 mod b_j."""
        q, bsk = tuple(q), tuple(bsk)
        big_q = math.prod(q)
        td_q = self.mul_scalar(d_q, [t] * len(q), q)
        diff = self.sub(self.mul_scalar(d_bsk, [t] * len(bsk), bsk), self.base_convert(td_q, q, bsk), bsk)
        return self.mul_scalar(diff, [pow(big_q, -1, b) for b in bsk], bsk)

    def behz_sk(self, x, base_b, m_sk, q):
        """Shenoy-Kumaresan conversion of x (..., len(base_b) + 1, n) over B u {m_sk} to base q: FastBConv
        to q and m_sk, its multiple of M_B found through m_sk (centered) and subtracted."""
        base_b, q = tuple(base_b), tuple(q)
        m_b = math.prod(base_b)
        conv = self.base_convert(x[..., :-1, :], base_b, q + (m_sk,))
        alpha = self.mul_scalar(self.sub(conv[..., -1:, :], x[..., -1:, :], (m_sk,)), [pow(m_b, -1, m_sk)], (m_sk,))
        alpha_q = self.centered_lift(alpha, m_sk, q)
        return self.sub(conv[..., :-1, :], self.mul_scalar(alpha_q, [m_b % p for p in q], q), q)


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
