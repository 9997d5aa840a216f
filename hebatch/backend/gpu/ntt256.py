"""CuPy backend for NTTs over the 256-bit scalar fields of zk provers (BN254, BLS12-381, BLS12-377).

Arrays are CuPy (batch, n, 4) uint64, little-endian limbs, standard form, as at the API; kernels
(kernels/ntt256.cu) read and write that layout directly and keep data in standard form, with every
constant multiplier in Montgomery form. Work runs on the current CUDA stream with no host
synchronisation; results are fresh C-ordered arrays.

Orders (one output buffer, no scratch copy):
  forward natural -> bitrev : DIF passes (x -> out)
  forward bitrev  -> natural: DIT passes (x -> out)
  natural -> natural        : DIT passes (x -> out), the first reading x bit-reversed (no permutation pass)
  bitrev  -> bitrev         : DIF passes likewise
Inverse transforms run the same with root^-1, n^-1 applied on the last NTT pass. The passes of each
transform come finished from its launch plan (`plan=`, hebatch.ntt.launch.field_plan); each launch
passes its buffers and one parameter struct (kernels/launch.cuh).
"""

from __future__ import annotations

import operator
import threading

import numpy as np

from ...field import BLS12_377_FR, BLS12_381_FR, BN254_FR, PrimeField
from ..cache import TABLES, instance_tokens
from ..interface import FieldNTT
from ..kernels import (
    GRID256_PARAMS,
    NTT256_LOG_BLOCK,
    NTT256_PASS_PARAMS,
    NTT256_THREADS,
    address,
    elementwise_blocks,
    grid_exponents,
    pack,
)
from .loader import BoundLaunch, load_module, struct_argument

FIELD_STRUCTS = {BN254_FR.p: "BN254Fr", BLS12_381_FR.p: "BLS12_381Fr", BLS12_377_FR.p: "BLS12_377Fr"}
"""The kernel struct (kernels/field256.cuh) of each supported field, by modulus."""


THREADS = NTT256_THREADS  # threads per block of every kernel of kernels/ntt256.cu
ORDERS = ("natural", "bitrev")
LIMBS = 4
_TOKENS = instance_tokens()


# -- host-side tables (Python ints) ------------------------------------------------------------------


def montgomery_limbs(field: PrimeField, values) -> np.ndarray:
    """(len(values), 4) uint64: each v R mod p as little-endian limbs."""
    p, r = field.p, field.R
    ints = np.array([v * r % p for v in values] + [0], dtype=object)[:-1]
    out = np.empty((len(ints), LIMBS), dtype=np.uint64)
    for k in range(LIMBS):
        out[:, k] = ((ints >> (64 * k)) & ((1 << 64) - 1)).astype(np.uint64)
    return out


def powers(base: int, count: int, p: int, step: int = 1, start: int = 1) -> list[int]:
    """start * base^(step e) mod p for e < count."""
    b = pow(base, step, p)
    out, v = [], start % p
    for _ in range(count):
        out.append(v)
        v = v * b % p
    return out


def split_bits(log_n: int) -> int:
    return (log_n + 1) // 2


def power_tables(field: PrimeField, base: int, log_n: int):
    """Two-level tables of base^e, e < 2^log_n: low[e & (2^b - 1)], high[e >> b] (Montgomery form)."""
    bits = split_bits(log_n)
    low = montgomery_limbs(field, powers(base, 1 << bits, field.p))
    high = montgomery_limbs(field, powers(base, 1 << (log_n - bits), field.p, 1 << bits))
    return low, high, bits


def direct_twiddle_table(field: PrimeField, root: int, log_n: int, log_k: int, log_low: int, factor: int = 1):
    """The 4-step twiddles of one pass as a table of M = 2^(log_low + log_k) entries, entry (u << log_low) + r
    = factor * w_M^(r u) (w_M = root^(n / M), Montgomery form), read by ntt256_pass with tw_direct at
    u = bitrev_k(t). The reference (Python ints) for the table CupyFieldNTT builds on the device."""
    p, shift = field.p, log_n - log_low - log_k
    values = []
    for u in range(1 << log_k):
        values += powers(root, 1 << log_low, p, u << shift, factor)
    return montgomery_limbs(field, values)


