"""A stand-in for the parts of CuPy that CupyFieldNTT's host code uses, backed by NumPy, so that its
launch arguments and buffer flow can run on a CPU against host builds or models of the kernels.

Parameter structs carry the addresses of their tables (host addresses here); `MEMORY` keeps every array
the stand-in made by its address, so that Python models of the kernels find the arrays a struct names."""

import contextlib
import types

import numpy as np


class FakeArray(np.ndarray):
    def get(self):
        return np.asarray(self)

    @property
    def device(self):
        return contextlib.nullcontext()


MEMORY: dict[int, np.ndarray] = {}


def _kept(a: np.ndarray) -> FakeArray:
    a = a.view(FakeArray)
    MEMORY.setdefault(a.ctypes.data, a)
    return a


def at(address: int, dtype=np.uint64) -> np.ndarray:
    """The array the stand-in made at `address`, flat, as `dtype`."""
    return MEMORY[int(address)].view(np.ndarray).reshape(-1).view(dtype)


def fake_cupy():
    xp = types.ModuleType("cupy")
    xp.ndarray = FakeArray
    xp.asarray = lambda a: _kept(np.array(a))
    xp.ascontiguousarray = lambda a: _kept(np.ascontiguousarray(a))
    xp.empty = lambda shape, dtype: _kept(np.empty(shape, dtype=dtype))
    xp.cuda = types.SimpleNamespace(Device=lambda: types.SimpleNamespace(id=0))
    return xp
