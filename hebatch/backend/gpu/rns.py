"""CuPy implementation of the RNS primitives (RnsOps) with the kernels of kernels/rns.cu.

Every method validates its arguments on the host (shapes, dtypes, moduli), then launches one kernel
on the current CUDA stream; nothing reads device data back or waits for the device (except once, when
a constant table is first uploaded or a device's sampler counter is first zeroed). Constant tables
(modulus constants, base-conversion factors, scalars) are built with Python ints and uploaded once
per (device, moduli) and kept.

The kernels are plain grid-stride loops over (rows, coefficients), so `CupyRnsOps(xp=numpy,
loader=...)` runs this very launch code on a CPU against a host build of the same kernel source (the
tests do that where no GPU is present).
"""

from __future__ import annotations

import contextlib
import math
import os
import threading

import numpy as np

from ...field import modulus_info
from ..cache import TABLES, instance_tokens
from ..interface import RnsOps, check_digit_limbs
from ..kernels import MODCONST_DTYPE, launch_properties

# Launch geometry of the element-wise RNS kernels. Tuned on an NVIDIA H100 80GB HBM3 on 2026-11-23 with
# benchmarks/bfv_bench.py: the small-launch rule before benchmarks/results/bfv-H100-80GB-HBM3-2026-11-23.json,
# the four coefficients per thread before bfv-H100-80GB-HBM3-2026-11-23-graphs.json.
BLOCK = 256
SMALL_BLOCK = 64
SMALL_LAUNCH_BLOCKS_PER_SM = 4  # launches of fewer than SMs * this * BLOCK threads get blocks of SMALL_BLOCK
LARGE_LAUNCH = 1 << 23  # elements: from here each thread takes COLS_PER_THREAD coefficients of its row
COLS_PER_THREAD = 4
_TOKENS = instance_tokens()
MAX_GRID_Y = 65535
MAX_SRC_LIMBS = 64  # RNS_MAX_SRC in kernels/rns.cu
MAX_PARTS = 4  # RNS_MAX_PARTS
MAX_MODULUS_BITS = 62
SAMPLER_DRAWS_PER_BLOCK = 4  # 128-bit draws per ChaCha20 block (kernels/rns.cu)
SAMPLER_MAX_BLOCKS = 1 << 32  # keystream blocks under one nonce: ChaCha20's block counter has 32 bits
SAMPLER_BLOCKS_PER_SM = 16  # sampler grids: enough resident threads per SM; the kernels loop over the rest


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


def _scaled_rows(factors, scales, moduli) -> np.ndarray:
    """factors [rows][count] with row j multiplied by scales[j] mod moduli[j] (a constant folded into a sum)."""
    return np.array(
        [[int(f) * s % m for f in row] for row, s, m in zip(factors, scales, moduli)], dtype=np.uint64
    ).reshape(np.shape(factors))


def _signed_terms(values, moduli) -> np.ndarray:
    """Rows (v mod m, -v mod m): the factor of a centred value's magnitude, for its sign (kernels/rns.cu)."""
    return np.array([(v % m, -v % m) for v, m in zip(values, moduli)], dtype=np.uint64).reshape(len(moduli), 2)


