"""BFV homomorphic encryption over batches, on any RNS backend (NumPy or CuPy).

from hebatch import bfv
params = bfv.Params.preset("n8192")
ctx = bfv.Context(params, backend="auto")
keys = ctx.keygen(rotations=[1])
ct = ctx.encrypt(keys.public, ctx.encode(values))
"""

from .context import Context
from .objects import Ciphertext, GaloisKeys, Keys, Plaintext, PublicKey, RelinKey, SecretKey, load_zarr, save_zarr
from .params import MAX_LOG_Q, PRESET_T, Params

__all__ = [
    "Params",
    "Context",
    "Keys",
    "Plaintext",
    "Ciphertext",
    "SecretKey",
    "PublicKey",
    "RelinKey",
    "GaloisKeys",
    "save_zarr",
    "load_zarr",
    "MAX_LOG_Q",
    "PRESET_T",
]
