"""CuPy backend: CuPy arrays in, CuPy arrays out, on the array's device and the current CUDA stream.

Every transform is a sequence of `ntt_pass` launches (kernels/ntt.cu) that the plan hands over
finished (`plan.gpu_launches`, built in hebatch/ntt/launch.py) with its tables; tables are uploaded once
per (plan, device, direction) and kept, with each launch's parameter struct (`pass_params`), in the
backend's table cache. A launch passes its three buffers and that struct. Nothing on this path
synchronises with the host or copies through it. The internal order (natural=False) is the natural order: the passes
transpose as they store, so no permutation pass is ever needed.
"""

from __future__ import annotations

import numpy as np

from ..cache import TABLES
from ..interface import WordNTT
from ..kernels import (
    LANE_MODES,
    MERGE_TABLE_PARAMS,
    NTT_PASS_PARAMS,
    TABLE_MODES,
    TWIDDLE_GRID_PARAMS,
    WORD_BITS,
    arith_name,
    elementwise_blocks,
    grid_exponents,
    launch_properties,
    modconst_rows,
    pack,
)
from .loader import BoundLaunch, load_module, struct_argument


def modconst_table(plan, idx) -> np.ndarray:
    """struct ModConst rows of the plan's limbs idx."""
    return modconst_rows([plan.moduli[i] for i in idx])