def sub_table(field: PrimeField, root: int, log_n: int):
    """w^(e n / K_top) for e < K_top / 2, K_top = min(n, 2^NTT256_LOG_BLOCK): the twiddles of every
    in-block stage."""
    log_ktop = min(log_n, NTT256_LOG_BLOCK)
    return montgomery_limbs(
        field, powers(root, max(1, (1 << log_ktop) // 2), field.p, 1 << (log_n - log_ktop))
    ), log_ktop


# -- the engine ---------------------------------------------------------------------------------------


class CupyFieldNTT(FieldNTT):
    """Field NTTs on CuPy arrays x of shape (batch, n, 4) uint64, standard form, entries < p, for
    BN254_FR, BLS12_381_FR and BLS12_377_FR; the same interface and results as
    `cpu.ntt256.NumpyFieldNTT` (forward: X[k] = sum_j x[j] root^(jk); inverse: its exact inverse)."""

    name = "gpu"

    def __init__(self, defines: tuple[tuple[str, str], ...] = ()):
        """defines: -D options for kernels/ntt256.cu, e.g. (("FIELD256_U128", "1"),) for the portable
        64-bit-word multiplication instead of the PTX one (for debugging and comparison)."""
        import cupy

        self.xp = cupy
        self.defines = tuple(defines)
        self._lock = threading.Lock()
        self._modules: dict = {}
        self._token = next(_TOKENS)  # this instance's tables in the shared cache

    # -- checks ------------------------------------------------------------------------------------
    def _check(self, x, field, name="x"):
        if not isinstance(x, self.xp.ndarray):
            raise TypeError(f"{name} must be a CuPy array, got {type(x).__name__}")
        if not isinstance(field, PrimeField):
            raise TypeError(f"field must be a PrimeField, got {type(field).__name__}")
        if field.p not in FIELD_STRUCTS:
            raise ValueError(f"field must be one of bn254, bls12-381, bls12-377 on the GPU, got {field.name}")
        if x.dtype != np.uint64 or x.ndim != 3 or x.shape[2] != LIMBS:
            raise ValueError(f"{name} must be a (batch, n, 4) uint64 array, got {x.shape} {x.dtype}")
        n = x.shape[1]
        if n < 1 or n & (n - 1):
            raise ValueError(f"{name}: n must be a power of two, got {n}")
        if n > 1 << field.two_adicity:
            raise ValueError(f"{name}: n must be <= 2**{field.two_adicity} for {field.name}, got {n}")

    @staticmethod
    def _check_root(field, root, n):
        if isinstance(root, bool) or not hasattr(root, "__index__"):
            raise TypeError(f"root must be an int, got {type(root).__name__}")
        root = operator.index(root)
        if not 0 < root < field.p:
            raise ValueError(f"root must be an int in (0, p), got {root!r}")
        if pow(root, n, field.p) != 1 or (n > 1 and pow(root, n // 2, field.p) == 1):
            raise ValueError(f"root must be a primitive {n}-th root of unity in {field.name}")
        return root

    @staticmethod
    def _check_orders(input_order, output_order):
        for value, name in ((input_order, "input_order"), (output_order, "output_order")):
            if not isinstance(value, str) or value not in ORDERS:
                raise ValueError(f"{name} must be 'natural' or 'bitrev', got {value!r}")

    def _aligned(self, x):
        """x as a C-contiguous array whose elements start on 32-byte boundaries (the kernels load whole
        elements with 16-byte accesses): x itself where it is one, else a copy."""
        x = self.xp.ascontiguousarray(x)
        if x.size and address(x) % 32:
            x = x.copy()
        return x

    # -- device state ----------------------------------------------------------------------------
    def _module(self, field, bitrev_in=False):
        """The kernels of `field`; bitrev_in: the pass kernels reading their input bit-reversed (the first passes of
        same-order transforms), compiled apart on their first use."""
        key = (self.xp.cuda.Device().id, "module", field.p, bitrev_in)
        with self._lock:
            found = self._modules.get(key)
        if found is None:
            found = self._load(field, bitrev_in)
            with self._lock:
                self._modules[key] = found
        return found

    def _load(self, field, bitrev_in):
        s = FIELD_STRUCTS[field.p]
        flag = "true" if bitrev_in else "false"
        passes = (f"ntt256_pass<{s},false,{flag}>", f"ntt256_pass<{s},true,{flag}>")
        others = () if bitrev_in else (f"scale_by_powers256<{s}>", f"field_ops256<{s}>", f"twiddle_grid256<{s}>")
        names = passes + others
        module = load_module("ntt256.cu", defines=self.defines, name_expressions=names)
        kernels = {key: module.get_function(nm) for key, nm in zip(("dif", "dit", "scale", "ops", "grid"), names)}
        for key in ("dif", "dit"):  # blocks of up to 2^NTT256_LOG_BLOCK elements of 32 bytes (64 KiB)
            kernels[key].max_dynamic_shared_size_bytes = 32 << NTT256_LOG_BLOCK
        return kernels

    def _cached(self, key, build):
        return TABLES.get(self.xp.cuda.Device().id, ("ntt256", self._token) + key, build)

    def _ntt_tables(self, field, root, log_n):
        """Device tables of one (field, n, root): in-block twiddles, two-level 4-step twiddles, n^-1."""

        def build():
            xp = self.xp
            sub, log_ktop = sub_table(field, root, log_n)
            low, high, bits = power_tables(field, root, log_n)
            n_inv = pow(1 << log_n, -1, field.p)
            high_n_inv = montgomery_limbs(field, powers(root, 1 << (log_n - bits), field.p, 1 << bits, n_inv))
            return dict(
                sub=xp.asarray(sub),
                log_ktop=log_ktop,
                low=xp.asarray(low),
                high=xp.asarray(high),
                high_n_inv=xp.asarray(high_n_inv),
                bits=bits,
                n_inv=xp.asarray(montgomery_limbs(field, [n_inv])),
            )

        return self._cached(("ntt", field.p, log_n, root), build)

    # -- transforms --------------------------------------------------------------------------------
    def _passes(self, src, out, field, root, dit, scale, plan, bitrev_in=False):
        """Run one DIF/DIT transform of src into out (out may be src), the passes of `plan`; bitrev_in: of src
        bit-reversed (the first pass reads it so, out must not overlap src)."""
        for i, p in enumerate(plan.passes(dit, scale)):
            self.run_pass(src if i == 0 else out, out, field, root, p, bitrev_in=bitrev_in and i == 0)

    def run_pass(self, src, out, field, root, p, *, bitrev_in=False):
        """One ntt256_pass launch (`p`: a hebatch.ntt.launch.FieldPass) of a transform of src's size with
        this root (a building block, exposed so that tests can check a single pass against its model);
        bitrev_in: read position i of each row of src from its position bitrev(i) (a transform's first pass,
        with no 4-step twiddles on its loads; out must not overlap src)."""
        batch, n, _ = src.shape
        log_n = n.bit_length() - 1
        kernel = self._module(field, bitrev_in)["dit" if p.dit else "dif"]
        if bitrev_in and p.dit and p.log_low > 0:
            raise ValueError("bitrev_in is for a transform's first pass: this DIT pass has low bits (twiddled loads)")

        def build():
            t = self._ntt_tables(field, root, log_n)
            if p.direct_twiddles:  # the pass's own table (n^-1 folded in where it carries the scale)
                low = high = self._direct_table(field, root, log_n, p.log_k, p.log_low, p.scale_in_twiddle)
            else:
                low, high = t["low"], t["high_n_inv"] if p.scale_in_twiddle else t["high"]
            params = pack(
                NTT256_PASS_PARAMS,
                sub_tw=t["sub"],
                tw_low=low,
                tw_high=high,
                scale=t["n_inv"],
                total_lanes=batch << (log_n - p.log_k),
                log_n=log_n,
                log_k=p.log_k,
                log_low=p.log_low,
                log_c=p.log_c,
                log_ktop=t["log_ktop"],
                tw_bits=t["bits"],
                use_scale=int(p.scale),
                tw_direct=int(p.direct_twiddles),
            )
            # the struct holds the tables' addresses: the entry keeps the tables alive with it
            return BoundLaunch(kernel, p.grid, THREADS, p.smem, params, buffers=2), (t, low, high)

        launch, _tables = self._cached(("pass", field.p, root, log_n, batch, p, bitrev_in), build)
        launch(src, out)

    def _direct_table(self, field, root, log_n, log_k, log_low, scaled):
        """direct_twiddle_table built on the device: factor R (the Montgomery form of factor, held as a
        standard-form value) times root^((u 2^shift) r) over the (u, r) grid by the twiddle-grid kernel."""

        def build():
            factor = pow(1 << log_n, -1, field.p) if scaled else 1
            ones = self.xp.empty((1 << log_k, 1 << log_low, LIMBS), dtype=np.uint64)
            ones[...] = self.xp.asarray(montgomery_limbs(field, [factor])[0])
            table = self.twiddle_grid(ones, field, root, 0, 0, 1 << (log_n - log_low - log_k), 1)
            return table.reshape(-1, LIMBS)

        return self._cached(("direct", field.p, log_n, root, log_k, log_low, scaled), build)

    @staticmethod
    def _check_plan(plan, x):
        if plan is None or not hasattr(plan, "passes"):
            raise TypeError(
                "plan must be the launch plan of the transform (hebatch.ntt.launch.field_plan), "
                f"got {type(plan).__name__}"
            )
        batch, n, _ = x.shape
        if plan.log_n != n.bit_length() - 1 or plan.batch != batch:
            raise ValueError(f"plan is for {plan.batch} x 2^{plan.log_n} elements, x has {batch} x {n}")

    def _transform(self, x, field, root, input_order, output_order, inverse, plan):
        self._check(x, field)
        self._check_orders(input_order, output_order)
        self._check_plan(plan, x)
        n = x.shape[1]
        root = self._check_root(field, root, n)
        xp = self.xp
        x = self._aligned(x)
        out = xp.empty(x.shape, dtype=np.uint64)
        if x.shape[0] == 0:
            return out
        if n == 1:
            out[...] = x
            return out
        w = pow(root, -1, field.p) if inverse else root
        # the same orders: the transform that flips the order, its first pass reading x bit-reversed
        same = input_order == output_order
        self._passes(x, out, field, w, (input_order == "natural") == same, inverse, plan, bitrev_in=same)
        return out

    def forward(self, x, field: PrimeField, root: int, input_order="natural", output_order="natural", *, plan=None):
        """X[k] = sum_j x[j] root^(jk) for each batch row; orders 'natural' or 'bitrev' (index bits reversed).
        plan: the launch plan of x's batch and size (hebatch.ntt.launch.field_plan). Runs on x's device
        and the current stream of that device."""
        self._check(x, field)
        with x.device:
            return self._transform(x, field, root, input_order, output_order, False, plan)

    def inverse(self, y, field: PrimeField, root: int, input_order="natural", output_order="natural", *, plan=None):
        """The exact inverse of forward(., root): root^-1 and the factor n^-1."""
        self._check(y, field, "y")
        with y.device:
            return self._transform(y, field, root, input_order, output_order, True, plan)

    def scale_by_powers(self, x, field: PrimeField, base: int):
        """x[:, j] * base^j for each batch row (the shift of coset NTTs), powers from sqrt(n) tables."""
        self._check(x, field)
        if isinstance(base, bool) or not hasattr(base, "__index__"):
            raise TypeError(f"base must be an int, got {type(base).__name__}")
        base = operator.index(base)
        with x.device:
            return self._scale_by_powers(x, field, base)

    def _scale_by_powers(self, x, field, base):
        xp = self.xp
        x = self._aligned(x)
        batch, n, _ = x.shape
        out = xp.empty(x.shape, dtype=np.uint64)
        if x.size == 0:
            return out
        log_n = n.bit_length() - 1
        base %= field.p

        def build():
            low, high, bits = power_tables(field, base, log_n)
            return xp.asarray(low), xp.asarray(high), bits

        low, high, bits = self._cached(("powers", field.p, log_n, base), build)
        total = batch * n
        blocks = elementwise_blocks(total, THREADS, self.xp.cuda.Device().id)
        self._module(field)["scale"](
            (blocks,), (THREADS,), (x, out, np.int64(total), np.int32(log_n), low, high, np.int32(bits))
        )
        return out

    def twiddle_grid(self, x, field: PrimeField, root: int, row0: int, col0: int, row_step: int = 1, col_step: int = 1):
        """x[i, j] * root^((row0 + row_step i)(col0 + col_step j)) for x of shape (rows, cols, 4): the
        twiddle step of a 4-step transform on one block of its matrix. On the GPU for roots of power-of-two
        order (exponents reduced mod the order), else on the host through the CPU engine."""
        if not isinstance(x, self.xp.ndarray):
            raise TypeError(f"x must be a CuPy array, got {type(x).__name__}")
        if x.ndim != 3 or x.shape[2] != LIMBS or x.dtype != np.uint64:
            raise ValueError(f"x must be a (rows, cols, 4) uint64 array, got {x.shape} {x.dtype}")
        if not isinstance(field, PrimeField) or field.p not in FIELD_STRUCTS:
            raise ValueError(f"field must be one of bn254, bls12-381, bls12-377 on the GPU, got {field!r}")
        root, row0, col0, row_step, col_step = (operator.index(v) for v in (root, row0, col0, row_step, col_step))
        root %= field.p
        log_order = next((k for k in range(field.two_adicity + 1) if pow(root, 1 << k, field.p) == 1), None)
        xp = self.xp
        if log_order is None:  # no power-of-two order: exact on the host
            from ..cpu.ntt256 import NumpyFieldNTT

            host = NumpyFieldNTT().twiddle_grid(x.get(), field, root, row0, col0, row_step, col_step)
            with x.device:
                return xp.asarray(host)
        with x.device:
            x = self._aligned(x)
            rows, cols, _ = x.shape
            out = xp.empty(x.shape, dtype=np.uint64)
            if x.size == 0:
                return out

            def build():
                low, high, bits = power_tables(field, root, log_order)
                return xp.asarray(low), xp.asarray(high), bits

            low, high, bits = self._cached(("powers", field.p, log_order, root), build)
            order = 1 << log_order
            blocks = elementwise_blocks(rows * cols, THREADS, self.xp.cuda.Device().id)
            params = pack(
                GRID256_PARAMS,
                low=low,
                high=high,
                rows=rows,
                cols=cols,
                **grid_exponents(order, row0, row_step, col0, col_step),
                bits=bits,
            )
            self._module(field)["grid"]((blocks,), (THREADS,), (x, out, struct_argument(params)))
            return out

    def field_ops(self, a, b, field: PrimeField):
        """(a b, a + b, a - b) mod p elementwise for (count, 4) arrays (a check of the kernel arithmetic)."""
        xp = self.xp
        if a.shape != b.shape or a.ndim != 2 or a.shape[1] != LIMBS or a.dtype != np.uint64 or b.dtype != np.uint64:
            raise ValueError(f"a and b must be (count, 4) uint64 arrays of one shape, got {a.shape}, {b.shape}")
        if not isinstance(field, PrimeField) or field.p not in FIELD_STRUCTS:
            raise ValueError(f"field must be one of bn254, bls12-381, bls12-377 on the GPU, got {field!r}")
        count = a.shape[0]
        out = xp.empty((3, count, LIMBS), dtype=np.uint64)
        r2 = xp.asarray(np.array([field.R2_limbs], dtype=np.uint64))  # mont_mul(a b R^-1, R^2) = a b
        blocks = elementwise_blocks(count, THREADS, self.xp.cuda.Device().id)
        self._module(field)["ops"](
            (blocks,), (THREADS,), (self._aligned(a), self._aligned(b), r2, out, np.int64(count))
        )
        return out[0], out[1], out[2]
