"""NumPy backend: the exact CPU reference, always available.

Radix-2 Cooley-Tukey (natural in, bit-reversed out) and Gentleman-Sande (bit-reversed in, natural
out) with the table layout of `hebatch.ntt.tables`, vectorised over whole stages; 4-step as column
transforms, a twiddle multiplication, row transforms and a transpose. Limbs of different reduction
kinds (Barrett moduli, Goldilocks) are processed as separate groups.
"""

from __future__ import annotations

import numpy as np

from ...arith import ModOps
from ...field import modulus_info
from ..interface import WordNTT

U64 = np.uint64


def _stack(tables, attr):
    values = [getattr(t, attr) for t in tables]
    return None if values[0] is None else np.stack(values)


class _Radix2:
    """Stacked radix-2 tables of one limb group, shaped (L, size)."""

    def __init__(self, twiddles, ops: ModOps):
        self.size = len(twiddles[0].fwd)
        self.log = self.size.bit_length() - 1
        self.fwd, self.fwd_s = _stack(twiddles, "fwd"), _stack(twiddles, "fwd_shoup")
        self.inv, self.inv_s = _stack(twiddles, "inv"), _stack(twiddles, "inv_shoup")
        ops1 = ops.at_depth(1)
        self.n_inv = np.array([t.n_inv for t in twiddles], dtype=U64).reshape(-1, 1)
        # The last Gentleman-Sande stage also applies n^-1: its twiddle becomes inv[1] * n^-1.
        self.last = ops1.mul(self.inv[:, 1:2], self.n_inv)
        self.n_inv_s = self.last_s = None
        if self.fwd_s is not None:
            self.n_inv_s, self.last_s = ops1.shoup(self.n_inv), ops1.shoup(self.last)
        self.perm = twiddles[0].perm

    def ct(self, a, ops: ModOps, inverse_root: bool = False):
        """In place: a (B, L, R, size) natural -> bit-reversed, root w (or w^-1)."""
        tw, tws = (self.inv, self.inv_s) if inverse_root else (self.fwd, self.fwd_s)
        B, L, R, n = a.shape
        ops = ops.at_depth(3)
        m, t = 1, n // 2
        while m < n:
            v = a.reshape(B, L, R, m, 2, t)
            u, w = v[..., 0, :], v[..., 1, :]
            s = tw[:, None, m : 2 * m, None]
            ss = None if tws is None else tws[:, None, m : 2 * m, None]
            wv = ops.mul_shoup(w, s, ss)
            v[..., 1, :] = ops.sub(u, wv)
            v[..., 0, :] = ops.add(u, wv)
            m, t = 2 * m, t // 2
        return a

    def gs(self, a, ops: ModOps):
        """In place: a (B, L, R, size) bit-reversed -> natural, exact inverse of `ct` (with n^-1)."""
        B, L, R, n = a.shape
        ops = ops.at_depth(3)
        m, t = n, 1
        while m > 1:
            h = m // 2
            v = a.reshape(B, L, R, h, 2, t)
            u, w = v[..., 0, :], v[..., 1, :]
            diff = ops.sub(u, w)
            if h == 1:
                s, ss = self.last[:, None, :, None], _col(self.last_s)
                v[..., 0, :] = ops.mul_shoup(ops.add(u, w), self.n_inv[:, None, :, None], _col(self.n_inv_s))
            else:
                s = self.inv[:, None, h : 2 * h, None]
                ss = None if self.inv_s is None else self.inv_s[:, None, h : 2 * h, None]
                v[..., 0, :] = ops.add(u, w)
            v[..., 1, :] = ops.mul_shoup(diff, s, ss)
            m, t = h, 2 * t
        return a


def _col(x):
    return None if x is None else x[:, None, :, None]


