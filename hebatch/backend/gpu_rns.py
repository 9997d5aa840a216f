"""CuPy implementation of the RNS primitives (RnsOps) with the kernels of kernels/rns.cu.

Every method validates its arguments on the host (shapes, dtypes, moduli), then launches one kernel
on the current CUDA stream; nothing reads device data back or waits for the device. Constant tables
(modulus constants, base-conversion factors, scalars) are built with Python ints and uploaded once
per (device, moduli) and kept.

The kernels are plain grid-stride loops over (rows, coefficients), so `CupyRnsOps(xp=numpy,
loader=...)` runs this very launch code on a CPU against a host build of the same kernel source (the
tests do that where no GPU is present).
"""

from __future__ import annotations

import math
import os
import threading

import numpy as np

from ..field import modulus_info
from .gpu import MODCONST_DTYPE
from .rns import RnsOps

BLOCK = 256
MAX_GRID_Y = 65535
MAX_SRC_LIMBS = 64  # RNS_MAX_SRC in kernels/rns.cu
MAX_PARTS = 4  # RNS_MAX_PARTS
MAX_MODULUS_BITS = 62
_CACHE_LIMIT = 512  # scalar tables kept per instance before the cache is cleared


def _check_moduli(moduli, name: str = "moduli") -> tuple[int, ...]:
    if isinstance(moduli, (int, np.integer)) or not hasattr(moduli, "__len__"):
        raise TypeError(f"{name} must be a sequence of ints (one per limb), got {type(moduli).__name__}")
    out = tuple(int(q) for q in moduli)
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def _modulus_rows(moduli, name: str):
    """struct ModConst rows, floor(2^128/q) words and 2^128 mod q for each modulus (validated)."""
    consts = np.zeros(len(moduli), dtype=MODCONST_DTYPE)
    ratios = np.zeros((len(moduli), 2), dtype=np.uint64)
    r128 = np.zeros(len(moduli), dtype=np.uint64)
    for i, q in enumerate(moduli):
        if q < 3 or q % 2 == 0 or q >= 2**MAX_MODULUS_BITS:
            raise ValueError(f"{name}[{i}] = {q} must be an odd prime below 2**{MAX_MODULUS_BITS}")
        info = modulus_info(q)  # raises for a composite
        consts[i] = (q, info.barrett_mu, info.bits, 0)
        ratio = (1 << 128) // q
        ratios[i] = (ratio & (2**64 - 1), ratio >> 64)
        r128[i] = (1 << 128) % q
    return consts, ratios, r128


