"""A stand-in for the parts of CuPy that CupyFieldNTT's host code uses, backed by NumPy, so that its
launch arguments and buffer flow can run on a CPU against host builds or models of the kernels."""

import contextlib
import types

import numpy as np


class FakeArray(np.ndarray):
    def get(self):
        return np.asarray(self)

    @property
    def device(self):
        return contextlib.nullcontext()


def fake_cupy():
    xp = types.ModuleType("cupy")
    xp.ndarray = FakeArray
    xp.asarray = lambda a: np.array(a).view(FakeArray)
    xp.ascontiguousarray = lambda a: np.ascontiguousarray(a).view(FakeArray)
    xp.empty = lambda shape, dtype: np.empty(shape, dtype=dtype).view(FakeArray)
    xp.cuda = types.SimpleNamespace(Device=lambda: types.SimpleNamespace(id=0))
    return xp