class _FourStep:
    """Stacked 4-step tables of one limb group."""

    def __init__(self, plan, idx, ops: ModOps):
        cols, rows = plan.fourstep_sub_twiddles()
        self.cols = _Radix2([cols[i] for i in idx], ops)
        self.rows = _Radix2([rows[i] for i in idx], ops)
        dense = [plan.fourstep_dense_twiddles(i) for i in idx]
        tw, itw = [d[0] for d in dense], [d[1] for d in dense]
        pre, post = [d[2] for d in dense], [d[3] for d in dense]
        ops2 = ops.at_depth(2)
        self.tw, self.itw = np.stack(tw), np.stack(itw)
        self.tw_s, self.itw_s = _shoup(ops2, self.tw), _shoup(ops2, self.itw)
        if plan.negacyclic:
            ops1 = ops.at_depth(1)
            self.pre, self.post = np.stack(pre), np.stack(post)
            self.pre_s, self.post_s = _shoup(ops1, self.pre), _shoup(ops1, self.post)


def _shoup(ops, table):
    return None if ops.goldilocks else ops.shoup(table)


class NumpyBackend(WordNTT):
    name = "cpu"
    xp = np

    def writeable(self, x) -> bool:
        return bool(x.flags.writeable)

    def owns(self, x) -> bool:
        return isinstance(x, np.ndarray)

    # -- group plumbing ------------------------------------------------------------------------
    def _group_state(self, plan, idx, gold):
        key = ("cpu", plan.algorithm, idx)
        state = plan.cache.get(key)
        if state is None:
            ops = ModOps(tuple(plan.infos[i] for i in idx), depth=1)
            if plan.algorithm == "4step":
                tabs = _FourStep(plan, idx, ops)
            else:
                tabs = _Radix2([plan.radix2_twiddles()[i] for i in idx], ops)
            state = plan.cache[key] = (ops, tabs)
        return state

    def _per_group(self, x, plan, fn, out):
        result = np.empty(x.shape, dtype=U64) if out is None else out
        groups = plan.limb_groups
        for idx, gold in groups:
            sub = x if len(groups) == 1 else x[:, list(idx), :]
            ops, tabs = self._group_state(plan, idx, gold)
            value = fn(np.array(sub, dtype=U64, copy=True), plan, ops, tabs)
            if len(groups) == 1:
                result[...] = value
            else:
                result[:, list(idx), :] = value
        return result

    # -- transforms ----------------------------------------------------------------------------
    def forward(self, x, plan, *, natural=True, out=None):
        fn = _fourstep_forward if plan.algorithm == "4step" else _radix2_forward
        return self._per_group(x, plan, lambda a, p, o, t: fn(a, p, o, t, natural), out)

    def inverse(self, y, plan, *, natural=True, out=None):
        fn = _fourstep_inverse if plan.algorithm == "4step" else _radix2_inverse
        return self._per_group(y, plan, lambda a, p, o, t: fn(a, p, o, t, natural), out)

    def pointwise_mul(self, a, b, plan, *, out=None):
        shape = np.broadcast_shapes(a.shape, b.shape)
        result = np.empty(shape, dtype=U64) if out is None else out
        for idx, gold in plan.limb_groups:
            ops, _ = self._group_state(plan, idx, gold)
            sel = list(idx)
            result[:, sel, :] = ops.mul(a[:, sel, :], b[:, sel, :])
        return result

    def twiddle_grid_mul(self, x, modulus, root, row0, col0, row_step=1, col_step=1, *, out=None):
        rows, cols = x.shape
        result = np.empty((rows, cols), dtype=U64) if out is None else out
        if rows == 0 or cols == 0:
            return result
        q = int(modulus)
        ops = ModOps((modulus_info(q),), depth=1)
        # Row i needs base_i ** (col0 + col_step * j) with base_i = root ** r_i, r_i = row0 + row_step * i:
        # start_i = root ** (col0 r_i) and step_i = root ** (col_step r_i), both progressions in i.
        start = _progression_powers(ops, pow(root, col0, q), row0, row_step, rows)
        step = _progression_powers(ops, pow(root, col_step, q), row0, row_step, rows)
        # Columns j = h * size + l: step_i ** j = low[i, l] * high[i, h], tables of ~sqrt(cols) per row.
        size = 1 << ((cols - 1).bit_length() + 1) // 2
        whole = cols // size
        low = ops.powers(step, size)
        step_size = ops.mul(low[:, -1], step)  # step ** size
        high = ops.mul(ops.powers(step_size, -(-cols // size)), start[:, None])
        strip = max(1, _STRIP_ELEMENTS // cols)  # bounds the temporaries of the 128-bit products
        for r in range(0, rows, strip):
            sl = slice(r, min(r + strip, rows))
            n_rows = sl.stop - sl.start
            if whole:
                body = x[sl, : whole * size].reshape(n_rows, whole, size)
                body = ops.mul(ops.mul(body, low[sl, None, :]), high[sl, :whole, None])
                result[sl, : whole * size] = body.reshape(n_rows, whole * size)
            if whole * size < cols:
                tail = x[sl, whole * size :]
                result[sl, whole * size :] = ops.mul(
                    ops.mul(tail, low[sl, : tail.shape[1]]), high[sl, whole : whole + 1]
                )
        return result


_STRIP_ELEMENTS = 1 << 20


def _progression_powers(ops: ModOps, base: int, first: int, step: int, count: int) -> np.ndarray:
    """base ** (first + step * i) mod q for i < count, by splitting i = h * size + l."""
    q = int(ops.q.reshape(-1)[0])
    size = 1 << ((count - 1).bit_length() + 1) // 2
    unit = pow(base, step, q)
    low = ops.powers([unit], size)[0]
    high = ops.powers([pow(unit, size, q)], -(-count // size))[0]
    grid = ops.mul(high[:, None], low[None, :])
    return ops.mul(grid, U64(pow(base, first, q))).reshape(-1)[:count]


def _radix2_forward(a, plan, ops, tabs: _Radix2, natural):
    B, L, n = a.shape
    tabs.ct(a.reshape(B, L, 1, n), ops)
    return a[..., tabs.perm] if natural else a


def _radix2_inverse(a, plan, ops, tabs: _Radix2, natural):
    B, L, n = a.shape
    if natural:
        a = np.ascontiguousarray(a[..., tabs.perm])
    return tabs.gs(a.reshape(B, L, 1, n), ops).reshape(B, L, n)


def _fourstep_forward(a, plan, ops, t: _FourStep, natural):
    B, L, n = a.shape
    n1, n2 = plan.n1, plan.n2
    if plan.negacyclic:
        a = ops.mul_shoup(a, t.pre, t.pre_s)
    cols = np.ascontiguousarray(a.reshape(B, L, n1, n2).transpose(0, 1, 3, 2))  # [j2][j1]
    t.cols.ct(cols, ops)
    cols = ops.at_depth(2).mul_shoup(cols[..., t.cols.perm], t.tw, t.tw_s)  # [j2][k1]
    rows = np.ascontiguousarray(cols.transpose(0, 1, 3, 2))  # [k1][j2]
    t.rows.ct(rows, ops)
    rows = rows[..., t.rows.perm]  # C[k1][k2] = X[k1 + n1 k2]
    if natural:
        return np.ascontiguousarray(rows.transpose(0, 1, 3, 2)).reshape(B, L, n)
    return rows.reshape(B, L, n)


def _fourstep_inverse(y, plan, ops, t: _FourStep, natural):
    B, L, n = y.shape
    n1, n2 = plan.n1, plan.n2
    if natural:
        rows = y.reshape(B, L, n2, n1).transpose(0, 1, 3, 2)
    else:
        rows = y.reshape(B, L, n1, n2)
    rows = np.ascontiguousarray(rows[..., t.rows.perm])
    t.rows.gs(rows, ops)  # [k1][j2]
    rows = ops.at_depth(2).mul_shoup(rows, t.itw, t.itw_s)
    cols = np.ascontiguousarray(rows.transpose(0, 1, 3, 2)[..., t.cols.perm])  # [j2][k1] bit-reversed
    t.cols.gs(cols, ops)  # [j2][j1]
    a = np.ascontiguousarray(cols.transpose(0, 1, 3, 2)).reshape(B, L, n)
    if plan.negacyclic:
        a = ops.mul_shoup(a, t.post, t.post_s)
    return a