class CupyRnsOps(RnsOps):
    """RNS primitives on CuPy arrays (see hebatch/backend/rns.py for the contract)."""

    name = "gpu"

    def __init__(self, xp=None, loader=None):
        if xp is None:
            import cupy as xp
        self.xp = xp
        self._loader = loader
        self._lock = threading.Lock()
        self._token = next(_TOKENS)  # this instance's tables in the shared cache
        self._sms = None
        self._ndarray = xp.ndarray
        cuda = getattr(xp, "cuda", None)
        self._runtime = cuda.runtime if cuda is not None else None
        self._functions: dict = {}
        # Sampler state per device: a ChaCha20 key from os.urandom and the device counter of call numbers
        # (see _sampler); made on first use, and again in a forked child (which must not share them).
        self._samplers: dict = {}
        self._sampler_pid = os.getpid()
        self._local = threading.local()  # .sampler: a private sampler this thread draws from (sampling_with)

    # -- plumbing --------------------------------------------------------------------------------
    def _device(self) -> int:
        return self._runtime.getDevice() if self._runtime is not None else 0

    def _function(self, name: str):
        key = (self._device(), name)
        fn = self._functions.get(key)
        if fn is None:
            if self._loader is not None:
                module = self._loader()
            else:
                from .loader import load_module

                module = load_module("rns.cu")
            fn = self._functions[key] = module.get_function(name)
        return fn

    def _cached(self, key, build):
        """The device tables under key, built (and uploaded) on first use. The upload is waited for once,
        so a table first used on one stream is complete when another stream reads it."""
        device, key = self._device(), ("rns", self._token) + key
        value = TABLES.lookup(device, key)
        if value is not None:
            return value

        def build_and_wait():
            value = build()
            if self._runtime is not None:
                self.xp.cuda.get_current_stream().synchronize()
            return value

        return TABLES.get(device, key, build_and_wait)

    def _modulus_tables(self, moduli, name="moduli"):
        """(consts, ratios, r128) on the device for these moduli."""

        def build():
            consts, ratios, r128 = _modulus_rows(moduli, name)
            return (self.xp.asarray(consts.view(np.uint8)), self.xp.asarray(ratios), self.xp.asarray(r128))

        return self._cached(("moduli", moduli), build)

    def _sm_count(self) -> int:
        """SMs of the device current at the first launch (a hint for block sizes only: any geometry
        gives the same results, so one count per instance keeps device queries off the launch path)."""
        if self._sms is None:
            self._sms = launch_properties(self._device())["sm_count"]
        return self._sms

    @staticmethod
    def _geometry(rows, n, sm_count):
        """(grid, block) for `rows` rows of n coefficients: 256 threads per block, or 64 when that
        leaves fewer than about four blocks per SM of a large GPU (small batches of heavy kernels).
        Large launches give each thread several coefficients of its row (the kernels loop over the grid),
        so the per-row work of a thread (limb index, modulus constants) is shared by several elements
        while the GPU still holds many times more threads than it runs at once."""
        block = BLOCK if rows * n >= sm_count * SMALL_LAUNCH_BLOCKS_PER_SM * BLOCK else SMALL_BLOCK
        block = min(block, max(32, n))
        per = COLS_PER_THREAD if rows * n >= LARGE_LAUNCH else 1
        return (-(-n // (block * per)), min(rows, MAX_GRID_Y)), (block,)

    def _launch(self, name, rows, n, args):
        if rows == 0 or n == 0:
            return
        grid, block = self._geometry(rows, n, self._sm_count())
        self._function(name)(grid, block, args)

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
            raise ValueError(
                "operands " + ", ".join(f"{nm} {x.shape}" for nm, x in operands) + " do not broadcast together"
            ) from None
        n = shape[-1]
        for nm, x in operands:
            if x.shape[-1] != n:
                raise ValueError(f"{nm} has {x.shape[-1]} coefficients, expected {n} (no broadcasting along n)")
        if shape[-2] not in (1, len(moduli)):
            raise ValueError(f"limb axis of size {shape[-2]} does not match {len(moduli)} moduli")
        return shape[:-2] + (len(moduli), n)

    # -- the contract ----------------------------------------------------------------------------
    def asarray(self, x):
        """A NumPy (or backend) array on the current device."""
        return self.xp.asarray(x)

    def to_host(self, x):
        """A NumPy copy of x."""
        return x.get() if hasattr(x, "get") else np.asarray(x)

    def _plan_key(self, kernel, moduli, arrays):
        """A hashable key of a call's static description, or None (then the call is planned afresh)."""
        if type(moduli) is not tuple:
            return None
        try:
            return (kernel, self._device(), moduli) + tuple(x.shape for x in arrays)
        except AttributeError:
            return None

    def _plan_elementwise(self, kernel, names, arrays, moduli):
        """Validate one call and bind everything but the arrays: (out shape, per-operand (materialised
        shape or None, batch stride, limb stride), scalar tail of the arguments, grid, block)."""
        moduli = _check_moduli(moduli)
        operands = [(nm, self._array(x, nm)) for nm, x in zip(names, arrays)]
        shape = self._result_shape(operands, moduli)
        consts, _, _ = self._modulus_tables(moduli)
        lead, limbs, n = shape[:-2], shape[-2], shape[-1]
        batch = math.prod(lead)
        layout = []
        for _, x in operands:
            if x.shape[-2] not in (1, limbs):
                raise ValueError(f"limb axis of size {x.shape[-2]} does not match {limbs} moduli")
            x_lead = (1,) * (len(lead) - (x.ndim - 2)) + tuple(x.shape[:-2])
            if x_lead == tuple(lead):
                materialise, bs = None, x.shape[-2] * n
            elif all(d == 1 for d in x_lead):
                materialise, bs = None, 0
            else:  # broadcast along some batch axes only: materialised (rare)
                materialise, bs = (x_lead + x.shape[-2:], tuple(lead) + x.shape[-2:]), x.shape[-2] * n
            layout.append((materialise, np.int64(bs), np.int64(n if x.shape[-2] == limbs and limbs > 1 else 0)))
        grid, block = self._geometry(batch * limbs, n, self._sm_count())
        tail = (np.int64(batch), np.int32(limbs), np.int64(n), consts)
        return shape, layout, tail, grid, block

    def _bind(self, x, layout):
        materialise, bs, ls = layout
        if materialise is not None:
            x = self.xp.broadcast_to(x.reshape(materialise[0]), materialise[1])
        if not x.flags.c_contiguous:
            x = self.xp.ascontiguousarray(x)
        return x, bs, ls

    def _planned(self, kernel, names, arrays, moduli, planner, dtype=np.uint64):
        key = self._plan_key(kernel, moduli, arrays)
        if key is not None:
            plan = TABLES.lookup(self._device(), ("rns", self._token, "plan") + key)
            if plan is not None:  # the shapes and moduli were validated when the plan was made; check the types
                for nm, x in zip(names, arrays):
                    if type(x) is not self._ndarray or x.dtype != dtype:
                        self._array(x, nm, dtype)
                return plan

        def build():
            return (
                planner(kernel, names, arrays, moduli, dtype)
                if dtype != np.uint64
                else planner(kernel, names, arrays, moduli)
            )

        return build() if key is None else self._cached(("plan",) + key, build)

    def _elementwise(self, kernel, names, arrays, moduli):
        shape, layout, tail, grid, block = self._planned(kernel, names, arrays, moduli, self._plan_elementwise)
        out = self.xp.empty(shape, dtype=np.uint64)
        if out.size == 0:
            return out
        args = [out]
        for x, lay in zip(arrays, layout):
            args += self._bind(x, lay)
        while len(args) < 10:  # unused operand slots: any valid pointer, strides 0
            args += [args[1], np.int64(0), np.int64(0)]
        self._function(kernel)(grid, block, (*args, *tail))
        return out

    def add(self, a, b, moduli):
        """(a + b) mod q_i, limb-axis broadcasting."""
        return self._elementwise("rns_add", ("a", "b"), (a, b), moduli)

    def sub(self, a, b, moduli):
        """(a - b) mod q_i, limb-axis broadcasting."""
        return self._elementwise("rns_sub", ("a", "b"), (a, b), moduli)

    def neg(self, a, moduli):
        """(-a) mod q_i."""
        return self._elementwise("rns_neg", ("a",), (a,), moduli)

    def mul(self, a, b, moduli):
        """a * b mod q_i (pointwise), limb-axis broadcasting."""
        return self._elementwise("rns_mul", ("a", "b"), (a, b), moduli)

    def mul_add(self, a, b, c, moduli):
        """(a * b + c) mod q_i, limb-axis broadcasting."""
        return self._elementwise("rns_mul_add", ("a", "b", "c"), (a, b, c), moduli)

    def mul_scalar(self, a, scalars, moduli):
        """a * s_i mod q_i; scalars: one int per limb (or one int for all), any size."""
        if isinstance(scalars, (int, np.integer)):
            scalars = (int(scalars),) * len(moduli)
        elif type(scalars) is not tuple:
            scalars = tuple(scalars)
        shape, layout, tail, grid, block = self._planned(
            ("rns_mul_scalar", scalars), ("a",), (a,), moduli, self._plan_scalar
        )
        out = self.xp.empty(shape, dtype=np.uint64)
        if out.size:
            self._function("rns_mul_scalar")(grid, block, (out, *self._bind(a, layout[0]), *tail))
        return out

    def _plan_scalar(self, kernel, names, arrays, moduli):
        moduli = _check_moduli(moduli)
        scalars = kernel[1]
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in scalars):
            raise TypeError("scalars must be ints")
        if len(scalars) != len(moduli):
            raise ValueError(f"scalars has {len(scalars)} entries, expected one per modulus ({len(moduli)})")
        shape, layout, tail, grid, block = self._plan_elementwise(kernel[0], names, arrays, moduli)
        table = self.xp.asarray(_shoup_rows([int(v) for v in scalars], moduli))
        return shape, layout, (table,) + tail, grid, block

    def _lift(self, kernel, x, name, moduli, m=0, dtype=np.uint64):
        shape, layout, tail, grid, block = self._planned((kernel, m), (name,), (x,), moduli, self._plan_lift, dtype)
        out = self.xp.empty(shape, dtype=np.uint64)
        if out.size:
            self._function(kernel)(grid, block, (out, *self._bind(x, layout[0]), *tail))
        return out

    def _plan_lift(self, kernel, names, arrays, moduli, dtype=np.uint64):
        moduli = _check_moduli(moduli)
        x = self._array(arrays[0], names[0], dtype)
        if x.shape[-2] != 1:
            raise ValueError(f"{names[0]} must have a limb axis of size 1, got shape {x.shape}")
        shape, layout, tail, grid, block = self._plan_elementwise(kernel[0], names, (x.view(np.uint64),), moduli)
        _, ratios, _ = self._modulus_tables(moduli)
        return shape, layout, (np.uint64(kernel[1]),) + tail + (ratios,), grid, block

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

    def base_convert(self, x, src, dst):
        """Fast base conversion y_j = sum_i [x_i (Q/q_i)^-1]_{q_i} (Q/q_i) mod p_j (no correction)."""
        src, dst = _check_moduli(src, "src"), _check_moduli(dst, "dst")

        def build():
            _, qhat_inv, src_c, factors, dst_c, dst_r, dst_r128 = self._conversion_rows(src, dst)
            return src_c, _shoup_rows(qhat_inv, src), dst_c, dst_r, dst_r128, factors

        x = self._array(x, "x")
        if x.shape[-2] != len(src):
            raise ValueError(f"x has {x.shape[-2]} limbs but src has {len(src)} moduli")
        return self._conversion("rns_base_convert", x, len(src), len(dst), self._uploaded(("base", src, dst), build))

    def digit_convert(self, x, src, dst, digit_limbs: int):
        """Every key-switching digit's fast base conversion in one kernel (rns_digit_convert)."""
        src, dst = _check_moduli(src, "src"), _check_moduli(dst, "dst")
        a = check_digit_limbs(digit_limbs, len(src))
        digits = -(-len(src) // a)

        def build():
            src_c, _, _ = _modulus_rows(src, "src")
            dst_c, dst_r, dst_r128 = _modulus_rows(dst, "dst")
            factors = np.zeros((digits, len(dst) * a), dtype=np.uint64)
            w = []
            for k in range(digits):
                _, qhat_inv, _, f, _, _, _ = self._conversion_rows(src[k * a : (k + 1) * a], dst)
                factors[k, : f.size] = f.ravel()
                w += qhat_inv
            return src_c.view(np.uint8), _shoup_rows(w, src), dst_c.view(np.uint8), dst_r, dst_r128, factors

        tables = self._uploaded(("digits", src, dst, a), build)
        x, lead, bs = self._items(x, "x", 2, len(src))
        n = x.shape[-1]
        batch = math.prod(lead)
        out = self.xp.empty(lead + (digits, len(dst), n), dtype=np.uint64)
        sizes = (np.int64(batch), np.int32(len(src)), np.int32(a), np.int32(digits), np.int32(len(dst)), np.int64(n))
        self._launch("rns_digit_convert", batch * digits, n, (out, x, bs, *sizes, *tables))
        return out

    def _conversion(self, kernel, x, src_limbs, dst_limbs, tables, x_limbs=None):
        """Launch a kernel of the base-conversion shape, (out, out batch stride, x, x batch stride, batch,
        src limbs, dst limbs, n, tables...), on x (..., x_limbs (default src_limbs), n); returns the new out
        (..., dst_limbs, n)."""
        x, lead, bs = self._items(x, "x", 2, src_limbs if x_limbs is None else x_limbs)
        n = x.shape[-1]
        batch = math.prod(lead)
        out = self.xp.empty(lead + (dst_limbs, n), dtype=np.uint64)
        args = (out, np.int64(dst_limbs * n), x, bs, np.int64(batch), np.int32(src_limbs), np.int32(dst_limbs))
        self._launch(kernel, batch, n, (*args, np.int64(n), *tables))
        return out

    def _out_items(self, out, shape, name="out"):
        """The batch stride in elements of an output array `out` of `shape` that a kernel writes in place: each
        item (the last two axes) C-contiguous and the lead axes collapsing to one stride, as _items reads
        (views such as d[..., L:, :] qualify). Unlike an input, an output cannot be copied to fit."""
        out = self._array(out, name)
        if tuple(out.shape) != tuple(shape):
            raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(out.shape)}")
        bs = self._lead_stride(out, 2)
        if bs is None:
            raise ValueError(
                f"{name} must hold each item's rows contiguously, one stride between items (as d[..., L:, :])"
            )
        return np.int64(bs)

    # -- fused steps (overrides of RnsOps' generic compositions) -------------------------------------
    def _items(self, x, name, inner: int, limbs: int):
        """x as (array, lead shape, batch stride in elements): each item, the last `inner` axes, must be
        C-contiguous and the lead axes must collapse to one stride (views such as d[..., :L, :] qualify);
        anything else is copied. The limb axis (-2) must have `limbs` entries."""
        x = self._array(x, name)
        if x.ndim < inner:
            raise ValueError(f"{name} must have at least {inner} axes, got shape {x.shape}")
        if x.shape[-2] != limbs:
            raise ValueError(f"{name} has {x.shape[-2]} limbs, expected {limbs}")
        lead = x.shape[:-inner]
        bs = self._lead_stride(x, inner)
        if bs is None:
            x = self.xp.ascontiguousarray(x)
            bs = math.prod(x.shape[-inner:])
        return x, lead, np.int64(bs)

    @staticmethod
    def _lead_stride(x, inner: int):
        """The one stride (in elements) between the items of x (its last `inner` axes, which must be
        C-contiguous), or None where the items are not contiguous or the lead axes do not collapse."""
        lead, item_shape = x.shape[: x.ndim - inner], x.shape[x.ndim - inner :]
        isz = x.itemsize
        expected = isz
        for extent, stride in zip(reversed(item_shape), reversed(x.strides[x.ndim - inner :])):
            if extent != 1 and stride != expected:
                return None
            expected *= extent
        axes = [(e, st) for e, st in zip(lead, x.strides[: len(lead)]) if e != 1]
        for (_e0, s0), (e1, s1) in zip(axes, axes[1:]):
            if s0 != s1 * e1:
                return None
        bs = axes[-1][1] if axes else math.prod(item_shape) * isz
        return None if bs < 0 or bs % isz else bs // isz

    def _part_strides(self, x, inner: int):
        """(outer stride, parts, part stride) in elements addressing x (..., parts, <inner axes>) without a
        copy where only its last lead axis keeps a stride of its own (as c[..., :2, :, :] of a (..., 3, L, n)
        array), or None."""
        if x.ndim <= inner:
            return None
        outer = self._lead_stride(x[(..., 0) + (slice(None),) * inner], inner)
        part = x.strides[-inner - 1]
        if outer is None or part < 0 or part % x.itemsize:
            return None
        return np.int64(outer), np.int32(x.shape[-inner - 1]), np.int64(part // x.itemsize)

    def _uploaded(self, key, build):
        """Device copies of the host tables build() returns (a tuple of arrays and scalars), cached."""

        def upload():
            return tuple(self.xp.asarray(v) if isinstance(v, np.ndarray) else v for v in build())

        return self._cached(key, upload)

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
        x, lead, bs = self._items(x, "x", 3, limbs)
        key = self.xp.ascontiguousarray(key)
        batch = math.prod(lead)
        out = self.xp.empty(lead + (parts, limbs, n), dtype=np.uint64)
        self._launch(
            f"rns_inner_product{parts}",
            batch * limbs,
            n,
            (
                out,
                x,
                bs,
                np.int64(limbs * n),
                key,
                np.int32(digits),
                np.int64(batch),
                np.int32(limbs),
                np.int64(n),
                consts,
                ratios,
                r128,
            ),
        )
        return out

    def mod_down(self, x, moduli, special, add=None):
        """(x_i - [x_p]_centered) * p^-1 mod q_i (+ add) in one kernel; x (..., L + 1, n) over moduli + (p,)."""
        moduli = _check_moduli(moduli)
        limbs = len(moduli)
        x, lead, x_bs = self._items(x, "x", 2, limbs + 1)
        n = x.shape[-1]
        if add is None:
            return self._launch_mod_down(x, x_bs, lead, moduli, special, (x, np.int64(0), np.int32(1), np.int64(0)), 0)
        add = self._array(add, "add")
        if tuple(add.shape) != tuple(lead) + (limbs, n):
            raise ValueError(f"add has shape {add.shape}, expected {lead + (limbs, n)}")
        # one stride between items, or (relinearization) the first two parts of a 3-part ciphertext read
        # in place through a part stride; anything else is copied
        bs = self._lead_stride(add, 2)
        parted = self._part_strides(add, 2) if bs is None else None
        if bs is not None:
            source = (add, np.int64(bs), np.int32(1), np.int64(0))
        elif parted is not None:
            source = (add,) + parted
        else:
            add, _, add_bs = self._items(add, "add", 2, limbs)
            source = (add, add_bs, np.int32(1), np.int64(0))
        return self._launch_mod_down(x, x_bs, lead, moduli, special, source, int(source[2]))  # every part adds

    def mod_down_rotated(self, x, moduli, special, c0, galois_elt):
        """mod_down of a key-switched pair x (..., 2, L + 1, n) with c0(X^g) added to its first part, in one kernel
        that reads c0 (..., L, n) where it is (a view such as c[..., 0, :, :] included)."""
        moduli = _check_moduli(moduli)
        limbs = len(moduli)
        x, lead, x_bs = self._items(x, "x", 2, limbs + 1)
        if not lead or lead[-1] != 2:
            raise ValueError(f"x must have shape (..., 2, {limbs + 1}, n), got {x.shape}")
        (c0, c0_lead, c0_bs), n, g, _ = self._automorphism_args(c0, galois_elt, moduli)
        if tuple(c0_lead) != tuple(lead[:-1]) or n != x.shape[-1]:
            raise ValueError(f"c0 has shape {c0.shape}, expected {lead[:-1] + (limbs, x.shape[-1])}")
        # both parts of an item address its c0 (part stride 0); only the first adds it
        source = (c0, c0_bs, np.int32(2), np.int64(0))
        return self._launch_mod_down(x, x_bs, lead, moduli, special, source, 1, pow(g, -1, 2 * n))

    def _launch_mod_down(self, x, x_bs, lead, moduli, special, source, added_parts: int, add_g_inv: int = 1):
        """rns_mod_down of the items of x (lead, limbs + 1, n); source: (add, item stride, parts, part stride) of the
        array added to items whose part is below added_parts, through X -> X^g (rns_mod_down_rotated) where
        add_g_inv = g^-1 mod 2n is not 1."""
        special = int(special)
        limbs, n = len(moduli), x.shape[-1]
        consts, ratios, _ = self._modulus_tables(moduli)

        def build():
            _modulus_rows((special,), "special")
            if special in moduli:
                raise ValueError("special must differ from the moduli")
            return (_shoup_rows([pow(special, -1, q) for q in moduli], moduli),)

        (p_inv,) = self._uploaded(("mod_down", moduli, special), build)
        batch = math.prod(lead)
        out = self.xp.empty(tuple(lead) + (limbs, n), dtype=np.uint64)
        add, add_bs, add_parts, add_ps = source
        self._launch(
            "rns_mod_down" if add_g_inv == 1 else "rns_mod_down_rotated",
            batch * limbs,
            n,
            (
                out,
                x,
                x_bs,
                add,
                add_bs,
                add_parts,
                add_ps,
                np.int32(added_parts),
                np.uint64(add_g_inv),
                np.uint64(special),
                p_inv,
                np.int64(batch),
                np.int32(limbs),
                np.int64(n),
                consts,
                ratios,
            ),
        )
        return out

    def tensor(self, a, b, moduli):
        """(a0 b0, a0 b1 + a1 b0, a1 b1) of a, b (..., 2, L, n) in one kernel."""
        moduli = _check_moduli(moduli)
        limbs = len(moduli)
        a, lead, a_bs = self._items(a, "a", 3, limbs)
        b, _b_lead, b_bs = self._items(b, "b", 3, limbs)
        if a.shape != b.shape or a.shape[-3] != 2:
            raise ValueError(f"a and b must both have shape (..., 2, L, n); got {a.shape} and {b.shape}")
        consts, _, _ = self._modulus_tables(moduli)
        n = a.shape[-1]
        batch = math.prod(lead)
        out = self.xp.empty(lead + (3, limbs, n), dtype=np.uint64)
        self._launch(
            "rns_tensor",
            batch * limbs,
            n,
            (out, a, a_bs, b, b_bs, np.int64(batch), np.int32(limbs), np.int64(n), consts),
        )
        return out

    @staticmethod
    def _conversion_rows(src, dst):
        """src ModConst rows, (Q/q_i)^-1 mod q_i, the factor matrix (Q/q_i) mod dst_j and dst tables."""
        if len(src) > MAX_SRC_LIMBS:
            raise ValueError(f"a base conversion takes at most {MAX_SRC_LIMBS} source moduli, got {len(src)}")
        if len(set(src)) != len(src):
            raise ValueError("source moduli must be distinct")
        src_consts, _, _ = _modulus_rows(src, "src")
        dst_consts, dst_ratios, dst_r128 = _modulus_rows(dst, "dst")
        big = math.prod(src)
        qhat = [big // q for q in src]
        qhat_inv = [pow(h % q, -1, q) for h, q in zip(qhat, src)]
        factors = np.array([[h % p for h in qhat] for p in dst], dtype=np.uint64).reshape(len(dst), len(src))
        return big, qhat_inv, src_consts.view(np.uint8), factors, dst_consts.view(np.uint8), dst_ratios, dst_r128

    def _behz_extend_tables(self, q, bsk, m_tilde):
        """The device tables of rns_behz_extend for (q, B_sk, m~), uploaded once."""

        def build():
            big_q, qhat_inv, src_c, factors, dst_c, dst_r, dst_r128 = self._conversion_rows(q, bsk + (m_tilde,))
            src_w = _shoup_rows([m_tilde * v for v in qhat_inv], q)
            neg = _shoup_rows([(-pow(big_q, -1, m_tilde)) % m_tilde], (m_tilde,))[0]
            m_inv = [pow(m_tilde, -1, b) for b in bsk]
            # the division by m~ folded into the rows of B_sk (the row of m~ stays as it is)
            factors[: len(bsk)] = _scaled_rows(factors[: len(bsk)], m_inv, bsk)
            return (
                src_c,
                src_w,
                dst_c,
                dst_r,
                dst_r128,
                factors,
                np.uint64(neg[0]),
                np.uint64(neg[1]),
                _signed_terms([big_q * v for v in m_inv], bsk),
            )

        return self._uploaded(("behz_extend", q, bsk, m_tilde), build)

    def _launch_behz_extend(self, out, out_bs, out_q, sources, lead, q, bsk, m_tilde):
        """rns_behz_extend over the lead items, each the parts of one or two (array, batch stride, parts)
        sources; out (and out_q, the q rows, when not None) one part every out_bs elements."""
        n = out.shape[-1]
        parts = sum(k for _, _, k in sources)
        rows = math.prod(lead) * parts
        (x, x_bs, x_parts), (x2, x2_bs, _) = sources[0], sources[-1]
        self._launch(
            "rns_behz_extend",
            rows,
            n,
            (
                out,
                np.int64(out_bs),
                out if out_q is None else out_q,
                np.int32(out_q is not None),
                x,
                x_bs,
                x2,
                x2_bs,
                np.int32(x_parts),
                np.int32(parts),
                np.int64(rows),
                np.int32(len(q)),
                np.int32(len(bsk)),
                np.int64(n),
                *self._behz_extend_tables(q, bsk, m_tilde),
            ),
        )

    def behz_extend(self, x, q, bsk, m_tilde, out=None):
        """BEHZ exact extension q -> B_sk (FastBConv with m~ and the small Montgomery reduction) in one kernel,
        written into `out` when given."""
        q, bsk = _check_moduli(q, "q"), _check_moduli(bsk, "bsk")
        x, lead, bs = self._items(x, "x", 2, len(q))
        shape = lead + (len(bsk), x.shape[-1])
        if out is None:
            out, out_bs = self.xp.empty(shape, dtype=np.uint64), math.prod(shape[-2:])
        else:
            out_bs = self._out_items(out, shape)
        self._launch_behz_extend(out, out_bs, None, [(x, bs, 1)], lead, q, bsk, int(m_tilde))
        return out

    def behz_extend_stack(self, parts, q, bsk, m_tilde):
        """RnsOps.behz_extend_stack in one kernel that reads one or two sources of equal batch shape where they
        are and writes both the q rows and the extension (others: the generic copy and extension)."""
        q, bsk = _check_moduli(q, "q"), _check_moduli(bsk, "bsk")
        parts = [self._array(p, "parts") for p in parts]
        if not 1 <= len(parts) <= 2 or len({p.shape[:-3] for p in parts}) != 1 or min(p.ndim for p in parts) < 3:
            return super().behz_extend_stack(parts, q, bsk, m_tilde)
        sources = []
        for p in parts:
            x, lead, bs = self._items(p, "parts", 3, len(q))
            sources.append((x, bs, p.shape[-3]))
        n, limbs = parts[0].shape[-1], len(q)
        full = self.xp.empty(lead + (sum(p.shape[-3] for p in parts), limbs + len(bsk), n), dtype=np.uint64)
        out_bs = (limbs + len(bsk)) * n  # one part (its q rows, then its B_sk rows) after another
        self._launch_behz_extend(
            full[..., limbs:, :], out_bs, full[..., :limbs, :], sources, lead, q, bsk, int(m_tilde)
        )
        return full

    def _behz_floor_tables(self, q, bsk, t):
        """The device tables of rns_behz_floor for (q, B_sk, t), uploaded once."""

        def build():
            big_q, qhat_inv, src_c, factors, dst_c, dst_r, dst_r128 = self._conversion_rows(q, bsk)
            q_inv = [pow(big_q, -1, b) for b in bsk]
            return (
                src_c,
                _shoup_rows([t * v for v in qhat_inv], q),
                dst_c,
                dst_r,
                dst_r128,
                _scaled_rows(factors, [-v for v in q_inv], bsk),
                np.array([t * v % b for v, b in zip(q_inv, bsk)], dtype=np.uint64),
            )

        return self._uploaded(("behz_floor", q, bsk, t), build)

    def _behz_pair(self, d_q, d_bsk, q, bsk):
        """(d_q, d_bsk, lead shape, their batch strides): the items of the two, each over its base, checked."""
        d_q, lead, dq_bs = self._items(d_q, "d_q", 2, len(q))
        d_bsk, b_lead, db_bs = self._items(d_bsk, "d_bsk", 2, len(bsk))
        if b_lead != lead or d_q.shape[-1] != d_bsk.shape[-1]:
            raise ValueError(f"d_q {d_q.shape} and d_bsk {d_bsk.shape} must have the same batch axes and n")
        return d_q, d_bsk, lead, dq_bs, db_bs

    def behz_floor(self, d_q, d_bsk, t, q, bsk):
        """BEHZ fast floor (t d_bsk - FastBConv(t d_q)) * Q^-1 into B_sk in one kernel."""
        q, bsk = _check_moduli(q, "q"), _check_moduli(bsk, "bsk")
        tables = self._behz_floor_tables(q, bsk, int(t))
        d_q, d_bsk, lead, dq_bs, db_bs = self._behz_pair(d_q, d_bsk, q, bsk)
        n = d_q.shape[-1]
        batch = math.prod(lead)
        out = self.xp.empty(lead + (len(bsk), n), dtype=np.uint64)
        self._launch(
            "rns_behz_floor",
            batch,
            n,
            (
                out,
                d_q,
                dq_bs,
                d_bsk,
                db_bs,
                np.int64(batch),
                np.int32(len(q)),
                np.int32(len(bsk)),
                np.int64(n),
                *tables,
            ),
        )
        return out

    def _behz_sk_tables(self, base_b, m_sk, q):
        """The device tables of rns_behz_sk for (B, m_sk, q), uploaded once."""

        def build():
            m_b, inv, src_c, factors, dst_c, dst_r, dst_r128 = self._conversion_rows(base_b, q + (m_sk,))
            w = _shoup_rows([pow(m_b, -1, m_sk)], (m_sk,))[0]
            return (
                src_c,
                _shoup_rows(inv, base_b),
                dst_c,
                dst_r,
                dst_r128,
                factors,
                np.uint64(w[0]),
                np.uint64(w[1]),
                _signed_terms([-m_b for _ in q], q),
            )

        return self._uploaded(("behz_sk", base_b, m_sk, q), build)

    def behz_sk(self, x, base_b, m_sk, q):
        """Shenoy-Kumaresan conversion B u {m_sk} -> q in one kernel."""
        base_b, q = _check_moduli(base_b, "base_b"), _check_moduli(q, "q")
        m_sk = int(m_sk)
        # the kernel's source count is |B|; x holds B and m_sk
        return self._conversion(
            "rns_behz_sk", x, len(base_b), len(q), self._behz_sk_tables(base_b, m_sk, q), x_limbs=len(base_b) + 1
        )

    def behz_scale_down(self, d_q, d_bsk, t, q, base_b, m_sk):
        """RnsOps.behz_scale_down in one kernel: each coefficient's B_sk values stay in its thread."""
        q, base_b = _check_moduli(q, "q"), _check_moduli(base_b, "base_b")
        m_sk, t = int(m_sk), int(t)
        bsk = base_b + (m_sk,)
        # the tables refuse more than MAX_SRC_LIMBS sources (q, then B), as the separate kernels' do
        floor_tables, sk_tables = self._behz_floor_tables(q, bsk, t), self._behz_sk_tables(base_b, m_sk, q)
        d_q, d_bsk, lead, dq_bs, db_bs = self._behz_pair(d_q, d_bsk, q, bsk)
        n = d_q.shape[-1]
        batch = math.prod(lead)
        out = self.xp.empty(lead + (len(q), n), dtype=np.uint64)
        args = (out, np.int64(len(q) * n), d_q, dq_bs, d_bsk, db_bs, np.int64(batch), np.int32(len(q)))
        args += (np.int32(len(base_b)), np.int64(n)) + floor_tables + sk_tables
        self._launch("rns_behz_floor_sk", batch, n, args)
        return out

    def scale_round(self, x, q, t, gamma, add=None):
        """BFV decryption's scale and round in one kernel, `add` (c0) joined on the way."""
        q = _check_moduli(q, "q")
        t, gamma = int(t), int(gamma)

        def build():
            big_q, qhat_inv, src_c, factors, dst_c, dst_r, dst_r128 = self._conversion_rows(q, (t, gamma))
            return (
                src_c,
                _shoup_rows([t * gamma * v for v in qhat_inv], q),
                dst_c,
                dst_r,
                dst_r128,
                factors,
                _shoup_rows([(-pow(big_q, -1, m)) % m for m in (t, gamma)], (t, gamma)),
                _shoup_rows([pow(gamma, -1, t)], (t,)),
            )

        tables = self._uploaded(("scale_round", q, t, gamma), build)
        x, lead, x_bs = self._items(x, "x", 2, len(q))
        added, add_bs = x, np.int64(0)
        if add is not None:
            added, add_lead, add_bs = self._items(add, "add", 2, len(q))
            if add_lead != lead or added.shape[-1] != x.shape[-1]:
                raise ValueError(f"add {added.shape} must have the shape of x {x.shape}")
        n = x.shape[-1]
        batch = math.prod(lead)
        out = self.xp.empty(lead + (n,), dtype=np.uint64)
        self._launch(
            "rns_scale_round",
            batch,
            n,
            (
                out,
                x,
                x_bs,
                added,
                add_bs,
                np.int32(add is not None),
                np.int64(batch),
                np.int32(len(q)),
                np.int64(n),
                *tables,
            ),
        )
        return out

    def _automorphism_args(self, x, galois_elt, moduli):
        """Checks of an automorphism's input; (x as (array, lead, batch stride), n, g, consts)."""
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
        return self._items(x, "x", 2, len(moduli)), n, g, consts

    def automorphism(self, x, galois_elt, moduli, ntt_form):
        """x(X) -> x(X^g) in Z_q[X]/(X^n + 1): coefficients (signed permutation) or NTT values (permutation).
        x may be a view of a larger array (each item's limbs contiguous, as c[..., 1, :, :])."""
        (x, lead, x_bs), n, g, consts = self._automorphism_args(x, galois_elt, moduli)
        limbs, batch = x.shape[-2], math.prod(lead)
        out = self.xp.empty(lead + (limbs, n), dtype=np.uint64)
        log_n = n.bit_length() - 1
        if ntt_form:
            args = (out, x, x_bs, np.int64(batch), np.int32(limbs), np.int32(log_n), np.uint64(g))
        else:
            args = (
                out,
                np.int64(limbs * n),
                x,
                x_bs,
                np.int64(batch),
                np.int32(limbs),
                np.int32(log_n),
                np.uint64(g),
                consts,
            )
        self._launch("rns_automorphism_ntt" if ntt_form else "rns_automorphism_coeff", batch * limbs, n, args)
        return out

    def automorphism_add(self, x, galois_elt, moduli, acc):
        """acc += x(X^g) on coefficients, in one kernel writing acc in place (acc may be a view such as
        c[..., 0, :, :]); returns acc."""
        (x, lead, x_bs), n, g, consts = self._automorphism_args(x, galois_elt, moduli)
        limbs, batch = x.shape[-2], math.prod(lead)
        acc_bs = self._out_items(acc, lead + (limbs, n), "acc")
        log_n = n.bit_length() - 1
        args = (acc, acc_bs, x, x_bs, np.int64(batch), np.int32(limbs), np.int32(log_n), np.uint64(g), consts)
        self._launch("rns_automorphism_coeff_add", batch * limbs, n, args)
        return acc

    # -- randomness ------------------------------------------------------------------------------
    def _shape(self, shape, name="shape"):
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"{name} must have non-negative extents, got {shape}")
        return shape

    # Random sampling: ChaCha20 keyed with 256 bits of os.urandom per engine and device, a fresh nonce per
    # call (kernels/rns.cu states the mapping from keystream to samples; tests/sampler_model.py models it).
    #
    # CUDA graphs: a recorded graph repeats its launches with the arguments they had when recorded, so a
    # call number passed as a launch argument would be replayed, and every replay would repeat the same
    # keystream (the same encryption randomness for different messages). The call number is therefore
    # claimed on the device (rns_sampler_claim, an atomic add on the engine's counter) in stream order just
    # before each sampler, which reads it from device memory: every replay of a recorded sampling call draws
    # under a new nonce. GraphReplayer (hebatch/backend/graphs.py) also compares a graph's first replay with
    # a direct run and drops it when they differ, which fresh randomness under a shared counter always does.
    # A graph that samples is therefore recorded under a sampler of its own (private_sampler): its own key
    # and counter, so the check can rewind the counter and run directly under the same nonces (an identical
    # result, of which only one copy is kept), while no other call ever draws under that key.
    def _capturing(self) -> bool:
        """Whether the current stream is recording a CUDA graph (False for array modules without CUDA)."""
        if self._runtime is None:
            return False
        stream = self.xp.cuda.get_current_stream()
        try:
            return bool(stream.is_capturing())
        except Exception:  # the legacy stream while another stream captures: treat as capturing
            return True

    def _new_sampler(self):
        """A fresh (key, counter) on the current device: the counter zeroed before any stream claims from it."""
        key = tuple(np.uint64(w) for w in np.frombuffer(os.urandom(32), dtype="<u8"))
        counter = self.xp.zeros(1, dtype=np.uint64)
        if self._runtime is not None:
            self.xp.cuda.get_current_stream().synchronize()
        return key, counter

    def private_sampler(self):
        """A sampler (key, counter) of its own for one recorded graph; made outside any capture."""
        if self._capturing():
            raise RuntimeError("a private sampler cannot be made inside a CUDA graph capture")
        return self._new_sampler()

    @contextlib.contextmanager
    def sampling_with(self, sampler):
        """Random draws of this thread come from `sampler` (from private_sampler) inside the block."""
        outer = getattr(self._local, "sampler", None)
        self._local.sampler = sampler
        try:
            yield
        finally:
            self._local.sampler = outer

    def rewind_sampler(self, sampler):
        """Sets a private sampler's counter back to zero, in stream order (to check its graph, see above)."""
        sampler[1].fill(0)

    def _sampler(self):
        """(key, counter) this call draws under: a private sampler given by sampling_with, else the current
        device's: four uint64 words of a 256-bit ChaCha20 key from os.urandom, and a one-word device array
        counting the calls (the nonces) drawn under it, made on first use."""
        private = getattr(self._local, "sampler", None)
        if private is not None:
            return private
        device = self._device()
        with self._lock:
            if self._sampler_pid != os.getpid():  # a forked child: never reuse the parent's key and nonces
                self._samplers.clear()
                self._sampler_pid = os.getpid()
            state = self._samplers.get(device)
            if state is None:
                if self._capturing():
                    # a counter made inside a recording would be reset by every replay
                    raise RuntimeError("the first random sampling on a device cannot run inside a CUDA graph capture")
                state = self._samplers[device] = self._new_sampler()
        return state

    def _sample(self, kernel, shape, dtype, args):
        """A new array of `shape` filled by `kernel`, one draw per element, under a nonce claimed on the device."""
        count = math.prod(shape)
        blocks = -(-count // SAMPLER_DRAWS_PER_BLOCK)
        if blocks > SAMPLER_MAX_BLOCKS:  # one nonce covers 2^32 blocks of keystream (a 32-bit counter)
            raise ValueError(
                f"shape has {count} elements; one random call draws at most "
                f"{SAMPLER_MAX_BLOCKS * SAMPLER_DRAWS_PER_BLOCK} (split the batch)"
            )
        out = self.xp.empty(shape, dtype=dtype)
        if count == 0:
            return out
        key, counter = self._sampler()
        call = self.xp.empty(1, dtype=np.uint64)  # this call's number, written on the device
        self._function("rns_sampler_claim")((1,), (1,), (counter, call))
        grid = min(-(-blocks // BLOCK), self._sm_count() * SAMPLER_BLOCKS_PER_SM)
        self._function(kernel)((grid,), (BLOCK,), (out, np.int64(count), *args, *key, call))
        return out

    def random_uniform(self, shape, moduli):
        """Uniform residues of shape (..., L, n) mod each limb's modulus (128 keystream bits per value)."""
        moduli = _check_moduli(moduli)
        shape = self._shape(shape)
        if len(shape) < 2 or shape[-2] != len(moduli):
            raise ValueError(f"shape must be (..., {len(moduli)}, n) for {len(moduli)} moduli, got {shape}")
        consts, ratios, _ = self._modulus_tables(moduli)
        args = (np.int32(len(moduli)), np.int64(shape[-1]), consts, ratios)
        return self._sample("rns_random_uniform", shape, np.uint64, args)

    def random_ternary(self, shape):
        """int64 values uniform in {-1, 0, 1}."""
        shape = self._shape(shape)
        return self._sample("rns_random_ternary", shape, np.int64, ())

    def random_gaussian(self, shape, sigma=3.2):
        """int64 rounded Gaussian values of standard deviation sigma, tails cut at 6 sigma."""
        sigma = float(sigma)
        if not 0 < sigma < 2**40:
            raise ValueError(f"sigma must be positive and finite, got {sigma}")
        return self._sample("rns_random_gaussian", self._shape(shape), np.int64, (np.float64(sigma),))
