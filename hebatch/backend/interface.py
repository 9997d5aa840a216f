"""The backend interface: the three engines the transforms and schemes layers may ask of a device.

WordNTT: transforms of 64-bit (or 32-bit) words. RnsOps: the RNS arithmetic of BFV. FieldNTT:
transforms over 256-bit prime fields. `hebatch.backend.get` hands out one of each per device.

WordNTT:

Arrays reaching a backend are already validated and shaped (batch, limbs, n) with dtype uint64;
`plan` is an `hebatch.ntt.plan.NTTPlan` (moduli, roots, algorithm, tables). A backend never
modifies its inputs unless it is handed them as `out`.

Order: `natural=False` lets a forward transform leave its output in the backend's internal order
(bit-reversed for radix-2, transposed blocks for 4-step) and lets the inverse take that order back,
so NTT -> pointwise -> INTT pipelines skip permutations. Only pointwise work may happen in between.
"""

from __future__ import annotations

import abc
import math
from typing import Any

import numpy as np


class WordNTT(abc.ABC):
    name: str
    xp: Any = None  # the array module (numpy, cupy)

    def work_dtype(self, dtype, moduli):
        """The dtype the backend computes in for data of `dtype` (inputs are converted to it)."""
        return np.dtype(np.uint64)

    def writeable(self, x) -> bool:
        return True

    def shares_memory(self, a, b) -> bool:
        return bool(self.xp.shares_memory(a, b))

    def check_same_device(self, a, b) -> None:  # noqa: B027 (one device: nothing to check unless overridden)
        """Raise ValueError if a and b live on different devices."""

    def broadcast_to(self, x, shape):
        return self.xp.broadcast_to(x, shape)

    def twiddle_grid_mul(
        self, x, modulus: int, root: int, row0: int, col0: int, row_step: int = 1, col_step: int = 1, *, out=None
    ):
        """The twiddle step of a 4-step NTT on one block of its n1 x n2 matrix.

        Returns y with, for every 0 <= i < R and 0 <= j < C,
            y[i, j] = x[i, j] * root ** ((row0 + row_step * i) * (col0 + col_step * j))  mod modulus
        (row_step = col_step = 1: the entry of the whole matrix at (row0 + i, col0 + j) times
        root^(row * col); a step of 2 with an odd start gives the odd exponents of negacyclic twiddles).

        x: 2-D (R, C) uint64 array of this backend, entries < modulus, any strides. modulus: an int,
        a prime < 2**62 or GOLDILOCKS. root: an int with 0 < root < modulus (its order is not
        assumed). row0, col0, row_step, col_step: Python ints >= 0; the exponents are exact integers
        (they may pass 2**64; reducing them mod modulus - 1 is allowed). All arguments are already
        validated by `hebatch.ntt.twiddle_grid`. Exact: bit for bit the same residues on every backend.
        Powers come from per-row bases and exponent splitting (tables of about R * sqrt(C) entries),
        never from a table of the whole transform size.
        out: None for a new array, or an (R, C) uint64 array of this backend to write into (it may be
        x itself). Returns the result; x is not modified unless it is `out`. On a GPU the work runs on
        the current stream.
        """
        raise NotImplementedError(f"the {self.name} backend has no twiddle_grid_mul")

    @abc.abstractmethod
    def owns(self, x) -> bool:
        """True if x is an array of this backend's type."""

    @abc.abstractmethod
    def forward(self, x, plan, *, natural: bool = True, out=None):
        """NTT of every (batch, limb) row of x."""

    @abc.abstractmethod
    def inverse(self, y, plan, *, natural: bool = True, out=None):
        """Exact inverse of `forward` (scaled by n^-1)."""

    @abc.abstractmethod
    def pointwise_mul(self, a, b, plan, *, out=None):
        """a * b mod q per limb; a and b broadcast along the batch axis."""

    def inverse_product(self, a, b, plan):
        """inverse(a * b) of two spectra in the internal order (a backend may fuse the product)."""
        return self.inverse(self.pointwise_mul(a, b, plan), plan, natural=False)

    def inverse_product_natural(self, a, b, plan):
        """inverse(a * b) of two spectra in natural order, b's batch axis broadcast (a backend may fuse the
        product into the transform)."""
        return self.inverse(self.pointwise_mul(a, b, plan), plan)

    def forward_spread(self, x, plan):
        """`forward` of each row of x (batch, n) on every limb of the plan: (batch, limbs, n), row (b, l) the
        transform over q_l of x[b] mod q_l. Entries of x are below the largest modulus. Here the RNS
        engine's reduction makes the spread copy first; a backend may feed the entries to the transform
        unreduced instead."""
        from . import get

        return self.forward(get(self.name).rns.reduce(x[:, None, :], plan.moduli), plan)


