"""The BGV scheme over a batch axis, on the RNS engines of hebatch.backend (NumPy or CuPy).

A plaintext m is carried as c0 + c1 s = m + t v (mod q_0 ... q_l): no scaling by Delta, the noise is a
multiple of t. Ciphertexts live in coefficient form over the limbs of their level; keys in NTT form
over the whole chain and the special prime P, and a key is used at a lower level by taking its rows
and limbs of that level (the RNS gadget is exact limb by limb). Every step works on whole batches.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..rlwe import checks, encoder, noise, ring, switching
from ..rlwe import keys as keygen
from .objects import Ciphertext, GaloisKeys, Keys, Plaintext, PublicKey, RelinKey, SecretKey
from .params import SIGMA, Params


class Context:
    """BGV on one backend: key generation, SIMD encoding (BFV's batch encoder layout), encryption,
    homomorphic arithmetic, modulus switching along the chain.

    params: a bgv.Params. backend: "cpu", "gpu" or "auto" (as bfv.Context). auto_mod_switch: multiply
    drops one level after the product (and relinearization), which keeps the noise at the size of a
    fresh ciphertext; False keeps the level (switch explicitly with mod_switch / mod_switch_to).
    Operands at different levels are switched down to the lower level before they combine.
    """

    def __init__(self, params: Params, backend: str = "auto", auto_mod_switch: bool = True):
        if not isinstance(params, Params):
            raise TypeError(f"params must be a bgv.Params, got {type(params).__name__}")
        if not isinstance(auto_mod_switch, bool):
            raise TypeError(f"auto_mod_switch must be True or False, got {auto_mod_switch!r}")
        self.params = params
        self.ops = ring.engine(backend)
        self.n, self.t = params.n, params.t
        self.q = params.q
        self.L = len(self.q)
        self.special = params.special
        self.qp = self.q + (params.special,)
        self.auto_mod_switch = auto_mod_switch
        self._slot_index = self.ops.asarray(encoder.slot_index(self.n))
        self._last_keys: Keys | None = None
        self._checker = checks.Checker(params, "bgv")
        self.graphs = None  # every kernel launches from Python (bfv.Context's attribute of the same name)

    @property
    def xp(self):
        """The array module of the backend (numpy or cupy)."""
        return self.ops.xp

    @property
    def backend(self) -> str:
        """ "cpu" or "gpu": where this context computes."""
        return "gpu" if getattr(self.xp, "__name__", "") == "cupy" else "cpu"

    # -- checks ------------------------------------------------------------------------------
    def _data(self, obj, cls, name):
        """obj's data on this backend, after the checks of hebatch.rlwe.checks (type, parameters, dtype,
        shape and level, key id, entries below their moduli; a key's entries once per array)."""
        return self._checker.data(self.ops, obj, cls, name)

    @staticmethod
    def _same_key(*named):
        return checks.same_key(*named)

    @staticmethod
    def _batch_shape(shape_a, shape_b, name_a, name_b):
        return checks.batch_shape(shape_a, shape_b, name_a, name_b)

    def _ct(self, data, key_id):
        return Ciphertext(data, self.params.fingerprint, key_id)

    def _default_keys(self, name):
        if self._last_keys is None:
            raise ValueError(f"{name}: none given and this context has generated no keys")
        return self._last_keys

    # -- keys --------------------------------------------------------------------------------
    def galois_element(self, step: int) -> int:
        """The Galois element 3^step mod 2n that rotates both rows left by `step` (negative: right)."""
        return encoder.galois_element(self.n, step)

    @property
    def _key_factors(self):
        """t^-1 mod every limb of q and P: BGV keeps the key-switching key of t^-1 target, so t times it is
        (-(a' s) + t e + P g_j target, a') with a' = t a uniform, BGV's key, and _key_switch multiplies by
        t after the division by P, which makes that division round to a multiple of t."""
        return [pow(self.t, -1, p) for p in self.qp]

    def keygen(self, rotations=(), columns: bool = True) -> Keys:
        """Secret, public, relinearization and Galois keys (row rotations by each step in `rotations`, and,
        unless columns=False, the column rotation); rotations="pow2" gives the steps +-2^i. Secret ternary,
        errors Gaussian with sigma 3.2 (times t), all from the backend's secure sources."""
        steps = encoder.rotation_steps(self.n, rotations)
        if not isinstance(columns, bool):
            raise TypeError(f"columns must be True or False, got {columns!r}")
        ops, q, qp, n, t, special, fp = self.ops, self.q, self.qp, self.n, self.t, self.special, self.params.fingerprint
        s_ntt = keygen.secret_key(ops, qp, n)
        public_data = keygen.public_key(ops, q, s_ntt, error_factor=t)
        key_id = keygen.key_id_of(public_data, Keys.id_salt)
        relin = keygen.relin_key(ops, q, special, s_ntt, self._key_factors)
        elements = encoder.galois_elements(n, steps, columns)
        gal_data = keygen.galois_keys(ops, q, special, s_ntt, elements, self._key_factors)
        keys = Keys(
            SecretKey(s_ntt, fp, key_id),
            PublicKey(public_data, fp, key_id),
            RelinKey(relin, fp, key_id),
            GaloisKeys(gal_data, fp, key_id, elements),
        )
        self._last_keys = keys
        return keys

    # -- encoding ----------------------------------------------------------------------------
    def encode(self, values) -> Plaintext:
        """Slots (..., n) of ints in [0, t) -> a batch of plaintexts; the slots form a 2 x n/2 matrix
        (rotate moves each row left, rotate_columns swaps the rows): the batch encoder of hebatch.rlwe."""
        return Plaintext(encoder.encode(self.ops, self.n, self.t, self._slot_index, values), self.params.fingerprint)

    def decode(self, pt: Plaintext):
        """Plaintexts -> slot values (..., n), uint64 in [0, t), on the backend's array type."""
        return encoder.decode(self._data(pt, Plaintext, "pt"), self.t, self._slot_index)

    def _lifted(self, m, moduli):
        """m (..., n) in [0, t) as centered values (-t/2, t/2] over `moduli`: (..., len(moduli), n)."""
        return ring.lifted(self.ops, m, self.t, moduli)

    # -- encryption --------------------------------------------------------------------------
    def _check_level(self, level):
        level = self.L - 1 if level is None else level
        if not isinstance(level, (int, np.integer)) or isinstance(level, bool) or not 0 <= level < self.L:
            raise ValueError(f"level must be an int from 0 to {self.L - 1}, got {level!r}")
        return int(level)

    def encrypt(self, public: PublicKey, pt: Plaintext, level: int | None = None) -> Ciphertext:
        """Public-key encryption of every plaintext of the batch: (pk0 u + t e0 + m, pk1 u + t e1) at the
        top of the chain, then switched down to `level` if given."""
        ops, q, n, L, t = self.ops, self.q, self.n, self.L, self.t
        level = self._check_level(level)
        pk = self._data(public, PublicKey, "public")
        m = self._data(pt, Plaintext, "pt")
        batch = tuple(m.shape[:-1])
        u = ring.ntt(ops.from_signed(ops.random_ternary(batch + (1, n)), q), q)
        te = ops.mul_scalar(ops.from_signed(ops.random_gaussian(batch + (2, 1, n), SIGMA), q), [t] * L, q)
        c = ops.add(ring.intt(ops.mul(u[..., None, :, :], pk, q), q), te, q)
        c[..., 0, :, :] = ops.add(c[..., 0, :, :], self._lifted(m, q), q)
        return self.mod_switch_to(self._ct(c, public.key_id), level)

    def encrypt_symmetric(self, secret: SecretKey, pt: Plaintext, level: int | None = None) -> Ciphertext:
        """Secret-key encryption (-(a s) + t e + m, a), a uniform, directly at `level` (default: the top)."""
        ops, n, t = self.ops, self.n, self.t
        level = self._check_level(level)
        q = self.q[: level + 1]
        s = self._data(secret, SecretKey, "secret")[: level + 1]
        m = self._data(pt, Plaintext, "pt")
        batch = tuple(m.shape[:-1])
        a = ops.random_uniform(batch + (len(q), n), q)
        te = ops.mul_scalar(ops.from_signed(ops.random_gaussian(batch + (1, n), SIGMA), q), [t] * len(q), q)
        c0 = ops.sub(ops.add(te, self._lifted(m, q), q), ring.intt(ops.mul(ring.ntt(a, q), s, q), q), q)
        return self._ct(self.xp.stack([c0, a], axis=-3), secret.key_id)

    def _phase(self, secret: SecretKey, ct: Ciphertext):
        """c0 + c1 s (+ c2 s^2) mod q_0 .. q_l, coefficient form (..., l + 1, n)."""
        ops = self.ops
        c = self._data(ct, Ciphertext, "ct")
        q = self.q[: c.shape[-2]]
        s = self._data(secret, SecretKey, "secret")[: len(q)]
        self._same_key(("secret", secret), ("ct", ct))
        return ring.phase(ops, c, s, q)

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
    def _pair(self, a, b, name_a="a", name_b="b"):
        """Data of a and b at their common (lower) level, with as many components."""
        da, db = self._data(a, Ciphertext, name_a), self._data(b, Ciphertext, name_b)
        key_id = self._same_key((name_a, a), (name_b, b))
        self._batch_shape(da.shape[:-3], db.shape[:-3], name_a, name_b)
        limbs = min(da.shape[-2], db.shape[-2])
        da, db = ring.pad_components(self.xp, self._drop_to(da, limbs), self._drop_to(db, limbs))
        return da, db, key_id

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a + b (batch axes broadcast; levels meet at the lower one)."""
        da, db, key_id = self._pair(a, b)
        return self._ct(self.ops.add(da, db, self.q[: da.shape[-2]]), key_id)

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a - b."""
        da, db, key_id = self._pair(a, b)
        return self._ct(self.ops.sub(da, db, self.q[: da.shape[-2]]), key_id)

    def negate(self, a: Ciphertext) -> Ciphertext:
        """-a."""
        c = self._data(a, Ciphertext, "a")
        return self._ct(self.ops.neg(c, self.q[: c.shape[-2]]), a.key_id)

    def _plain_pair(self, a, pt):
        c = self._data(a, Ciphertext, "a")
        m = self._data(pt, Plaintext, "pt")
        self._batch_shape(c.shape[:-3], m.shape[:-1], "a", "pt")
        return c, m, self.q[: c.shape[-2]]

    def add_plain(self, a: Ciphertext, pt: Plaintext) -> Ciphertext:
        """a + pt (slot-wise): m, lifted to (-t/2, t/2], added to c0."""
        c, m, q = self._plain_pair(a, pt)
        return self._ct(ring.with_c0(self.xp, c, self.ops.add(c[..., 0, :, :], self._lifted(m, q), q)), a.key_id)

    def sub_plain(self, a: Ciphertext, pt: Plaintext) -> Ciphertext:
        """a - pt (slot-wise)."""
        c, m, q = self._plain_pair(a, pt)
        return self._ct(ring.with_c0(self.xp, c, self.ops.sub(c[..., 0, :, :], self._lifted(m, q), q)), a.key_id)

    def multiply_plain(self, a: Ciphertext, pt: Plaintext) -> Ciphertext:
        """a * pt (slot-wise), the plaintext lifted to (-t/2, t/2]; the level is kept."""
        c, m, q = self._plain_pair(a, pt)
        m_ntt = ring.ntt(self._lifted(m, q), q)
        return self._ct(ring.intt(self.ops.mul(ring.ntt(c, q), m_ntt[..., None, :, :], q), q), a.key_id)

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
        if a is b:
            d = ring.square_ntt(self.ops, ring.ntt(da, q), q)
        else:
            x = ring.ntt(ring.stack_pair(self.xp, da, db), q)
            d = self.ops.tensor(x[..., :2, :, :], x[..., 2:, :, :], q)
        d = ring.intt(d, q)
        if relin_key is not None:
            d = self._relinearized(d, self._data(relin_key, RelinKey, "relin_key"))
        if self.auto_mod_switch and d.shape[-2] > 1:
            d = self._drop_last(d)
        return self._ct(d, key_id)

    def square(self, a: Ciphertext, relin_key: RelinKey | None = None) -> Ciphertext:
        """a * a."""
        return self.multiply(a, a, relin_key)

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

    def _relinearized(self, c, ksk):
        return self._key_switch(c[..., 2, :, :], ksk, add=c[..., :2, :, :])

    def relinearize(self, ct: Ciphertext, relin_key: RelinKey | None = None) -> Ciphertext:
        """3 components -> 2, with the relinearization key (default: that of the last keygen)."""
        relin_key = relin_key if relin_key is not None else self._default_keys("relin_key").relin
        c = self._data(ct, Ciphertext, "ct")
        ksk = self._data(relin_key, RelinKey, "relin_key")
        key_id = self._same_key(("ct", ct), ("relin_key", relin_key))
        if c.shape[-3] == 2:
            return self._ct(c.copy(), key_id)
        return self._ct(self._relinearized(c, ksk), key_id)

    def _check_galois_keys(self, galois_keys):
        """Type, parameters, shape and entries of a GaloisKeys, without moving its data to the device."""
        self._checker.galois_keys(galois_keys, GaloisKeys)

    def apply_galois(self, ct: Ciphertext, galois_elt: int, galois_keys: GaloisKeys | None = None) -> Ciphertext:
        """ct(X) -> ct(X^g), switched back to the key s; the level is kept."""
        galois_keys = galois_keys if galois_keys is not None else self._default_keys("galois_keys").galois
        c = self._data(ct, Ciphertext, "ct")
        self._check_galois_keys(galois_keys)
        key_id = self._same_key(("ct", ct), ("galois_keys", galois_keys))
        if c.shape[-3] != 2:
            raise ValueError("ct: rotations need 2-component ciphertexts: relinearize first")
        if galois_elt == 1:
            return self._ct(c.copy(), key_id)
        ksk = self.ops.asarray(galois_keys.key_for(galois_elt))  # that key only moves
        switch = partial(self._key_switch, ksk=ksk)
        return self._ct(switching.apply_automorphism(self.ops, c, galois_elt, self.q[: c.shape[-2]], switch), key_id)

    def rotate(self, ct: Ciphertext, k: int, galois_keys: GaloisKeys | None = None) -> Ciphertext:
        """Rotate each row of the 2 x n/2 slot matrix left by k (right for k < 0), with the key of step k
        or composed from the keys of steps 2^i (keygen(rotations="pow2"))."""
        galois_keys = galois_keys if galois_keys is not None else self._default_keys("galois_keys").galois
        self._check_galois_keys(galois_keys)
        self._same_key(("ct", ct), ("galois_keys", galois_keys))
        plan = encoder.rotation_plan(self.n, k, galois_keys.elements)
        if plan is None:
            galois_keys.key_for(self.galois_element(k))  # raises, naming the missing key
        for elt in plan or ():
            ct = self.apply_galois(ct, elt, galois_keys)
        return ct

    def rotate_columns(self, ct: Ciphertext, galois_keys: GaloisKeys | None = None) -> Ciphertext:
        """Swap the two rows of the slot matrix."""
        return self.apply_galois(ct, encoder.column_element(self.n), galois_keys)


__all__ = ["Context"]
