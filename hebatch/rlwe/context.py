"""The part of a scheme's context that does not depend on the scheme: the engine and the checks of
objects, the batch encoder, key generation, relinearization and rotations (key switching with the
scheme's own `_key_switch`), the phase, and the additive operations over aligned operands.

A scheme subclasses SchemeContext, sets its names (`scheme`, `params_type`, `plaintext_type`,
`ciphertext_type`, `keys_type`) and provides `_key_switch(c, ksk, add=None)` (data (..., l + 1, n)
-> (..., 2, l + 1, n)), `_plain_term(m, q)` (a plaintext as added to c0 over the limbs q) and
`multiply`; `_align(da, db)` brings two ciphertexts' data to one level (the identity where there is
one level). Ciphertext data may hold
fewer limbs than the parameters (a level of a modulus chain): operations use the limbs it holds.
"""

from __future__ import annotations

from functools import cached_property, partial
from typing import Any

import numpy as np

from . import checks, encoder, ring, switching
from . import keys as keygen
from .objects import Ciphertext, GaloisKeys, Keys, Plaintext, PublicKey, RelinKey, SecretKey


class SchemeContext:
    """Shared state and operations of the scheme contexts on one backend (see the module docstring)."""

    scheme = "rlwe"
    params_type: type = object
    plaintext_type: type[Plaintext] = Plaintext
    ciphertext_type: type[Ciphertext] = Ciphertext
    keys_type: type[Keys] = Keys  # its `parts` name the four key classes
    params: Any  # the scheme's Params
    graphs: Any  # a GraphReplayer (hebatch.backend.graphs), or None: every launch from Python

    def __init__(self, params, backend: str = "auto"):
        if not isinstance(params, self.params_type):
            raise TypeError(f"params must be a {self.scheme}.Params, got {type(params).__name__}")
        self.params = params
        self.ops = ring.engine(backend)
        self.n, self.t = self.params.n, self.params.t
        self.q = self.params.q
        self.L = len(self.q)
        self.special = self.params.special
        self.qp = self.q + (self.special,)
        self._last_keys: Keys | None = None
        self._checker = checks.Checker(params, self.scheme)
        self.graphs = None

    @property
    def secret_key_type(self) -> type[SecretKey]:
        return self.keys_type.parts[0]

    @property
    def public_key_type(self) -> type[PublicKey]:
        return self.keys_type.parts[1]

    @property
    def relin_key_type(self) -> type[RelinKey]:
        return self.keys_type.parts[2]

    @property
    def galois_keys_type(self) -> type[GaloisKeys]:
        return self.keys_type.parts[3]

    @property
    def xp(self):
        """The array module of the backend (numpy or cupy)."""
        return self.ops.xp

    @property
    def backend(self) -> str:
        """ "cpu" or "gpu": where this context computes."""
        return "gpu" if getattr(self.xp, "__name__", "") == "cupy" else "cpu"

    @cached_property
    def _slot_index(self):
        """NTT position of each slot (hebatch.rlwe.encoder), on the engine's device."""
        return self.ops.asarray(encoder.slot_index(self.n))

    # -- checks ------------------------------------------------------------------------------
    def _data(self, obj, cls, name):
        """obj's data on this backend, after the checks of hebatch.rlwe.checks (type, parameters, dtype,
        shape, key id, entries below their moduli; a key's entries once per array)."""
        return self._checker.data(self.ops, obj, cls, name)

    @staticmethod
    def _same_key(*named):
        return checks.same_key(*named)

    @staticmethod
    def _batch_shape(shape_a, shape_b, name_a, name_b):
        """The broadcast batch shape of two operands, or a ValueError naming both."""
        return checks.batch_shape(shape_a, shape_b, name_a, name_b)

    def _check_galois_keys(self, galois_keys):
        """Type, parameters, shape and entries of a GaloisKeys, without moving its data to the device."""
        self._checker.galois_keys(galois_keys, self.galois_keys_type)

    def _replayed(self, key, fn, inputs, constants=(), owners=(), samples=False):
        """fn(*inputs, *constants), from a recorded CUDA graph where this context keeps them.
        samples: fn draws randomness from this context's engine (each replay draws afresh)."""
        if self.graphs is None:
            return fn(*inputs, *constants)
        return self.graphs(key, fn, inputs, constants, owners, sampler=self.ops if samples else None)

    def _ct(self, data, key_id):
        return self._checker.trust(self.ciphertext_type(data, self.params.fingerprint, key_id))

    def _default_keys(self, name):
        if self._last_keys is None:
            raise ValueError(f"{name}: none given and this context has generated no keys")
        return self._last_keys

    # -- keys --------------------------------------------------------------------------------
    def galois_element(self, step: int) -> int:
        """The Galois element 3^step mod 2n that rotates both rows left by `step` (negative: right)."""
        return encoder.galois_element(self.n, step)

    _id_salt = b""  # what the key id hashes before the public key

    @property
    def _error_factor(self) -> int:
        """The public key's error is this times a Gaussian."""
        return 1

    @property
    def _key_factors(self) -> list[int] | None:
        """Factors of the key-switching keys' targets (one per limb of q and P), or None."""
        return None

    def keygen(self, rotations=(), columns: bool = True):
        """Secret, public, relinearization and Galois keys (row rotations by each step in `rotations`,
        and, unless columns=False, the column rotation). rotations="pow2" gives the steps +-2^i (as SEAL's
        default), from which rotate composes any step. Secret ternary, errors Gaussian with sigma 3.2, all
        from the backend's secure sources."""
        steps = encoder.rotation_steps(self.n, rotations)
        if not isinstance(columns, (bool, np.bool_)):
            raise TypeError(f"columns must be True or False, got {columns!r}")
        ops, q, qp, n, special, fp = self.ops, self.q, self.qp, self.n, self.special, self.params.fingerprint
        factors = self._key_factors
        s_ntt = keygen.secret_key(ops, qp, n)
        public_data = keygen.public_key(ops, q, s_ntt, self._error_factor)
        key_id = keygen.key_id_of(public_data, self._id_salt)
        digit_limbs = self.params.digit_limbs
        relin = keygen.relin_key(ops, q, special, s_ntt, factors, digit_limbs)
        elements = encoder.galois_elements(n, steps, bool(columns))
        gal_data = keygen.galois_keys(ops, q, special, s_ntt, elements, factors, digit_limbs)
        keys = self.keys_type(
            self.secret_key_type(s_ntt, fp, key_id),
            self.public_key_type(public_data, fp, key_id),
            self.relin_key_type(relin, fp, key_id),
            self.galois_keys_type(gal_data, fp, key_id, elements),
        )
        self._last_keys = keys
        return keys

    # -- encoding ----------------------------------------------------------------------------
    def encode(self, values):
        """Slots (..., n) of ints in [0, t) -> a batch of plaintexts. Slots form a 2 x n/2 matrix: rotate
        moves each row left, rotate_columns swaps the rows (SEAL's batch encoder layout)."""
        data = encoder.encode(self.ops, self.n, self.t, self._slot_index, values)
        return self._checker.trust(self.plaintext_type(data, self.params.fingerprint))

    def decode(self, pt):
        """Plaintexts -> slot values (..., n), uint64 in [0, t), on the backend's array type."""
        return encoder.decode(self._data(pt, self.plaintext_type, "pt"), self.t, self._slot_index)

    def _lifted(self, m, moduli):
        """m (..., n) in [0, t) as centred values (-t/2, t/2] over `moduli`: (..., len(moduli), n)."""
        return ring.lifted(self.ops, m, self.t, moduli)

    # -- decryption --------------------------------------------------------------------------
    def _phase(self, secret, ct):
        """c0 + c1 s (+ c2 s^2) mod the ciphertext's limbs, coefficient form (..., l + 1, n)."""
        s = self._data(secret, self.secret_key_type, "secret")
        c = self._data(ct, self.ciphertext_type, "ct")
        self._same_key(("secret", secret), ("ct", ct))
        q = self.q[: c.shape[-2]]
        return ring.phase(self.ops, c, s[: len(q)], q)

    # -- additive ----------------------------------------------------------------------------
    def _align(self, da, db):
        """Data of two ciphertexts at one level (here: as they are)."""
        return da, db

    def _pair(self, a, b, name_a="a", name_b="b"):
        """Data of a and b at one level, with as many components (the shorter padded with zeros)."""
        da, db = self._data(a, self.ciphertext_type, name_a), self._data(b, self.ciphertext_type, name_b)
        key_id = self._same_key((name_a, a), (name_b, b))
        self._batch_shape(da.shape[:-3], db.shape[:-3], name_a, name_b)
        da, db = ring.pad_components(self.xp, *self._align(da, db))
        return da, db, key_id

    def add(self, a, b):
        """a + b (batch axes broadcast)."""
        da, db, key_id = self._pair(a, b)
        return self._ct(self.ops.add(da, db, self.q[: da.shape[-2]]), key_id)

    def sub(self, a, b):
        """a - b."""
        da, db, key_id = self._pair(a, b)
        return self._ct(self.ops.sub(da, db, self.q[: da.shape[-2]]), key_id)

    def negate(self, a):
        """-a."""
        c = self._data(a, self.ciphertext_type, "a")
        return self._ct(self.ops.neg(c, self.q[: c.shape[-2]]), a.key_id)

    def _plain_pair(self, a, pt):
        """Data of a and pt, their batch shapes checked, and the moduli of a's limbs."""
        c = self._data(a, self.ciphertext_type, "a")
        m = self._data(pt, self.plaintext_type, "pt")
        self._batch_shape(c.shape[:-3], m.shape[:-1], "a", "pt")
        return c, m, self.q[: c.shape[-2]]

    def _plain_term(self, m, q):
        """What a plaintext m (..., n) adds to c0 over the limbs q: (..., len(q), n)."""
        raise NotImplementedError

    def add_plain(self, a, pt):
        """a + pt (slot-wise)."""
        c, m, q = self._plain_pair(a, pt)
        return self._ct(ring.with_c0(self.xp, c, self.ops.add(c[..., 0, :, :], self._plain_term(m, q), q)), a.key_id)

    def multiply_plain(self, a, pt):
        """a * pt (slot-wise), the plaintext lifted to (-t/2, t/2] to keep the noise growth small."""
        ops = self.ops
        c, m, q = self._plain_pair(a, pt)
        m_ntt = ring.ntt(self._lifted(m, q), q)
        return self._ct(ring.intt(ops.mul(ring.ntt(c, q), m_ntt[..., None, :, :], q), q), a.key_id)

    def square(self, a, relin_key=None):
        """a * a."""
        return self.multiply(a, a, relin_key)

    def multiply(self, a, b, relin_key=None):
        raise NotImplementedError

    # -- key switching -----------------------------------------------------------------------
    def _key_switch(self, c, ksk, add=None):
        raise NotImplementedError

    def relinearize(self, ct, relin_key=None):
        """3 components -> 2, with the relinearization key (default: that of the last keygen)."""
        relin_key = relin_key if relin_key is not None else self._default_keys("relin_key").relin
        c = self._data(ct, self.ciphertext_type, "ct")
        ksk = self._data(relin_key, self.relin_key_type, "relin_key")
        key_id = self._same_key(("ct", ct), ("relin_key", relin_key))
        if c.shape[-3] == 2:
            return self._ct(c.copy(), key_id)
        if c.shape[-3] != 3:
            raise ValueError(f"ct: relinearize takes 3 components, got {c.shape[-3]}")
        return self._ct(self._replayed(("relinearize",), self._relinearized, (c,), (ksk,), (relin_key,)), key_id)

    def _relinearized(self, c, ksk):
        """Data (..., 2, l + 1, n) of the 3-component c switched to 2 components."""
        return self._key_switch(c[..., 2, :, :], ksk, add=c[..., :2, :, :])

    def apply_galois(self, ct, galois_elt: int, galois_keys=None):
        """ct(X) -> ct(X^g), switched back to the key s."""
        galois_keys = galois_keys if galois_keys is not None else self._default_keys("galois_keys").galois
        c = self._data(ct, self.ciphertext_type, "ct")
        self._check_galois_keys(galois_keys)
        key_id = self._same_key(("ct", ct), ("galois_keys", galois_keys))
        if c.shape[-3] != 2:
            raise ValueError("ct: rotations need 2-component ciphertexts: relinearize first")
        if galois_elt == 1:
            return self._ct(c.copy(), key_id)
        ksk = self.ops.asarray(galois_keys.key_for(galois_elt))  # that key only moves (key_for raises if none)
        fn = partial(self._galois_applied, galois_elt=galois_elt)
        return self._ct(self._replayed(("galois", galois_elt), fn, (c,), (ksk,), (galois_keys,)), key_id)

    def _galois_applied(self, c, ksk, *, galois_elt):
        """Data of ct(X^g) switched back to s, with ksk the key of g."""
        switch = partial(self._key_switch, ksk=ksk)
        return switching.apply_automorphism(self.ops, c, galois_elt, self.q[: c.shape[-2]], switch)

    def rotate(self, ct, k: int, galois_keys=None):
        """Rotate each row of the 2 x n/2 slot matrix left by k (right for k < 0). Uses the Galois key of
        step k if there is one, else composes the step from the keys of steps 2^i (keygen(rotations="pow2"));
        default keys: those of the last keygen."""
        galois_keys = galois_keys if galois_keys is not None else self._default_keys("galois_keys").galois
        self._check_galois_keys(galois_keys)
        self._same_key(("ct", ct), ("galois_keys", galois_keys))
        plan = encoder.rotation_plan(self.n, k, galois_keys.elements)
        if plan is None:
            galois_keys.key_for(self.galois_element(k))  # raises, naming the missing key
        for elt in plan or ():
            ct = self.apply_galois(ct, elt, galois_keys)
        return ct

    def rotate_columns(self, ct, galois_keys=None):
        """Swap the two rows of the slot matrix."""
        return self.apply_galois(ct, encoder.column_element(self.n), galois_keys)


__all__ = ["SchemeContext"]
