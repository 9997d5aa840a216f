"""The BGV scheme over a batch axis, on the RNS engines of hebatch.backend (NumPy or CuPy).

A plaintext m is carried as c0 + c1 s = m + t v (mod q_0 ... q_l): no scaling by Delta, the noise is a
multiple of t. Ciphertexts live in coefficient form over the limbs of their level; keys in NTT form
over the whole chain and the special prime P, and a key is used at a lower level by taking its rows
and limbs of that level (the RNS gadget is exact limb by limb). Every step works on whole batches.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..rlwe import encryption, noise, ring, switching
from ..rlwe.context import SchemeContext
from .objects import Ciphertext, Keys, Plaintext, PublicKey, RelinKey, SecretKey
from .params import Params


class Context(SchemeContext):
    """BGV on one backend: key generation, SIMD encoding (BFV's batch encoder layout), encryption,
    homomorphic arithmetic, modulus switching along the chain.

    params: a bgv.Params. backend: "cpu", "gpu" or "auto" (as bfv.Context). auto_mod_switch: multiply
    drops one level after the product (and relinearization), which keeps the noise at the size of a
    fresh ciphertext; False keeps the level (switch explicitly with mod_switch / mod_switch_to).
    Operands at different levels are switched down to the lower level before they combine.
    """

    scheme = "bgv"
    params_type = Params
    plaintext_type = Plaintext
    ciphertext_type = Ciphertext
    keys_type = Keys
    _id_salt = Keys.id_salt

    def __init__(self, params: Params, backend: str = "auto", auto_mod_switch: bool = True):
        if not isinstance(auto_mod_switch, bool):
            raise TypeError(f"auto_mod_switch must be True or False, got {auto_mod_switch!r}")
        super().__init__(params, backend)
        self.auto_mod_switch = auto_mod_switch  # every kernel launches from Python (graphs stays None)

    # -- keys --------------------------------------------------------------------------------
    @property
    def _error_factor(self) -> int:
        """BGV's errors are multiples of t, the public key's too."""
        return self.t

    @property
    def _key_factors(self) -> list[int] | None:
        """t^-1 mod every limb of q and P: BGV keeps the key-switching key of t^-1 target, so t times it is
        (-(a' s) + t e + P g_j target, a') with a' = t a uniform, BGV's key, and _key_switch multiplies by
        t after the division by P, which makes that division round to a multiple of t."""
        return [pow(self.t, -1, p) for p in self.qp]

    # -- encryption --------------------------------------------------------------------------
    def _check_level(self, level):
        level = self.L - 1 if level is None else level
        if not isinstance(level, (int, np.integer)) or isinstance(level, bool) or not 0 <= level < self.L:
            raise ValueError(f"level must be an int from 0 to {self.L - 1}, got {level!r}")
        return int(level)

    def encrypt(self, public: PublicKey, pt: Plaintext, level: int | None = None) -> Ciphertext:
        """Public-key encryption of every plaintext of the batch: (pk0 u + t e0 + m, pk1 u + t e1) at the
        top of the chain, then switched down to `level` if given."""
        ops, q = self.ops, self.q
        level = self._check_level(level)
        pk = self._data(public, PublicKey, "public")
        m = self._data(pt, Plaintext, "pt")
        c = encryption.public_zero(ops, q, pk, tuple(m.shape[:-1]), self.t)
        c[..., 0, :, :] = ops.add(c[..., 0, :, :], self._lifted(m, q), q)
        return self.mod_switch_to(self._ct(c, public.key_id), level)

    def encrypt_symmetric(self, secret: SecretKey, pt: Plaintext, level: int | None = None) -> Ciphertext:
        """Secret-key encryption (-(a s) + t e + m, a), a uniform, directly at `level` (default: the top)."""
        level = self._check_level(level)
        q = self.q[: level + 1]
        s = self._data(secret, SecretKey, "secret")[: level + 1]
        m = self._data(pt, Plaintext, "pt")
        c = encryption.symmetric(self.ops, q, s, tuple(m.shape[:-1]), partial(self._lifted, m, q), self.t)
        return self._ct(c, secret.key_id)

    def decrypt(self, secret: SecretKey, ct: Ciphertext) -> Plaintext:
        """[c0 + c1 s + ...]_q mod t for every item: the phase is switched down to q_0 limb by limb (each
        division rounds to a multiple of t and keeps it mod t, as the limbs are 1 mod t), then lifted
        centered from q_0 to t. Exact while the noise budget is positive."""
        x = self._drop_to(self._phase(secret, ct), 1)
        m = self.ops.centered_lift(x, self.q[0], (self.t,))
        return Plaintext(self.xp.ascontiguousarray(m[..., 0, :]), self.params.fingerprint)

    def noise_budget(self, secret: SecretKey, ct: Ciphertext):
        """Bits of noise budget left per batch item: bits(q_0 .. q_l) - bits(max |[c0 + c1 s + ...]_q|) - 1,
        at least 0 (decryption is exact while it is positive). Exact, with Python ints (for a few items)."""
        x = self.ops.to_host(self._phase(secret, ct))
        return noise.budgets(x, self.q[: x.shape[-2]])

    # -- modulus switching -------------------------------------------------------------------
    def _drop_to(self, x, limbs):
        """x (..., l + 1, n) over q_0 .. q_l switched down to its first `limbs` limbs. Each dropped limb
        q_j: x -> (x - delta) / q_j with delta = x mod q_j and = 0 mod t, |delta| <= t q_j / 2, namely
        delta = t [x t^-1]_{q_j} (centered): the engine's mod_down of y = t^-1 x, times t. Between two
        drops the factors t and t^-1 cancel, so they are applied once at each end."""
        if x.shape[-2] <= limbs:
            return x
        ops, t = self.ops, self.t
        y = ops.mul_scalar(x, [pow(t, -1, p) for p in self.q[: x.shape[-2]]], self.q[: x.shape[-2]])
        while y.shape[-2] > limbs:
            last = y.shape[-2] - 1
            y = ops.mod_down(y, self.q[:last], self.q[last])
        return ops.mul_scalar(y, [t] * limbs, self.q[:limbs])

    def _drop_last(self, x):
        """x one limb down the chain (see _drop_to)."""
        return self._drop_to(x, x.shape[-2] - 1)

    def mod_switch(self, ct: Ciphertext) -> Ciphertext:
        """ct one level down the chain (its last limb dropped): the same plaintext, noise divided by that
        limb plus the rounding's small t-multiple."""
        c = self._data(ct, Ciphertext, "ct")
        if c.shape[-2] == 1:
            raise ValueError("ct is at level 0, the end of the chain: no limb left to drop")
        return self._ct(self._drop_last(c), ct.key_id)

    def mod_switch_to(self, ct: Ciphertext, level: int) -> Ciphertext:
        """ct switched down to `level` (unchanged if it is there already; it cannot go up)."""
        c = self._data(ct, Ciphertext, "ct")
        level = self._check_level(level)
        if level > c.shape[-2] - 1:
            raise ValueError(f"level: ct is at level {c.shape[-2] - 1} and cannot go up to {level}")
        return self._ct(self._drop_to(c, level + 1), ct.key_id)

    # -- additive ----------------------------------------------------------------------------
    def _align(self, da, db):
        """Data of two ciphertexts at their common (lower) level."""
        limbs = min(da.shape[-2], db.shape[-2])
        return self._drop_to(da, limbs), self._drop_to(db, limbs)

    def _plain_term(self, m, q):
        """m lifted to (-t/2, t/2]: what a plaintext adds to c0 (BGV does not scale it)."""
        return self._lifted(m, q)

    def sub_plain(self, a: Ciphertext, pt: Plaintext) -> Ciphertext:
        """a - pt (slot-wise)."""
        c, m, q = self._plain_pair(a, pt)
        return self._ct(ring.with_c0(self.xp, c, self.ops.sub(c[..., 0, :, :], self._lifted(m, q), q)), a.key_id)

    # -- multiplication ----------------------------------------------------------------------
    def multiply(self, a: Ciphertext, b: Ciphertext, relin_key: RelinKey | None = None) -> Ciphertext:
        """a * b (slot-wise): the tensor product in NTT form over the common level (BGV needs no scaling),
        relinearized to 2 components when relin_key is given, then one level down when the context
        switches automatically and a level is left."""
        da, db, key_id = self._pair(a, b)
        if relin_key is not None:
            self._same_key(("a", a), ("relin_key", relin_key))
        if da.shape[-3] != 2:
            raise ValueError("multiply needs 2-component ciphertexts: relinearize first")
        q = self.q[: da.shape[-2]]
        if a is b:  # the tensor of x with itself has d1 = 2 x0 x1
            x = ring.ntt(da, q)
            d = self.ops.tensor(x, x, q)
        else:
            x = ring.ntt(ring.stack_pair(self.xp, da, db), q)
            d = self.ops.tensor(x[..., :2, :, :], x[..., 2:, :, :], q)
        d = ring.intt(d, q)
        if relin_key is not None:
            d = self._relinearized(d, self._data(relin_key, RelinKey, "relin_key"))
        if self.auto_mod_switch and d.shape[-2] > 1:
            d = self._drop_last(d)
        return self._ct(d, key_id)

    # -- key switching -----------------------------------------------------------------------
    def _key_switch(self, c, ksk, add=None):
        """(c0', c1') with c0' + c1' s = c * target + t * small, for c (..., l + 1, n) in coefficient form:
        RNS digits [c]_{q_j}, inner product with the key's rows of this level over q_0 .. q_l and P, the
        engine's mod_down (the key holds t^-1, so times t the division rounds to a multiple of t), plus
        `add` (..., 2, l + 1, n) if given."""
        ops, t = self.ops, self.t
        limbs = c.shape[-2]
        q = self.q[:limbs]
        out = switching.key_switch(ops, q, self.special, c, switching.key_at_level(self.xp, ksk, limbs))
        out = ops.mul_scalar(out, [t] * limbs, q)
        return out if add is None else ops.add(out, add, q)


__all__ = ["Context"]