class CupyBackend(WordNTT):
    name = "gpu"

    def __init__(self):
        import cupy

        self.xp = cupy

    def owns(self, x) -> bool:
        return isinstance(x, self.xp.ndarray)

    def check_same_device(self, a, b) -> None:
        if a.device.id != b.device.id:
            raise ValueError(f"a is on GPU {a.device.id} but b is on GPU {b.device.id}: put them on one device")

    def shares_memory(self, a, b) -> bool:
        return bool(self.xp.shares_memory(a, b))

    def work_dtype(self, dtype, moduli):
        """uint32 data runs in 32-bit kernels when every modulus < 2^31; otherwise in uint64."""
        if np.dtype(dtype) == np.uint32 and all(q < 2**31 for q in moduli):
            return np.dtype(np.uint32)
        return np.dtype(np.uint64)

    # -- device state, built once per plan and device ----------------------------------------------
    def _cached(self, plan, key, build):
        return TABLES.get(self.xp.cuda.Device().id, ("ntt", plan) + key, build)

    def _consts(self, plan, idx):
        return self._cached(plan, ("consts", idx), lambda: self.xp.asarray(modconst_table(plan, idx).view(np.uint8)))

    def _tables(self, plan, idx, inverse, word_bits):
        """Host tables (scalars) and their device copies per pass. The shared table of multi-pass merge
        transforms of 64-bit words (n entries per limb) is built on the device (merge_table kernel), once
        for every pass: on the host it would take about half a microsecond per entry."""
        on_device = plan.algorithm == "radix2" and word_bits == 64 and len(plan.gpu_passes(8)) > 1

        def build():
            host = plan.gpu_pass_tables(idx, inverse, word_bits, merge_sub=not on_device)
            device = [{k: self.xp.asarray(v) for k, v in t.items() if isinstance(v, np.ndarray)} for t in host]
            if on_device:
                specs = plan.merge_specs(idx, inverse)
                sub = self.xp.empty((len(specs), plan.n, 2), dtype=np.uint64)
                last_bits = plan.merge_last_bits(word_bits)
                for limb, (q, root, form) in enumerate(specs):
                    self.merge_table(q, root, plan.n, form, out=sub[limb], last_bits=last_bits)
                for tables in device:
                    tables["sub"] = sub
            return host, device

        return self._cached(plan, ("tables", idx, inverse, word_bits), build)

    def merge_table(self, q: int, root: int, n: int, negacyclic: bool, *, out=None, last_bits: int = 0):
        """hebatch.ntt.tables.merge_table's (n, 2) table of 64-bit words for (q, root), computed on the
        current device (into `out`, C-contiguous, if given): root^E of every entry from two power
        tables, with its Shoup companion; the stages from `last_bits` on in a last pass's order
        (tables.last_pass_order; 0: natural)."""
        from ...arith import power_lookup, with_companions

        xp = self.xp
        log_order = _power_of_two_order(root, q)
        if log_order is None or n < 2 or n & (n - 1):
            raise ValueError(f"merge_table needs a root of power-of-two order and n a power of two >= 2, got n = {n}")
        if not 0 <= last_bits < n.bit_length() - 1:
            raise ValueError(f"last_bits must be in 0..{n.bit_length() - 2} for n = {n}, got {last_bits}")
        high, low, bits = power_lookup(q, root, log_order)
        name = f"merge_table<{arith_name([q], 64)}>"
        kernel = load_module("ntt.cu", name_expressions=(name,)).get_function(name)
        out = xp.empty((n, 2), dtype=np.uint64) if out is None else out
        keep = (
            xp.asarray(with_companions(q, high, 64)),
            xp.asarray(with_companions(q, low, 64)),
            xp.asarray(modconst_rows([q]).view(np.uint8)),
        )
        params = pack(
            MERGE_TABLE_PARAMS,
            high=keep[0],
            low=keep[1],
            consts=keep[2],
            count=n,
            mult=2 if negacyclic else 1,
            add=1 if negacyclic else 0,
            mask=(1 << log_order) - 1,
            log_n=n.bit_length() - 1,
            bits=bits,
            last_bits=last_bits,
        )
        kernel((elementwise_blocks(n, 256, xp.cuda.Device().id),), (256,), (out, struct_argument(params)))
        return out

    # -- transforms --------------------------------------------------------------------------------
    def _run(self, x, plan, inverse: bool, out=None, in2=None):
        xp = self.xp
        groups = plan.limb_groups
        if len(groups) == 1:
            x = x if x.flags.c_contiguous else xp.ascontiguousarray(x)  # the call costs host time even when a no-op
            return self._run_group(x, in2, out, plan, groups[0][0], inverse, shape=x.shape)
        result = xp.empty(x.shape, dtype=x.dtype) if out is None else out  # C order whatever x's strides
        for idx, _ in groups:  # limbs of different reduction kinds run as separate batches
            sel = list(idx)
            part = xp.empty((x.shape[0], len(sel), x.shape[2]), dtype=x.dtype)
            self._run_group(
                xp.ascontiguousarray(x[:, sel, :]),
                None if in2 is None else xp.ascontiguousarray(in2[:, sel, :]),
                part,
                plan,
                idx,
                inverse,
            )
            result[:, sel, :] = part
        return result

    def _program(self, plan, idx, inverse, rows, limbs, word_bits, fuse, spread=1):
        """The launches of one transform with every argument but the buffers bound (cached), so a call
        costs little more than its kernel launches. spread > 1: the first pass reads input row r // spread
        for row r (forward_spread)."""

        def build():
            host, device = self._tables(plan, idx, inverse, word_bits)
            l2_bytes = launch_properties(self.xp.cuda.Device().id)["l2_bytes"]  # 0 on host builds
            launches = plan.gpu_launches(idx, host, rows, word_bits, fuse, l2_bytes)
            module = load_module("ntt.cu", name_expressions=tuple(sorted({ln.name for ln in launches})))
            consts = self._consts(plan, idx)
            program = []
            for ln in launches:
                in_spread = spread if ln.src == "x" else 1
                params = pass_params(
                    ln, host[ln.pass_index], device[ln.pass_index], consts, rows, plan.n, limbs, in_spread
                )
                kernel = module.get_function(ln.name)
                if ln.smem > 48 * 1024:
                    kernel.max_dynamic_shared_size_bytes = ln.smem
                # the struct holds the tables' addresses: the program keeps the tables alive with it
                launch = BoundLaunch(kernel, ln.grid, ln.block, ln.smem, params, buffers=3)
                program.append((launch, ln.src, ln.dst, ln.template[-1]))
            return program, (consts, device)

        return self._cached(plan, ("program", idx, inverse, rows, limbs, word_bits, fuse, spread), build)

    def _run_group(self, x, in2, out, plan, idx, inverse, spread=1, shape=None):
        """The transform of one limb group into out (batch, limbs, n), or, with out None, into a new array of
        `shape` and x's dtype, allocated just before the launch that writes it (after the first pass's launch
        when there are several, so that pass starts sooner). Returns the result. x has the result's shape, or
        (batch, n) when spread (= limbs) rows of it read each of its rows."""
        shape = out.shape if out is not None else shape
        rows, limbs = shape[0] * shape[1], shape[1]
        if rows == 0:
            return self.xp.empty(shape, dtype=x.dtype) if out is None else out
        program, _tables = self._program(plan, idx, inverse, rows, limbs, WORD_BITS[x.dtype], in2 is not None, spread)
        buffers = {"x": x, "out": out}
        for launch, src, dst, fused in program:
            target = buffers.get(dst)
            if target is None:  # the scratch of a multi-pass transform, or the result
                target = buffers[dst] = self.xp.empty(shape, dtype=x.dtype)
            source = buffers[src]
            launch(source, in2 if fused else source, target)
        return buffers["out"]

    def forward(self, x, plan, *, natural=True, out=None):
        return self._run(x, plan, inverse=False, out=out)

    def inverse(self, y, plan, *, natural=True, out=None):
        return self._run(y, plan, inverse=True, out=out)

    def inverse_product_natural(self, a, b, plan):
        return self.inverse_product(a, b, plan)  # the internal order is the natural one

    def forward_spread(self, x, plan):
        """The first pass reads each row of x for every limb, unreduced, when the 64-bit butterflies accept every
        entry below max(q) on every limb (Mod64 takes inputs in [0, 4q), Mod60 more); otherwise the spread copy."""
        groups = plan.limb_groups
        if len(groups) > 1 or groups[0][1] or x.dtype != np.uint64 or max(plan.moduli) > 4 * min(plan.moduli):
            return super().forward_spread(x, plan)
        shape = (x.shape[0], plan.limbs, plan.n)
        return self._run_group(
            self.xp.ascontiguousarray(x), None, None, plan, groups[0][0], False, spread=plan.limbs, shape=shape
        )

    def inverse_product(self, a, b, plan):
        """inverse(a * b) with the pointwise product fused into the first pass's loads."""
        if a.shape != b.shape or len(plan.limb_groups) > 1:
            return super().inverse_product(a, b, plan)
        return self._run(a, plan, inverse=True, in2=self.xp.ascontiguousarray(b))

    def twiddle_grid_mul(self, x, modulus, root, row0, col0, row_step=1, col_step=1, *, out=None):
        xp = self.xp
        from ...arith import power_lookup, with_companions

        rows, cols = x.shape
        result = xp.empty((rows, cols), dtype=np.uint64) if out is None else out
        if rows == 0 or cols == 0:
            return result
        log_order = _power_of_two_order(root, modulus)
        if log_order is None:  # not a root of unity of power-of-two order: exact, on the host
            from ..cpu.ntt import NumpyBackend

            host = NumpyBackend().twiddle_grid_mul(x.get(), modulus, root, row0, col0, row_step, col_step)
            result[...] = xp.asarray(host)
            return result

        def build():
            high, low, bits = power_lookup(modulus, root, log_order)
            return (
                xp.asarray(with_companions(modulus, high, 64)),
                xp.asarray(with_companions(modulus, low, 64)),
                bits,
                xp.asarray(modconst_rows([modulus]).view(np.uint8)),
            )

        high, low, bits, consts = TABLES.get(xp.cuda.Device().id, ("ntt", "twiddle-grid", modulus, root), build)
        order = 1 << log_order
        name = f"twiddle_grid<{arith_name([modulus], 64)}>"
        kernel = load_module("ntt.cu", name_expressions=(name,)).get_function(name)
        itemsize = x.dtype.itemsize
        target = result if result.flags.c_contiguous else xp.empty((rows, cols), dtype=np.uint64)
        blocks = elementwise_blocks(rows * cols, 256, xp.cuda.Device().id)
        params = pack(
            TWIDDLE_GRID_PARAMS,
            high=high,
            low=low,
            consts=consts,
            rows=rows,
            cols=cols,
            x_row_stride=x.strides[0] // itemsize,
            x_col_stride=x.strides[1] // itemsize,
            **grid_exponents(order, row0, row_step, col0, col_step),
            bits=bits,
        )
        kernel((blocks,), (256,), (x, target, struct_argument(params)))
        if target is not result:
            result[...] = target
        return result

    def pointwise_mul(self, a, b, plan, *, out=None):
        xp = self.xp
        batch = max(a.shape[0], b.shape[0])
        result = xp.empty((batch,) + a.shape[1:], dtype=a.dtype) if out is None else out
        word_bits = WORD_BITS[a.dtype]
        single = len(plan.limb_groups) == 1
        for idx, _ in plan.limb_groups:
            sel = list(idx)
            pa, pb = (xp.ascontiguousarray(v if single else v[:, sel, :]) for v in (a, b))
            part = result if single and result.flags.c_contiguous else xp.empty((batch, len(sel), a.shape[2]), a.dtype)
            name = f"pointwise_mul<{arith_name([plan.moduli[i] for i in idx], word_bits)}>"
            kernel = load_module("ntt.cu", name_expressions=(name,)).get_function(name)
            limbs, n = len(sel), a.shape[2]
            blocks = elementwise_blocks(batch * limbs * n, 256, xp.cuda.Device().id)
            kernel(
                (blocks,),
                (256,),
                (
                    pa,
                    pb,
                    part,
                    np.int64(batch * limbs),
                    np.int64(n),
                    np.int32(limbs),
                    np.int64(pa.shape[0] * limbs),
                    np.int64(pb.shape[0] * limbs),
                    self._consts(plan, idx),
                ),
            )
            if part is not result:
                result[:, sel, :] = part
        return result