class FieldNTT(abc.ABC):
    """Transforms over multi-limb prime fields (256-bit scalar fields of zk provers).

    Arrays are (batch, n, limbs) uint64 in standard form; arguments are already validated by the
    transforms layer; orders are "natural" or "bitrev". `plan` is the launch plan of the transform's
    batch and size (`hebatch.ntt.launch.field_plan`), which an engine with launches needs (the GPU
    engine) and others ignore. Both implementations agree bit for bit."""

    @abc.abstractmethod
    def forward(self, x, field, root: int, input_order="natural", output_order="natural", *, plan=None):
        """X[k] = sum_j x[j] root^(jk)."""

    @abc.abstractmethod
    def inverse(self, y, field, root: int, input_order="natural", output_order="natural", *, plan=None):
        """The exact inverse of forward (root^-1, times n^-1)."""

    @abc.abstractmethod
    def scale_by_powers(self, x, field, base: int):
        """x[:, j] * base^j (coset shifts)."""

    @abc.abstractmethod
    def twiddle_grid(self, x, field, root: int, row0: int, col0: int, row_step: int = 1, col_step: int = 1):
        """The 4-step twiddles of one block, (rows, cols, limbs):
        x[i, j] * root^((row0 + row_step i)(col0 + col_step j))."""


def check_digit_limbs(digit_limbs, limbs: int) -> int:
    """digit_limbs as an int from 1 to `limbs`, or a ValueError naming it."""
    if isinstance(digit_limbs, bool) or not isinstance(digit_limbs, (int, np.integer)) or not 1 <= digit_limbs <= limbs:
        raise ValueError(f"digit_limbs must be an int from 1 to {limbs} (the limbs of q), got {digit_limbs!r}")
    return int(digit_limbs)


