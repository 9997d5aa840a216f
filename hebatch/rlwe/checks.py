"""Checks of plaintexts, ciphertexts and keys where a scheme uses them: type, parameters (fingerprint),
dtype, shape against the parameters, key ids present and matching, entries below their moduli."""

from __future__ import annotations

import weakref

import numpy as np

from ..device import array_module, to_host


def check_fingerprint(fingerprint, params, name: str) -> None:
    """ValueError unless an object made under `fingerprint` belongs to `params`."""
    if fingerprint != params.fingerprint:
        raise ValueError(f"{name} was made under parameters {fingerprint}, not these parameters {params.fingerprint}")


def check_reduced(data, moduli: tuple, name: str) -> None:
    """ValueError if an entry of data (..., L, n) is >= the modulus of its limb (moduli: L entries), or,
    with one modulus, if any entry is >= it. One fused comparison and reduction, one read of L flags."""
    if data.size == 0:
        return
    xp = array_module(data)
    if len(moduli) == 1:
        if bool((data >= np.uint64(moduli[0])).any()):
            raise ValueError(f"{name} has entries >= its modulus {moduli[0]}: it is corrupt or not reduced")
        return
    bound = xp.asarray(np.array(moduli, dtype=np.uint64).reshape(-1, 1))
    bad = to_host((data >= bound).reshape(-1, len(moduli), data.shape[-1]).any(axis=(0, 2)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} has entries >= their limb's modulus (limb {i}, modulus {moduli[i]}): it is corrupt or not "
            f"reduced mod {moduli[i]}"
        )


def same_key(*named):
    """The key id shared by the named objects ((name, object) pairs; None objects and None ids are
    skipped), or a ValueError naming the two that differ."""
    ids = [(name, obj.key_id) for name, obj in named if obj is not None and obj.key_id is not None]
    for name, key_id in ids[1:]:
        if key_id != ids[0][1]:
            raise ValueError(
                f"{ids[0][0]} belongs to key {ids[0][1]} but {name} to key {key_id}: "
                "objects of different keys do not mix"
            )
    return ids[0][1] if ids else None


def batch_shape(shape_a, shape_b, name_a: str, name_b: str):
    """The broadcast batch shape of two operands, or a ValueError naming both."""
    try:
        return np.broadcast_shapes(tuple(shape_a), tuple(shape_b))
    except ValueError:
        raise ValueError(
            f"{name_a} (batch {tuple(shape_a)}) and {name_b} (batch {tuple(shape_b)}): batch shapes do not broadcast"
        ) from None


class Checker:
    """The checks of one scheme's objects under one parameter set.

    Object classes describe their layout (`_layout(params, shape, header)` -> (ok, moduli, rule)) and
    whether they are keys (`is_key`). An object is checked on its first use with a data array (and again
    when its data, fingerprint or key id is replaced); entries must not be modified in place after that."""

    def __init__(self, params, scheme: str):
        self.params, self.scheme = params, scheme
        # object -> the data array whose entries are known reduced: checked once, or made by a context.
        # Checking costs a comparison, a reduction and a device-to-host read (a synchronisation that
        # would stall the GPU on every operation), so an object is checked once per data array.
        self._checked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # object -> its `_state` when it passed every check: a use of the same object unchanged repeats
        # none of them (a few microseconds per operand otherwise)
        self._passed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def trust(self, obj):
        """Record obj (made by a context from checked operands) as reduced; returns obj."""
        self._checked[obj] = obj.data
        return obj

    def _header(self, obj) -> dict:
        elements = getattr(obj, "elements", None)
        return {"elements": list(elements)} if elements is not None else {}

    @staticmethod
    def _state(obj, data) -> tuple:
        """What a use of obj must find unchanged to skip its checks: the data array (by identity), then
        fingerprint, key id, shape, dtype and Galois elements (by value)."""
        return (data, obj.fingerprint, obj.key_id, data.shape, data.dtype, getattr(obj, "elements", None))

    def _passed_before(self, obj, data) -> bool:
        passed = self._passed.get(obj)
        return passed is not None and passed[0] is data and passed[1:] == self._state(obj, data)[1:]

    def _validated(self, obj, cls, data, name: str):
        """The checks of obj's fields and data layout (not its entries); returns the moduli of its limbs."""
        check_fingerprint(obj.fingerprint, self.params, name)
        if data.dtype != np.uint64:
            raise TypeError(f"{name}: data must be uint64, got {data.dtype}")
        ok, moduli, rule = cls._layout(self.params, tuple(data.shape), self._header(obj))
        if not ok:
            raise ValueError(f"{name}: {cls.kind} data must have shape {rule}, got {tuple(data.shape)}")
        if cls.has_key_id and not isinstance(obj.key_id, str):
            raise ValueError(f"{name}: the {cls.kind} carries no key id: it cannot be matched to its keys")
        return moduli

    def data(self, ops, obj, cls, name: str):
        """obj's data on the device of the engine `ops`, after every check (TypeError / ValueError naming
        `name`)."""
        if not isinstance(obj, cls):
            raise TypeError(f"{name} must be a {self.scheme}.{cls.__name__}, got {type(obj).__name__}")
        data = ops.asarray(obj.data)
        if self._passed_before(obj, data):
            return data
        self._entries(obj, cls, data, self._validated(obj, cls, data, name), name)
        if data is obj.data:  # on the engine's device already: the next use can skip the checks
            self._passed[obj] = self._state(obj, data)
        return data

    def _entries(self, obj, cls, data, moduli, name: str) -> None:
        """Entries >= their modulus (a corrupt or foreign array) would give silent garbage: one fused
        comparison per object and data array, one read of a few flags."""
        if self._checked.get(obj) is obj.data:
            return
        if cls.is_key:
            check_reduced(data, moduli, name)
        else:
            cls._check_entries(data, moduli, name)
        self._checked[obj] = obj.data

    def galois_keys(self, galois_keys, cls, name: str = "galois_keys") -> None:
        """The checks of `data` for Galois keys, without moving their (large) data to the device."""
        if not isinstance(galois_keys, cls):
            raise TypeError(f"{name} must be a {self.scheme}.{cls.__name__}, got {type(galois_keys).__name__}")
        data = galois_keys.data
        if self._passed_before(galois_keys, data):
            return
        self._entries(galois_keys, cls, data, self._validated(galois_keys, cls, data, name), name)
        self._passed[galois_keys] = self._state(galois_keys, data)


__all__ = ["check_fingerprint", "check_reduced", "same_key", "batch_shape", "Checker"]
