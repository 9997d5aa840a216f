"""The BFV scheme over a batch axis, on any RnsOps backend.

Ciphertexts live in coefficient form over the RNS limbs of q; keys in NTT form over q and the
special prime P. Every step works on whole batches (all items, limbs and components in one call).
"""

from __future__ import annotations

import math
from functools import cached_property, partial

import numpy as np

from ..field import ntt_primes
from ..rlwe import encryption, noise, ring, switching
from ..rlwe.context import SchemeContext
from .objects import Ciphertext, Keys, Plaintext, PublicKey, RelinKey, SecretKey
from .params import Params


class Context(SchemeContext):
    """BFV on one backend: key generation, SIMD encoding, encryption, homomorphic arithmetic.

    params: a bfv.Params. backend: "cpu" (NumPy), "gpu" (CuPy) or "auto" (the GPU if CuPy and a GPU
    work, else the CPU). Every computation goes through the backend's RnsOps.
    graphs: on the GPU, encryption, multiply, relinearize, the rotations and decryption of small batches (up to
    32 MiB of operands and 256 MiB of key) are recorded as CUDA graphs on their second call with the same shapes and
    replayed from then on: one launch instead of dozens (hebatch.backend.graphs). Keys must not be
    modified in place while a context uses them. False launches every kernel from Python.
    """

    scheme = "bfv"
    params_type = Params
    plaintext_type = Plaintext
    ciphertext_type = Ciphertext
    keys_type = Keys

    def __init__(self, params: Params, backend: str = "auto", graphs: bool = True):
        super().__init__(params, backend)
        self.big_q = math.prod(self.q)
        if not isinstance(graphs, bool):
            raise TypeError(f"graphs must be True or False, got {graphs!r}")
        self.graphs = None  # a GraphReplayer, or None: every launch from Python
        if graphs and self.backend == "gpu":
            from ..backend.graphs import GraphReplayer

            self.graphs = GraphReplayer()

    # -- constants ---------------------------------------------------------------------------
    @cached_property
    def _behz(self):
        """BEHZ bases: B (enough 60-bit NTT primes that B * m_sk exceeds 2^8 n t q), m_sk, m_tilde.

        Below 2^60, so that the transforms over q and B_sk run the lazier butterflies of such moduli
        (hebatch.backend.kernels.LAZY_STAGES_MAX_MODULUS) as those over q alone do."""
        n, t = self.n, self.t
        need_bits = self.big_q.bit_length() + t.bit_length() + n.bit_length() + 8
        count = need_bits // 59 + 2  # B plus m_sk, each above 2^59: one prime more than the bound needs
        avoid = set(self.qp) | {t}
        primes = [p for p in ntt_primes(60, n, count + len(avoid)) if p not in avoid][:count]
        bsk = tuple(primes)
        m_tilde = ring.prime_below(2**32, avoid | set(bsk))
        return bsk[:-1], bsk[-1], bsk, m_tilde

    @cached_property
    def _gamma(self) -> int:
        """The extra modulus of the scale-and-round decryption (a 61-bit prime outside q and t)."""
        return ring.prime_below(2**61, set(self.qp) | {self.t})

    # -- encoding ----------------------------------------------------------------------------
    def _scaled(self, m):
        """round(q m / t) over the limbs of q, for m (..., n) in [0, t): Delta m + round((q mod t) m / t)."""
        t, q = self.t, self.q
        delta, rem = divmod(self.big_q, t)
        m1 = m[..., None, :]
        correction = (m1 * np.uint64(rem) + np.uint64(t // 2)) // np.uint64(t)  # < t, exact (t < 2^31)
        return self.ops.add(self.ops.mul_scalar(m1, [delta] * self.L, q), correction, q)

    def _plain_term(self, m, q):
        """round(q m / t): what a plaintext adds to c0 (BFV scales it by Delta)."""
        return self._scaled(m)

    # -- encryption --------------------------------------------------------------------------
    # Encryptions are recorded as CUDA graphs like the other operations: their sampling runs on the device
    # under each graph's own sampler, so every replay draws fresh randomness (hebatch.backend.graphs).
    def encrypt(self, public: PublicKey, pt: Plaintext) -> Ciphertext:
        """Public-key encryption of every plaintext of the batch: (pk0 u + e0 + round(q m / t), pk1 u + e1)."""
        pk = self._data(public, PublicKey, "public")
        m = self._data(pt, Plaintext, "pt")
        c = self._replayed(("encrypt",), self._encrypted, (m,), (pk,), (public,), samples=True)
        return self._ct(c, public.key_id)

    def _encrypted(self, m, pk):
        ops, q = self.ops, self.q
        c = encryption.public_zero(ops, q, pk, tuple(m.shape[:-1]))
        c[..., 0, :, :] = ops.add(c[..., 0, :, :], self._scaled(m), q)
        return c

    def encrypt_symmetric(self, secret: SecretKey, pt: Plaintext) -> Ciphertext:
        """Secret-key encryption: (-(a s) + e + round(q m / t), a), a uniform."""
        s = self._data(secret, SecretKey, "secret")
        m = self._data(pt, Plaintext, "pt")
        c = self._replayed(("encrypt_symmetric",), self._encrypted_symmetric, (m,), (s,), (secret,), samples=True)
        return self._ct(c, secret.key_id)

    def _encrypted_symmetric(self, m, s):
        return encryption.symmetric(self.ops, self.q, s[: self.L], tuple(m.shape[:-1]), partial(self._scaled, m))

    def decrypt(self, secret: SecretKey, ct: Ciphertext, check: bool = False) -> Plaintext:
        """round(t (c0 + c1 s + ...) / q) mod t for every item, by SEAL's scale-and-round with base
        conversion to {t, gamma} (exact while the noise budget is positive).

        An item whose noise budget is spent decrypts to garbage, with nothing to tell it apart.
        check=True measures every item's budget exactly (as noise_budget: host big-integer work, about
        the cost of noise_budget) and raises ValueError saying how many items have none left; the
        default (False) skips that and costs only the decryption."""
        if not isinstance(check, (bool, np.bool_)):
            raise TypeError(f"check must be True or False, got {check!r}")
        if check:
            x = self._phase(secret, ct)
            budgets = self._budgets(x)
            spent = int((budgets <= 0).sum())
            if spent:
                raise ValueError(
                    f"ct: {spent} of {budgets.size} batch items have no noise budget left: "
                    "their decryption would be garbage (too many multiplications for these "
                    "parameters, or a damaged ciphertext)"
                )
            return Plaintext(self.ops.scale_round(x, self.q, self.t, self._gamma), self.params.fingerprint)
        s = self._data(secret, SecretKey, "secret")
        c = self._data(ct, Ciphertext, "ct")
        self._same_key(("secret", secret), ("ct", ct))
        # the whole decryption is one recorded graph where the context keeps graphs: no host work in it
        m = self._replayed(("decrypt",), self._decrypt_data, (c,), (s,), (secret,))
        return Plaintext(m, self.params.fingerprint)

    def _decrypt_data(self, c, s):
        """Message data (..., n) of ciphertext data c (..., K, L, n) under secret data s: c0 joins the
        scale and round (one pass over the phase)."""
        masked = ring.masked_phase(self.ops, c, s[: self.L], self.q)
        return self.ops.scale_round(masked, self.q, self.t, self._gamma, add=c[..., 0, :, :])

    def noise_budget(self, secret: SecretKey, ct: Ciphertext):
        """Bits of noise budget left per batch item, as SEAL reports it: bits(q) - bits(max |[t v]_q|) - 1
        (v = c0 + c1 s + ... mod q), at least 0. Exact, with Python ints (meant for a few items)."""
        return self._budgets(self._phase(secret, ct))

    def _budgets(self, phase):
        """Noise budget in bits of every item of a phase (..., L, n): exact, with Python ints, vectorized
        over items and coefficients (hebatch.rlwe.noise.budgets of [t v]_q)."""
        return noise.budgets(self.ops.to_host(phase), self.q, self.t)

    # -- additive ----------------------------------------------------------------------------
    def sub_plain(self, a: Ciphertext, pt: Plaintext) -> Ciphertext:
        """a - pt (slot-wise)."""
        neg = Plaintext(
            self.xp.where(
                self._data(pt, Plaintext, "pt") == 0, np.uint64(0), np.uint64(self.t) - self._data(pt, Plaintext, "pt")
            ),
            self.params.fingerprint,
        )
        return self.add_plain(a, neg)

    # -- multiplication (BEHZ) ---------------------------------------------------------------
    def _over_q_and_bsk(self, *parts):
        """Ciphertext data parts (..., k, L, n) in [0, q), batch axes broadcast, stacked along the component
        axis and extended exactly from base q to B_sk (BEHZ: FastBConv of m~ x to B_sk and m~, then the small
        Montgomery reduction by m~ removes FastBConv's multiple of q): (..., sum of k, L + |B_sk|, n) over
        q + B_sk, with no stacked or concatenated copy (RnsOps.behz_extend_stack)."""
        _, _, bsk, m_tilde = self._behz
        return self.ops.behz_extend_stack(parts, self.q, bsk, m_tilde)

    def _scale_down(self, d_q, d_bsk):
        """round-ish(t d / q) in base q from d given in q and B_sk: BEHZ fast floor in B_sk, then the
        Shenoy-Kumaresan exact conversion from B_sk to q (m_sk corrects the FastBConv overflow)."""
        base_b, m_sk, _, _ = self._behz
        return self.ops.behz_scale_down(d_q, d_bsk, self.t, self.q, base_b, m_sk)

    def multiply(self, a: Ciphertext, b: Ciphertext, relin_key: RelinKey | None = None) -> Ciphertext:
        """a * b (slot-wise) by the BEHZ RNS method (as SEAL): exact extension of both ciphertexts to
        the auxiliary base B_sk (FastBConv to B_sk and m~, small Montgomery reduction), tensor product
        in NTT form over q and B_sk, scaling by t/q with the fast floor and Shenoy-Kumaresan back to q.
        Gives 3 components, relinearized to 2 when relin_key is given."""
        da, db, key_id = self._pair(a, b)
        ksk = None
        if relin_key is not None:
            self._same_key(("a", a), ("relin_key", relin_key))
            ksk = self._data(relin_key, RelinKey, "relin_key")
        if da.shape[-3] != 2:
            raise ValueError("multiply needs 2-component ciphertexts: relinearize first")
        square = a is b
        inputs = (da,) if square else (da, db)
        constants, owners = ((ksk,), (relin_key,)) if ksk is not None else ((), ())
        fn = partial(self._product, square=square, relin=ksk is not None)
        return self._ct(self._replayed(("multiply", square, ksk is not None), fn, inputs, constants, owners), key_id)

    def _product(self, *arrays, square, relin):
        """Data of a * b (3 components), relinearized when relin (arrays: a, [b unless square], [key])."""
        ops, q = self.ops, self.q
        da = arrays[0]
        db = da if square else arrays[1]
        bsk = self._behz[2]
        full = q + bsk
        if square:  # extend and transform one ciphertext; the tensor of x with itself has d1 = 2 x0 x1
            x_full = ring.ntt(self._over_q_and_bsk(da), full)
            d = ops.tensor(x_full, x_full, full)
        else:
            x_full = ring.ntt(self._over_q_and_bsk(da, db), full)  # (..., 4, L + |B_sk|, n)
            d = ops.tensor(x_full[..., :2, :, :], x_full[..., 2:, :, :], full)
        d = ring.intt(d, full)
        product = self._scale_down(d[..., : self.L, :], d[..., self.L :, :])
        return self._relinearized(product, arrays[-1]) if relin else product

    # -- key switching -----------------------------------------------------------------------
    def _key_switch(self, c, ksk, add=None):
        """(c0', c1') with c0' + c1' s = c * target + small, for c (..., L, n) in coefficient form and a
        key-switching key (D, 2, L + 1, n): RNS digits of params.digit_limbs limbs, inner product over q and P,
        then the division by P with rounding (mod-down), plus `add` (..., 2, L, n) in the same pass if given."""
        p = self.params
        return switching.key_switch(self.ops, self.q, p.special, c, ksk, add, p.digit_limbs)

    def _galois_applied(self, c, ksk, *, galois_elt):
        """Data of ct(X^g) switched back to s, with ksk the key of g; c0(X^g) is added in the mod-down's pass."""
        p = self.params
        return switching.automorphism_switched(self.ops, self.q, p.special, c, galois_elt, ksk, p.digit_limbs)


__all__ = ["Context"]
