"""BGV homomorphic encryption over batches, beside BFV and on the same RNS engines, NTTs, batch
encoder and key-switching keys; a modulus chain with switching after every multiplication.

    from hebatch import bgv
    params = bgv.Params.preset("n16384")
    ctx = bgv.Context(params, backend="auto")
    keys = ctx.keygen(rotations=[1])
    ct = ctx.encrypt(keys.public, ctx.encode(values))
    sq = ctx.multiply(ct, ct, keys.relin)        # one level down the chain
"""

from .context import Context
from .objects import Ciphertext, GaloisKeys, Keys, Plaintext, PublicKey, RelinKey, SecretKey
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
    "MAX_LOG_Q",
    "PRESET_T",
]