def _power_of_two_order(root: int, q: int) -> int | None:
    """log2 of the multiplicative order of root mod q if that order is a power of two (else None)."""
    value = root % q
    for k in range(64):
        if value == 1:
            return k
        value = value * value % q
    return None


def _width(table) -> int:
    return 0 if table is None else table.shape[1]


_BITREV_LANE_MODES = frozenset(LANE_MODES[m] for m in ("bitrev", "bitrev_ordered", "bitrev_ordered_paired"))
_ROW_LANE_MODES = frozenset(LANE_MODES[m] for m in ("row", "row_dense"))


def pass_params(
    ln, tables: dict, device_tables: dict, consts, rows: int, n: int, limbs: int, in_spread: int = 1
) -> np.ndarray:
    """struct NttPassParams of one ntt_pass launch `ln` (hebatch.ntt.launch.Launch) over `rows` rows of n
    elements (row r on limb r % limbs, reading input row r // in_spread): its geometry, the scalars and
    table widths of the pass's host `tables`, and the addresses of its `device_tables` (arrays by name,
    with the same layout as the host ones) and of the limbs' ModConst rows `consts`. Tables a pass does
    not read point at its sub-transform table."""
    g, log_np, mode = ln.geometry, ln.template[1], ln.template[4]
    # the kernel's assumptions about these launches (kernels/ntt.cu, ROW_CONSTANTS and MERGE_LAST)
    if mode in _ROW_LANE_MODES and (n != 1 << log_np or g["d_i"] != 1):
        raise ValueError(f"a pass along rows of 2^{log_np} points over rows of {n} (d_i = {g['d_i']})")
    if g["limb_rows"] and (mode in _ROW_LANE_MODES or g["limb_rows"] * limbs != rows):
        raise ValueError(f"blocks limb by limb over {g['limb_rows']} rows a limb: {rows} rows of {limbs} limbs")
    if mode in _BITREV_LANE_MODES and tables["post_mode"] == TABLE_MODES["two"] and tables["post_bits"] > g["s0"]:
        raise ValueError(f"post factor split at bit {tables['post_bits']} above the last pass's s0 = {g['s0']}")
    if (
        mode in _BITREV_LANE_MODES
        and tables["post_mode"] == TABLE_MODES["one"]
        and tables["post_mask"] not in (0, n - 1)
    ):
        raise ValueError(f"post table mask {tables['post_mask']:#x} of a merge's last pass: n - 1 or 0 expected")
    sub = device_tables["sub"]
    c_p, alpha, beta, gamma, delta = tables["exponent"]
    return pack(
        NTT_PASS_PARAMS,
        consts=consts,
        tw=sub,
        zh=device_tables.get("z_high", sub),
        zl=device_tables.get("z_low", sub),
        ph=device_tables.get("post_high", sub),
        pl=device_tables.get("post_low", sub),
        rows=rows,
        n=n,
        d_i=g["d_i"],
        d_o=g["d_o"],
        digit_d=g["digit_d"],
        digit_m=g["digit_m"],
        tw_stride=sub.shape[1],
        z_stride_h=_width(tables["z_high"]),
        z_stride_l=_width(tables["z_low"]),
        p_stride_h=_width(tables["post_high"]),
        p_stride_l=_width(tables["post_low"]),
        z_mask=tables["z_mask"],
        c_p=c_p,
        p_mask=tables["post_mask"],
        limbs=limbs,
        log_do=g["log_do"],
        s0=g["s0"],
        use_h=g["use_h"],
        z_bits=tables["z_bits"],
        alpha=alpha,
        beta=beta,
        gamma=gamma,
        delta=delta,
        p_bits=tables["post_bits"],
        post_by_output=tables["post_by_output"],
        keep_positions=g["keep_positions"],
        in_spread=in_spread,
        limb_rows=g["limb_rows"],
    )