class RnsOps(abc.ABC):
    """Element-wise RNS arithmetic, base conversion, automorphisms and secure sampling (the ring NTTs
    belong to the transforms layer: hebatch.ntt): the primitives the BFV scheme is built on.

    Arrays are uint64 of shape (..., L, n): batch axes, RNS limbs, coefficients. `moduli` is a tuple of
    Python ints, odd primes < 2**62, one per limb of the result. Inputs are reduced unless a method says
    otherwise; an operand whose limb axis has size 1 is used for every limb. Results are new arrays.
    Both implementations give bit-identical results."""

    xp: Any = None  # numpy or cupy

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

    def digit_convert(self, x, src, dst, digit_limbs: int):
        """Key-switching digits of `digit_limbs` limbs: x (..., L, n) over src -> (..., D, len(dst), n),
        D = ceil(L / digit_limbs), digit k the base_convert of limbs k digit_limbs .. min((k + 1) digit_limbs,
        L) - 1 (their CRT value plus a multiple of their product, below digit_limbs times it) to dst."""
        src, a = tuple(src), check_digit_limbs(digit_limbs, len(src))
        if x.shape[-2] != len(src):
            raise ValueError(f"x has {x.shape[-2]} limbs but src has {len(src)} moduli")
        parts = [self.base_convert(x[..., k : k + a, :], src[k : k + a], dst) for k in range(0, len(src), a)]
        return self.xp.stack(parts, axis=-3)

    def automorphism_add(self, x, galois_elt, moduli, acc):
        """acc += x(X^g) on coefficients, written into acc (..., L, n) in place (a view of a larger array
        included); returns acc."""
        acc[...] = self.add(acc, self.automorphism(x, galois_elt, moduli, ntt_form=False), moduli)
        return acc

    def mod_down(self, x, moduli, special, add=None):
        """Division by the special prime with rounding: x (..., L + 1, n) over moduli + (special,) ->
        (x_i - [x_p]_centered) * special^-1 mod q_i, shape (..., L, n); plus `add` (..., L, n) if given."""
        moduli = tuple(moduli)
        count = len(moduli)
        lifted = self.centered_lift(x[..., count:, :], special, moduli)
        out = self.mul_scalar(
            self.sub(x[..., :count, :], lifted, moduli), [pow(special, -1, q) for q in moduli], moduli
        )
        return out if add is None else self.add(out, add, moduli)

    def mod_down_rotated(self, x, moduli, special, c0, galois_elt):
        """The last step of a rotation: mod_down of a key-switched pair x (..., 2, L + 1, n) with c0(X^g) (c0
        (..., L, n) in coefficient form, a view such as c[..., 0, :, :] included) added to its first part:
        (mod_down(x_0) + c0(X^g), mod_down(x_1)), shape (..., 2, L, n)."""
        out = self.mod_down(x, moduli, special)
        self.automorphism_add(c0, galois_elt, moduli, out[..., 0, :, :])
        return out

    def tensor(self, a, b, moduli):
        """Tensor product of 2-component ciphertexts in NTT form: a, b (..., 2, L, n) ->
        (..., 3, L, n) = (a0 b0, a0 b1 + a1 b0, a1 b1)."""
        a0, a1, b0, b1 = a[..., 0, :, :], a[..., 1, :, :], b[..., 0, :, :], b[..., 1, :, :]
        return self.xp.stack(
            [
                self.mul(a0, b0, moduli),
                self.mul_add(a0, b1, self.mul(a1, b0, moduli), moduli),
                self.mul(a1, b1, moduli),
            ],
            axis=-3,
        )

    def scale_round(self, x, q, t, gamma, add=None):
        """BFV decryption's scale and round: round(t v / Q) mod t for v = x (+ add) over q, shape (..., n)
        from x (..., len(q), n), by fast base conversion of t gamma v to {t, gamma} with gamma's
        correction (exact while |t v mod Q| stays below Q / 2 less the conversion's error, i.e. while the
        noise budget is positive); gamma: a prime outside q and t."""
        q = tuple(q)
        t, gamma = int(t), int(gamma)
        big_q = math.prod(q)
        if add is not None:
            x = self.add(x, add, q)
        y = self.base_convert(self.mul_scalar(x, [t * gamma] * len(q), q), q, (t, gamma))
        z = self.mul_scalar(y, [(-pow(big_q, -1, m)) % m for m in (t, gamma)], (t, gamma))
        g_lift = self.centered_lift(z[..., 1:2, :], gamma, (t,))
        m = self.mul_scalar(self.sub(z[..., 0:1, :], g_lift, (t,)), [pow(gamma, -1, t)], (t,))
        return self.xp.ascontiguousarray(m[..., 0, :])

    def behz_extend(self, x, q, bsk, m_tilde, out=None):
        """BEHZ exact extension of x (..., len(q), n) from base q to B_sk: FastBConv of m~ x to B_sk and
        m~, then the small Montgomery reduction by m~ (removes FastBConv's multiple of Q). `out`: an array
        (..., len(bsk), n) to write the result into, such as the B_sk rows of a larger (..., q + B_sk, n)
        array (then returned); backends that write it in place need each item's rows contiguous."""
        q, bsk = tuple(q), tuple(bsk)
        big_q = math.prod(q)
        y = self.base_convert(self.mul_scalar(x, [m_tilde] * len(q), q), q, bsk + (m_tilde,))
        r = self.mul_scalar(y[..., -1:, :], [(-pow(big_q, -1, m_tilde)) % m_tilde], (m_tilde,))
        r_lift = self.centered_lift(r, m_tilde, bsk)
        z = self.add(y[..., :-1, :], self.mul_scalar(r_lift, [big_q % b for b in bsk], bsk), bsk)
        result = self.mul_scalar(z, [pow(m_tilde, -1, b) for b in bsk], bsk)
        if out is None:
            return result
        if tuple(out.shape) != tuple(result.shape):
            raise ValueError(f"out must have shape {tuple(result.shape)}, got {tuple(out.shape)}")
        out[...] = result
        return out

    def behz_extend_stack(self, parts, q, bsk, m_tilde):
        """Arrays (..., k_i, len(q), n) over q, batch axes broadcast, stacked along the component axis with
        each item's BEHZ extension to B_sk below it: (..., sum k_i, len(q) + len(bsk), n), the q rows holding
        the parts. Here each part is copied into place and the extension written into its rows."""
        q, bsk = tuple(q), tuple(bsk)
        limbs = len(q)
        lead = np.broadcast_shapes(*(p.shape[:-3] for p in parts))
        n = parts[0].shape[-1]
        full = self.xp.empty(lead + (sum(p.shape[-3] for p in parts), limbs + len(bsk), n), dtype=np.uint64)
        start = 0
        for p in parts:
            full[..., start : start + p.shape[-3], :limbs, :] = p
            start += p.shape[-3]
        self.behz_extend(full[..., :limbs, :], q, bsk, m_tilde, out=full[..., limbs:, :])
        return full

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

    def behz_scale_down(self, d_q, d_bsk, t, q, base_b, m_sk):
        """round-ish(t d / Q) over q from d given over q and over B_sk = B u {m_sk}: the fast floor into B_sk,
        then Shenoy-Kumaresan back to q (behz_sk of behz_floor; a backend may take both in one pass, without
        the B_sk values in memory between them)."""
        bsk = tuple(base_b) + (int(m_sk),)
        return self.behz_sk(self.behz_floor(d_q, d_bsk, t, q, bsk), base_b, m_sk, q)


__all__ = ["FieldNTT", "RnsOps", "WordNTT"]
