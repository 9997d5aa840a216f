"""The BGV scheme over a batch axis, on the RNS engines of hebatch.backend (NumPy or CuPy).

A plaintext m is carried as c0 + c1 s = m + t v (mod q_0 ... q_l): no scaling by Delta, the noise is a
multiple of t. Ciphertexts live in coefficient form over the limbs of their level; keys in NTT form
over the whole chain and the special prime P, and a key is used at a lower level by taking its rows
and limbs of that level (the RNS gadget is exact limb by limb). Every step works on whole batches.
"""

from __future__ import annotations

import hashlib

import numpy as np

from . import _shared
from ._shared import intt as _intt
from ._shared import ntt as _ntt
from .objects import Ciphertext, GaloisKeys, Keys, Plaintext, PublicKey, RelinKey, SecretKey, check_fingerprint
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
        self.ops = _shared.engine(backend)
        self.n, self.t = params.n, params.t
        self.q = params.q
        self.L = len(self.q)
        self.special = params.special
        self.qp = self.q + (params.special,)
        self.auto_mod_switch = auto_mod_switch
        self._slot_index = _shared.slot_index(self.n, self.ops)
        self._last_keys: Keys | None = None
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
        if not isinstance(obj, cls):
            raise TypeError(f"{name} must be a bgv.{cls.__name__}, got {type(obj).__name__}")
        check_fingerprint(obj.fingerprint, self.params, name)
        data = self.ops.asarray(obj.data)
        if data.dtype != np.uint64:
            raise TypeError(f"{name}: data must be uint64, got {data.dtype}")
        if cls is Ciphertext and (
            data.ndim < 3
            or data.shape[-1] != self.n
            or not 1 <= data.shape[-2] <= self.L
            or data.shape[-3] not in (2, 3)
        ):
            raise ValueError(
                f"{name}: ciphertext data must have shape (..., 2 or 3, l + 1 <= {self.L}, n={self.n}), "
                f"got {tuple(data.shape)}"
            )
        if cls is Plaintext and (data.ndim < 1 or data.shape[-1] != self.n):
            raise ValueError(f"{name}: plaintext data must have shape (..., n={self.n}), got {tuple(data.shape)}")
        return data

    @staticmethod
    def _same_key(*named):
        ids = [(name, obj.key_id) for name, obj in named if obj is not None and obj.key_id is not None]
        for name, key_id in ids[1:]:
            if key_id != ids[0][1]:
                raise ValueError(
                    f"{ids[0][0]} belongs to key {ids[0][1]} but {name} to key {key_id}: "
                    "objects of different keys do not mix"
                )
        return ids[0][1] if ids else None

    @staticmethod
    def _batch_shape(shape_a, shape_b, name_a, name_b):
        try:
            return np.broadcast_shapes(tuple(shape_a), tuple(shape_b))
        except ValueError:
            raise ValueError(
                f"{name_a} (batch {tuple(shape_a)}) and {name_b} (batch {tuple(shape_b)}): "
                "batch shapes do not broadcast"
            ) from None

    def _ct(self, data, key_id):
        return Ciphertext(data, self.params.fingerprint, key_id)

    def _default_keys(self, name):
        if self._last_keys is None:
            raise ValueError(f"{name}: none given and this context has generated no keys")
        return self._last_keys

    def _level_key(self, ksk, limbs):
        """A key-switching key (L, 2, L + 1, n) cut to `limbs` limbs: its first `limbs` rows (digits) and
        the limbs q_0 .. q_{limbs-1} and P."""
        if limbs == self.L:
            return ksk
        return self.xp.ascontiguousarray(
            self.xp.concatenate([ksk[:limbs, :, :limbs], ksk[:limbs, :, self.L :]], axis=2)
        )

    # -- keys --------------------------------------------------------------------------------
    def galois_element(self, step: int) -> int:
        """The Galois element 3^step mod 2n that rotates both rows left by `step` (negative: right)."""
        return _shared.galois_element(self.n, step)

    def _ksk(self, s_ntt, target_ntt):
        """BGV key-switching key from target to s, stored as BFV's key for t^-1 target: t times it is
        (-(a' s) + t e + P g_j target, a') with a' = t a uniform, BGV's key, and _key_switch multiplies
        by t after the division by P, which makes that division round to a multiple of t."""
        t_inv = [pow(self.t, -1, p) for p in self.qp]
        return _shared.key_switching_key(
            self.ops, self.q, self.special, s_ntt, self.ops.mul_scalar(target_ntt, t_inv, self.qp)
        )

    def keygen(self, rotations=(), columns: bool = True) -> Keys:
        """Secret, public, relinearization and Galois keys (row rotations by each step in `rotations`, and,
        unless columns=False, the column rotation); rotations="pow2" gives the steps +-2^i. Secret ternary,
        errors Gaussian with sigma 3.2 (times t), all from the backend's secure sources."""
        if isinstance(rotations, str):
            if rotations != "pow2":
                raise ValueError(f"rotations must be a list of int steps or 'pow2', got {rotations!r}")
            rotations = [sign << i for i in range((self.n // 2).bit_length() - 1) for sign in (1, -1)]
        if isinstance(rotations, (int, np.integer)) or any(not isinstance(k, (int, np.integer)) for k in rotations):
            raise TypeError(f"rotations must be a list of int steps, got {rotations!r}")
        if not isinstance(columns, bool):
            raise TypeError(f"columns must be True or False, got {columns!r}")
        ops, q, qp, L, n, t, fp = self.ops, self.q, self.qp, self.L, self.n, self.t, self.params.fingerprint
        s_ntt = _ntt(ops.from_signed(ops.random_ternary((1, n)), qp), qp)
        a = ops.random_uniform((L, n), q)
        te = ops.mul_scalar(_ntt(ops.from_signed(ops.random_gaussian((1, n), SIGMA), q), q), [t] * L, q)
        pk0 = ops.sub(te, ops.mul(a, s_ntt[:L], q), q)
        public_data = self.xp.stack([pk0, a])
        key_id = hashlib.sha256(b"bgv" + ops.to_host(public_data).tobytes()).hexdigest()[:16]
        relin = self._ksk(s_ntt, ops.mul(s_ntt, s_ntt, qp))
        elements = []
        for g in [self.galois_element(k) for k in rotations] + ([2 * n - 1] if columns else []):
            if g != 1 and g not in elements:
                elements.append(g)
        gal = [self._ksk(s_ntt, ops.automorphism(s_ntt, g, qp, ntt_form=True)) for g in elements]
        gal_data = self.xp.stack(gal) if gal else self.xp.zeros((0, L, 2, L + 1, n), dtype=np.uint64)
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
        (rotate moves each row left, rotate_columns swaps the rows): BFV's batch encoder."""
        return Plaintext(
            _shared.encode_slots(self.ops, self.n, self.t, self._slot_index, values), self.params.fingerprint
        )

    def decode(self, pt: Plaintext):
        """Plaintexts -> slot values (..., n), uint64 in [0, t), on the backend's array type."""
        return _shared.decode_slots(self._data(pt, Plaintext, "pt"), self.t, self._slot_index)

    def _lifted(self, m, moduli):
        """m (..., n) in [0, t) as centered values (-t/2, t/2] over `moduli`: (..., len(moduli), n)."""
        return self.ops.centered_lift(m[..., None, :], self.t, moduli)

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
        u = _ntt(ops.from_signed(ops.random_ternary(batch + (1, n)), q), q)
        te = ops.mul_scalar(ops.from_signed(ops.random_gaussian(batch + (2, 1, n), SIGMA), q), [t] * L, q)
        c = ops.add(_intt(ops.mul(u[..., None, :, :], pk, q), q), te, q)
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
        c0 = ops.sub(ops.add(te, self._lifted(m, q), q), _intt(ops.mul(_ntt(a, q), s, q), q), q)
        return self._ct(self.xp.stack([c0, a], axis=-3), secret.key_id)

    def _phase(self, secret: SecretKey, ct: Ciphertext):
        """c0 + c1 s (+ c2 s^2) mod q_0 .. q_l, coefficient form (..., l + 1, n)."""
        ops = self.ops
        c = self._data(ct, Ciphertext, "ct")
        q = self.q[: c.shape[-2]]
        s = self._data(secret, SecretKey, "secret")[: len(q)]
        self._same_key(("secret", secret), ("ct", ct))
        c_ntt = _ntt(c[..., 1:, :, :], q)
        acc = c_ntt[..., -1, :, :]
        for k in range(c.shape[-3] - 2, 0, -1):  # Horner in s
            acc = ops.add(ops.mul(acc, s, q), c_ntt[..., k - 1, :, :], q)
        return ops.add(c[..., 0, :, :], _intt(ops.mul(acc, s, q), q), q)

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
        q = self.q[: x.shape[-2]]
        big_q = int(np.prod(np.array(q, dtype=object)))
        batch = x.shape[:-2]
        flat = x.reshape((-1, len(q), self.n))
        crt = [(big_q // p) * pow(big_q // p, -1, p) for p in q]
        out = np.empty(flat.shape[0], dtype=np.int64)
        for b in range(flat.shape[0]):
            v = sum(flat[b, i].astype(object) * c for i, c in enumerate(crt)) % big_q
            norm = max(int(abs(val - big_q if val > big_q // 2 else val)) for val in v)
            out[b] = max(0, big_q.bit_length() - norm.bit_length() - 1)
        return out.reshape(batch)

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
        da, db = self._drop_to(da, limbs), self._drop_to(db, limbs)
        ka, kb = da.shape[-3], db.shape[-3]
        if ka != kb:  # pad the shorter with zero components

            def pad(d, k):
                return self.xp.concatenate(
                    [d, self.xp.zeros(d.shape[:-3] + (k - d.shape[-3],) + d.shape[-2:], dtype=np.uint64)], axis=-3
                )

            da, db = (pad(da, kb), db) if ka < kb else (da, pad(db, ka))
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
        c0 = self.ops.add(c[..., 0, :, :], self._lifted(m, q), q)
        rest = self.xp.broadcast_to(c[..., 1:, :, :], c0.shape[:-2] + (c.shape[-3] - 1,) + c.shape[-2:])
        return self._ct(self.xp.concatenate([c0[..., None, :, :], rest], axis=-3), a.key_id)

    def sub_plain(self, a: Ciphertext, pt: Plaintext) -> Ciphertext:
        """a - pt (slot-wise)."""
        c, m, q = self._plain_pair(a, pt)
        c0 = self.ops.sub(c[..., 0, :, :], self._lifted(m, q), q)
        rest = self.xp.broadcast_to(c[..., 1:, :, :], c0.shape[:-2] + (c.shape[-3] - 1,) + c.shape[-2:])
        return self._ct(self.xp.concatenate([c0[..., None, :, :], rest], axis=-3), a.key_id)

    def multiply_plain(self, a: Ciphertext, pt: Plaintext) -> Ciphertext:
        """a * pt (slot-wise), the plaintext lifted to (-t/2, t/2]; the level is kept."""
        c, m, q = self._plain_pair(a, pt)
        m_ntt = _ntt(self._lifted(m, q), q)
        return self._ct(_intt(self.ops.mul(_ntt(c, q), m_ntt[..., None, :, :], q), q), a.key_id)

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
            x = _ntt(da, q)
            x0, x1 = x[..., 0, :, :], x[..., 1, :, :]
            cross = self.ops.mul(x0, x1, q)
            d = self.xp.stack(
                [self.ops.mul(x0, x0, q), self.ops.add(cross, cross, q), self.ops.mul(x1, x1, q)], axis=-3
            )
        else:
            shape = np.broadcast_shapes(da.shape, db.shape)
            x = _ntt(
                self.xp.concatenate([self.xp.broadcast_to(da, shape), self.xp.broadcast_to(db, shape)], axis=-3), q
            )
            d = self.ops.tensor(x[..., :2, :, :], x[..., 2:, :, :], q)
        d = _intt(d, q)
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
        qp = q + (self.special,)
        digits = _ntt(ops.reduce(c[..., :, None, :], qp), qp)  # (..., l + 1, l + 2, n)
        out = ops.mod_down(_intt(ops.inner_product(digits, self._level_key(ksk, limbs), qp), qp), q, self.special)
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
        if not isinstance(galois_keys, GaloisKeys):
            raise TypeError(f"galois_keys must be a bgv.GaloisKeys, got {type(galois_keys).__name__}")
        check_fingerprint(galois_keys.fingerprint, self.params, "galois_keys")
        if galois_keys.data.dtype != np.uint64:
            raise TypeError(f"galois_keys: data must be uint64, got {galois_keys.data.dtype}")

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
        q = self.q[: c.shape[-2]]
        moved = self.ops.automorphism(c, galois_elt, q, ntt_form=False)
        switched = self._key_switch(moved[..., 1, :, :], ksk)
        c0 = self.ops.add(moved[..., 0, :, :], switched[..., 0, :, :], q)
        return self._ct(self.xp.stack([c0, switched[..., 1, :, :]], axis=-3), key_id)

    def rotate(self, ct: Ciphertext, k: int, galois_keys: GaloisKeys | None = None) -> Ciphertext:
        """Rotate each row of the 2 x n/2 slot matrix left by k (right for k < 0), with the key of step k
        or composed from the keys of steps 2^i (keygen(rotations="pow2"))."""
        galois_keys = galois_keys if galois_keys is not None else self._default_keys("galois_keys").galois
        self._check_galois_keys(galois_keys)
        self._same_key(("ct", ct), ("galois_keys", galois_keys))
        elt = self.galois_element(k)
        if elt == 1 or elt in galois_keys.elements:
            return self.apply_galois(ct, elt, galois_keys)
        half = self.n // 2
        k = int(k) % half
        parts = [1 << i for i in range(half.bit_length()) if k >> i & 1]
        if not all(self.galois_element(p) in galois_keys.elements for p in parts):
            galois_keys.key_for(elt)  # raises, naming the missing key
        for p in parts:
            ct = self.apply_galois(ct, self.galois_element(p), galois_keys)
        return ct

    def rotate_columns(self, ct: Ciphertext, galois_keys: GaloisKeys | None = None) -> Ciphertext:
        """Swap the two rows of the slot matrix."""
        return self.apply_galois(ct, 2 * self.n - 1, galois_keys)


__all__ = ["Context"]