def _shoup_rows(values, moduli) -> np.ndarray:
    """Tw64 rows (w, floor(w 2^64 / q)) for reduced constants w."""
    table = np.zeros((len(moduli), 2), dtype=np.uint64)
    for i, (w, q) in enumerate(zip(values, moduli)):
        w %= q
        table[i] = (w, (w << 64) // q)
    return table


class CupyRnsOps(RnsOps):
    """RNS primitives on CuPy arrays (see hebatch/backend/rns.py for the contract)."""

    name = "gpu"

    def __init__(self, xp=None, loader=None):
        if xp is None:
            import cupy as xp
        self.xp = xp
        self._loader = loader
        self._lock = threading.Lock()
        self._tables: dict = {}
        self._functions: dict = {}
        # Philox key and the starting call counter, both from the operating system's secure source
        self._key = int.from_bytes(os.urandom(8), "little")
        self._counter = int.from_bytes(os.urandom(8), "little")

    # -- plumbing --------------------------------------------------------------------------------
    def _device(self) -> int:
        cuda = getattr(self.xp, "cuda", None)
        return cuda.Device().id if cuda is not None else 0

    def _function(self, name: str):
        key = (self._device(), name)
        fn = self._functions.get(key)
        if fn is None:
            if self._loader is not None:
                module = self._loader()
            else:
                from .cuda import load_module

                module = load_module("rns.cu")
            fn = self._functions[key] = module.get_function(name)
        return fn

    def _cached(self, key, build):
        key = (self._device(),) + key
        value = self._tables.get(key)
        if value is None:
            value = build()
            with self._lock:
                if len(self._tables) > _CACHE_LIMIT:
                    self._tables.clear()
                self._tables[key] = value
        return value

    def _modulus_tables(self, moduli, name="moduli"):
        """(consts, ratios, r128) on the device for these moduli."""

        def build():
            consts, ratios, r128 = _modulus_rows(moduli, name)
            return (self.xp.asarray(consts.view(np.uint8)), self.xp.asarray(ratios), self.xp.asarray(r128))

        return self._cached(("moduli", moduli), build)

    def _launch(self, name, rows, n, args):
        if rows == 0 or n == 0:
            return
        block = min(BLOCK, max(32, n))
        grid = (-(-n // block), min(rows, MAX_GRID_Y))
        self._function(name)(grid, (block,), args)

    def _next_counter(self) -> np.uint64:
        with self._lock:
            value = self._counter
            self._counter = (self._counter + 1) % 2**64
        return np.uint64(value)

    # -- array checks ----------------------------------------------------------------------------
    def _array(self, x, name, dtype=np.uint64):
        if not isinstance(x, self.xp.ndarray):
            raise TypeError(f"{name} must be a {self.xp.__name__} array, got {type(x).__module__}.{type(x).__name__}")
        if x.dtype != dtype:
            raise TypeError(f"{name} must have dtype {np.dtype(dtype).name}, got {x.dtype}")
        if x.ndim < 2:
            raise ValueError(f"{name} must have shape (..., limbs, n), got {x.shape}")
        return x

    def _result_shape(self, operands, moduli):
        """The broadcast shape (..., L, n) of named operands, checked against the moduli."""
        try:
            shape = np.broadcast_shapes(*(x.shape for _, x in operands))
        except ValueError:
            raise ValueError("operands " + ", ".join(f"{nm} {x.shape}" for nm, x in operands)
                             + " do not broadcast together") from None
        n = shape[-1]
        for nm, x in operands:
            if x.shape[-1] != n:
                raise ValueError(f"{nm} has {x.shape[-1]} coefficients, expected {n} (no broadcasting along n)")
        if shape[-2] not in (1, len(moduli)):
            raise ValueError(f"limb axis of size {shape[-2]} does not match {len(moduli)} moduli")
        return shape[:-2] + (len(moduli), n)

    def _operand(self, x, out_shape):
        """x as (array, batch stride, limb stride) for a kernel writing out_shape (batch, L, n)."""
        xp = self.xp
        lead, limbs, n = out_shape[:-2], out_shape[-2], out_shape[-1]
        x_limbs = x.shape[-2]
        if x_limbs not in (1, limbs):
            raise ValueError(f"limb axis of size {x_limbs} does not match {limbs} moduli")
        x_lead = (1,) * (len(lead) - (x.ndim - 2)) + tuple(x.shape[:-2])
        if x_lead == tuple(lead):
            bs = x_limbs * n
        elif all(d == 1 for d in x_lead):
            bs = 0
        else:  # broadcast along some batch axes only: materialise (rare)
            x = xp.broadcast_to(x.reshape(x_lead + (x_limbs, n)), tuple(lead) + (x_limbs, n))
            bs = x_limbs * n
        x = xp.ascontiguousarray(x)
        ls = n if x_limbs == limbs and limbs > 1 else 0
        return x, np.int64(bs), np.int64(ls)

    # -- the contract ----------------------------------------------------------------------------
    def asarray(self, x):
        """A NumPy (or backend) array on the current device."""
        return self.xp.asarray(x)

    def to_host(self, x):
        """A NumPy copy of x."""
        return x.get() if hasattr(x, "get") else np.asarray(x)

    def _elementwise(self, kernel, operands, moduli):
        moduli = _check_moduli(moduli)
        operands = [(nm, self._array(x, nm)) for nm, x in operands]
        shape = self._result_shape(operands, moduli)
        consts, _, _ = self._modulus_tables(moduli)
        out = self.xp.empty(shape, dtype=np.uint64)
        limbs, n = shape[-2], shape[-1]
        batch = math.prod(shape[:-2])
        args = []
        for _, x in operands:
            args += list(self._operand(x, shape))
        while len(args) < 9:  # unused operand slots: any valid pointer, strides 0
            args += [args[0], np.int64(0), np.int64(0)]
        self._launch(kernel, batch * limbs, n,
                     (out, *args, np.int64(batch), np.int32(limbs), np.int64(n), consts))
        return out

    def add(self, a, b, moduli):
        """(a + b) mod q_i, limb-axis broadcasting."""
        return self._elementwise("rns_add", [("a", a), ("b", b)], moduli)

    def sub(self, a, b, moduli):
        """(a - b) mod q_i, limb-axis broadcasting."""
        return self._elementwise("rns_sub", [("a", a), ("b", b)], moduli)

    def neg(self, a, moduli):
        """(-a) mod q_i."""
        return self._elementwise("rns_neg", [("a", a)], moduli)

    def mul(self, a, b, moduli):
        """a * b mod q_i (pointwise), limb-axis broadcasting."""
        return self._elementwise("rns_mul", [("a", a), ("b", b)], moduli)

    def mul_add(self, a, b, c, moduli):
        """(a * b + c) mod q_i, limb-axis broadcasting."""
        return self._elementwise("rns_mul_add", [("a", a), ("b", b), ("c", c)], moduli)

    def mul_scalar(self, a, scalars, moduli):
        """a * s_i mod q_i; scalars: one int per limb (or one int for all), any size."""
        moduli = _check_moduli(moduli)
        a = self._array(a, "a")
        if isinstance(scalars, (int, np.integer)):
            scalars = (int(scalars),) * len(moduli)
        scalars = tuple(int(s) for s in scalars)
        if len(scalars) != len(moduli):
            raise ValueError(f"scalars has {len(scalars)} entries, expected one per modulus ({len(moduli)})")
        shape = self._result_shape([("a", a)], moduli)
        consts, _, _ = self._modulus_tables(moduli)
        table = self._cached(("scalars", moduli, scalars),
                             lambda: self.xp.asarray(_shoup_rows(scalars, moduli)))
        x, bs, ls = self._operand(a, shape)
        out = self.xp.empty(shape, dtype=np.uint64)
        batch, limbs, n = math.prod(shape[:-2]), shape[-2], shape[-1]
        self._launch("rns_mul_scalar", batch * limbs, n,
                     (out, x, bs, ls, table, np.int64(batch), np.int32(limbs), np.int64(n), consts))
        return out

    def _lift(self, kernel, x, name, moduli, m=0, dtype=np.uint64):
        moduli = _check_moduli(moduli)
        x = self._array(x, name, dtype)
        if x.shape[-2] != 1:
            raise ValueError(f"{name} must have a limb axis of size 1, got shape {x.shape}")
        shape = x.shape[:-2] + (len(moduli), x.shape[-1])
        consts, ratios, _ = self._modulus_tables(moduli)
        xv, bs, ls = self._operand(x.view(np.uint64) if dtype != np.uint64 else x, shape)
        out = self.xp.empty(shape, dtype=np.uint64)
        batch, limbs, n = math.prod(shape[:-2]), shape[-2], shape[-1]
        self._launch(kernel, batch * limbs, n,
                     (out, xv, bs, ls, np.uint64(m), np.int64(batch), np.int32(limbs), np.int64(n), consts, ratios))
        return out

    def reduce(self, x, moduli):
        """x: any uint64 values with a limb axis of size 1 -> x mod q_i for every limb."""
        return self._lift("rns_reduce", x, "x", moduli)

    def from_signed(self, x, moduli):
        """x: int64 with |x| < 2**62, shape (..., n) or (..., 1, n) -> residues (..., L, n)."""
        if not isinstance(x, self.xp.ndarray):
            raise TypeError(f"x must be a {self.xp.__name__} array, got {type(x).__name__}")
        if x.ndim < 1:
            raise ValueError(f"x must have shape (..., n), got {x.shape}")
        if x.ndim == 1 or x.shape[-2] != 1:
            x = x[..., None, :]
        return self._lift("rns_from_signed", x, "x", moduli, dtype=np.int64)

    def centered_lift(self, x, m, moduli):
        """x (..., 1, n) in [0, m): v = x if x <= m // 2 else x - m, as residues mod every q_i."""
        m = int(m)
        if not 2 <= m < 2**MAX_MODULUS_BITS:
            raise ValueError(f"m must be between 2 and 2**{MAX_MODULUS_BITS} - 1, got {m}")
        return self._lift("rns_centered_lift", x, "x", moduli, m=m)

    def _base_tables(self, src, dst):
        def build():
            if len(src) > MAX_SRC_LIMBS:
                raise ValueError(f"src has {len(src)} moduli; base conversion takes at most {MAX_SRC_LIMBS}")
            src_consts, _, _ = _modulus_rows(src, "src")
            dst_consts, dst_ratios, dst_r128 = _modulus_rows(dst, "dst")
            big_q = math.prod(src)
            qhat = [big_q // q for q in src]
            qhat_inv = _shoup_rows([pow(h % q, -1, q) for h, q in zip(qhat, src)], src)
            factors = np.array([[h % p for h in qhat] for p in dst], dtype=np.uint64).reshape(len(dst), len(src))
            xp = self.xp
            return (xp.asarray(src_consts.view(np.uint8)), xp.asarray(qhat_inv), xp.asarray(dst_consts.view(np.uint8)),
                    xp.asarray(dst_ratios), xp.asarray(dst_r128), xp.asarray(factors))

        return self._cached(("base", src, dst), build)

    def base_convert(self, x, src, dst):
        """Fast base conversion y_j = sum_i [x_i (Q/q_i)^-1]_{q_i} (Q/q_i) mod p_j (no correction)."""
        src, dst = _check_moduli(src, "src"), _check_moduli(dst, "dst")
        x = self._array(x, "x")
        if x.shape[-2] != len(src):
            raise ValueError(f"x has {x.shape[-2]} limbs but src has {len(src)} moduli")
        if len(set(src)) != len(src):
            raise ValueError("src moduli must be distinct")
        tables = self._base_tables(src, dst)
        x = self.xp.ascontiguousarray(x)
        n = x.shape[-1]
        batch = math.prod(x.shape[:-2])
        out = self.xp.empty(x.shape[:-2] + (len(dst), n), dtype=np.uint64)
        self._launch("rns_base_convert", batch, n,
                     (out, x, np.int64(len(src) * n), np.int64(batch), np.int32(len(src)), np.int32(len(dst)),
                      np.int64(n), *tables))
        return out

    def inner_product(self, x, key, moduli):
        """Key-switching inner product: out[..., c, :, :] = sum_k x[..., k, :, :] * key[k, c, :, :] mod q_i.

        x: (..., digits, L, n); key: (digits, parts, L, n) with parts <= 4; result (..., parts, L, n).
        One kernel reads every digit once and accumulates all parts exactly before one reduction.
        """
        moduli = _check_moduli(moduli)
        x, key = self._array(x, "x"), self._array(key, "key")
        if x.ndim < 3 or key.ndim != 4:
            raise ValueError(f"x must be (..., digits, L, n) and key (digits, parts, L, n); got {x.shape}, {key.shape}")
        digits, limbs, n = x.shape[-3:]
        if key.shape[0] != digits or key.shape[2:] != (limbs, n):
            raise ValueError(f"key shape {key.shape} does not match x shape {x.shape}")
        if limbs != len(moduli):
            raise ValueError(f"x has {limbs} limbs but there are {len(moduli)} moduli")
        parts = key.shape[1]
        if not 1 <= parts <= MAX_PARTS:
            raise ValueError(f"key has {parts} parts; at most {MAX_PARTS}")
        consts, ratios, r128 = self._modulus_tables(moduli)
        x = self.xp.ascontiguousarray(x)
        key = self.xp.ascontiguousarray(key)
        batch = math.prod(x.shape[:-3])
        out = self.xp.empty(x.shape[:-3] + (parts, limbs, n), dtype=np.uint64)
        self._launch("rns_inner_product", batch * limbs, n,
                     (out, x, np.int64(digits * limbs * n), np.int64(limbs * n), key, np.int32(digits),
                      np.int32(parts), np.int64(batch), np.int32(limbs), np.int64(n), consts, ratios, r128))
        return out

    def automorphism(self, x, galois_elt, moduli, ntt_form):
        """x(X) -> x(X^g) in Z_q[X]/(X^n + 1): coefficients (signed permutation) or NTT values (permutation)."""
        moduli = _check_moduli(moduli)
        x = self._array(x, "x")
        n = x.shape[-1]
        if n < 2 or n & (n - 1):
            raise ValueError(f"n must be a power of two >= 2, got {n}")
        g = int(galois_elt)
        if g % 2 == 0 or not 0 < g < 2 * n:
            raise ValueError(f"galois_elt must be odd and in (0, 2n) = (0, {2 * n}), got {g}")
        if x.shape[-2] != len(moduli):
            raise ValueError(f"x has {x.shape[-2]} limbs but there are {len(moduli)} moduli")
        consts, _, _ = self._modulus_tables(moduli)
        x = self.xp.ascontiguousarray(x)
        out = self.xp.empty(x.shape, dtype=np.uint64)
        limbs, batch = x.shape[-2], math.prod(x.shape[:-2])
        log_n = n.bit_length() - 1
        if ntt_form:
            args = (out, x, np.int64(batch), np.int32(limbs), np.int32(log_n), np.uint64(g))
        else:
            args = (out, x, np.int64(batch), np.int32(limbs), np.int32(log_n), np.uint64(g), consts)
        self._launch("rns_automorphism_ntt" if ntt_form else "rns_automorphism_coeff", batch * limbs, n, args)
        return out

    def ntt(self, x, moduli):
        """Negacyclic NTT per limb, natural order (hb.ntt)."""
        from ..ntt.api import ntt

        return ntt(x, list(_check_moduli(moduli)), negacyclic=True, check=False)

    def intt(self, x, moduli):
        """Inverse negacyclic NTT per limb (hb.intt)."""
        from ..ntt.api import intt

        return intt(x, list(_check_moduli(moduli)), negacyclic=True, check=False)

    # -- randomness ------------------------------------------------------------------------------
    def _shape(self, shape, name="shape"):
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"{name} must have non-negative extents, got {shape}")
        return shape

    def random_uniform(self, shape, moduli):
        """Uniform residues of shape (..., L, n) mod each limb's modulus (Philox, 128 bits per value)."""
        moduli = _check_moduli(moduli)
        shape = self._shape(shape)
        if len(shape) < 2 or shape[-2] != len(moduli):
            raise ValueError(f"shape must be (..., {len(moduli)}, n) for {len(moduli)} moduli, got {shape}")
        consts, ratios, _ = self._modulus_tables(moduli)
        out = self.xp.empty(shape, dtype=np.uint64)
        batch, limbs, n = math.prod(shape[:-2]), shape[-2], shape[-1]
        self._launch("rns_random_uniform", batch * limbs, n,
                     (out, np.int64(batch), np.int32(limbs), np.int64(n), consts, ratios, np.uint64(self._key),
                      self._next_counter()))
        return out

    def _flat_random(self, kernel, shape, extra=()):
        shape = self._shape(shape)
        out = self.xp.empty(shape, dtype=np.int64)
        count = math.prod(shape)
        if count >= 2**56:
            raise ValueError(f"shape {shape} has too many elements for one call")
        if count:
            block = BLOCK
            grid = (min(-(-count // block), 1 << 20),)
            self._function(kernel)(grid, (block,), (out, np.int64(count), *extra, np.uint64(self._key),
                                                    self._next_counter()))
        return out

    def random_ternary(self, shape):
        """int64 values uniform in {-1, 0, 1}."""
        return self._flat_random("rns_random_ternary", shape)

    def random_gaussian(self, shape, sigma=3.2):
        """int64 rounded Gaussian values of standard deviation sigma, tails cut at 6 sigma."""
        sigma = float(sigma)
        if not 0 < sigma < 2**40:
            raise ValueError(f"sigma must be positive and finite, got {sigma}")
        return self._flat_random("rns_random_gaussian", shape, (np.float64(sigma),))
