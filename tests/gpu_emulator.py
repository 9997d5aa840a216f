"""A NumPy model of kernels/ntt.cu's ntt_pass, thread by thread, for checking the GPU launch logic
and index arithmetic on a CPU. It mirrors the kernel line by line (vectorised over all threads of
the grid) and asserts what the kernel relies on: no two threads of a block write one shared-memory
word, every word read was written, and no two threads write one output element.

Like the kernel, the model reads every parameter from the launch's struct NttPassParams, built by the
GPU backend's own `pass_params` (tables by their addresses), so a value put in the wrong field gives
wrong results here.
"""

from __future__ import annotations

import numpy as np

from hebatch import arith as na
from hebatch.backend.gpu.ntt import modconst_table, pass_params
from hebatch.backend.kernels import LANE_MODES, TABLE_MODES, WORD_BITS, address

U64 = np.uint64
M32 = U64(0xFFFFFFFF)


def bitrev(v, bits):
    v = np.asarray(v, dtype=np.int64)
    out = np.zeros_like(v)
    for b in range(bits):
        out |= ((v >> b) & 1) << (bits - 1 - b)
    return out


def swizzle(x):
    return x ^ (((x >> 4) ^ (x >> 8) ^ (x >> 12)) & 15)


class Arith:
    """Per-thread arithmetic of one reduction kind on uint64 arrays (32-bit kinds masked)."""

    def __init__(self, kind, q, mu, m):
        self.kind, self.q, self.mu, self.m = kind, q, mu, m

    def ct(self, x, y, w, wq, reduced=True):
        q = self.q
        if self.kind == "Mod60":  # values in [0, 16q): x - 8q where x >= 8q, in the stages that reduce
            assert (x < q * U64(16 if reduced else 12)).all()
            a = np.where(x >= q * U64(8), x - q * U64(8), x) if reduced else x
            b = self.mul_tw(y, w, wq)
            return a + b, a - b + q * U64(4)
        if self.kind == "Mod64":
            two_q = q * U64(2)
            assert (x < q * U64(4)).all()
            a = np.where(x >= two_q, x - two_q, x)
            b = self.mul_tw(y, w, wq)
            assert (b < q * U64(4)).all()
            b = np.where(b >= two_q, b - two_q, b)
            return a + b, a - b + two_q
        if self.kind == "Goldilocks":
            b, eps = self.mul(y, w), U64(2**32 - 1)  # lazy below 2^64, as modarith.cuh
            s, d = x + b, x - b
            return np.where(s < b, s + eps, s), np.where(x < b, d - eps, d)
        a = np.where(x >= q, x - q, x)
        b = self.mul_tw(y, w, wq)
        b = np.where(b >= q, b - q, b)
        return (a + b) & M32, (a - b + q) & M32

    def mul_tw(self, x, w, wq):
        if self.kind in ("Mod64", "Mod60"):  # Shoup with the estimated quotient of modarith.cuh
            x0, x1, w0, w1 = x & M32, x >> U64(32), wq & M32, wq >> U64(32)
            qhat = x1 * w1 + ((x0 * w1) >> U64(32)) + ((x1 * w0) >> U64(32))
            r = x * w - qhat * self.q
            assert (r < self.q * U64(4)).all()
            return r
        if self.kind == "Goldilocks":
            return self.mul(x, w)
        hi = (x * wq) >> U64(32)
        return (x * w - hi * self.q) & M32

    def reduce(self, x):
        q = self.q
        if self.kind == "Mod60":
            x = np.where(x >= q * U64(8), x - q * U64(8), x)
            x = np.where(x >= q * U64(4), x - q * U64(4), x)
        if self.kind in ("Mod64", "Mod60"):
            x = np.where(x >= q * U64(2), x - q * U64(2), x)
        return np.where(x >= q, x - q, x)

    def mul(self, a, b):
        hi, lo = na.mul_wide(a, b)
        if self.kind == "Goldilocks":
            return na.goldilocks_reduce(hi, lo)
        c = na.shr128(hi, lo, self.m - U64(2))
        ph, pl = na.mul_wide(c, self.mu)
        quot = na.shr128(ph, pl, self.m + U64(3))
        r = lo - quot * self.q
        return np.where(r >= self.q, r - self.q, r)


def emulate_pass(ln, src, in2, dst, prm, memory, arith_kind):
    """One launch of ntt_pass: parameters from the struct `prm`, tables looked up by address in `memory`."""
    _a_kind, log_np, log_lanes, log_r, mode, last, tw_mode, post_mode, fuse = ln.template
    rows, n, limbs = int(prm["rows"]), int(prm["n"]), int(prm["limbs"])
    d_i, d_o, digit_d, digit_m = (int(prm[k]) for k in ("d_i", "d_o", "digit_d", "digit_m"))
    log_do, s0, use_h = int(prm["log_do"]), int(prm["s0"]), int(prm["use_h"])
    consts = memory[int(prm["consts"])]

    def table(name, stride):  # a stacked table (limbs, width, 2) read at its address with the struct's stride
        flat = memory[int(prm[name])].reshape(-1, 2)
        width = int(prm[stride]) if stride else flat.shape[0] // limbs
        return flat[: limbs * width].reshape(limbs, width, 2) if width else flat[:0].reshape(limbs, 0, 2)

    NP, LANES, R = 1 << log_np, 1 << log_lanes, 1 << log_r
    LOG_G = log_np - log_r
    steps = -(-log_np // log_r)
    r0 = log_np - (steps - 1) * log_r
    T = ln.grid * ln.block
    tid = np.arange(T, dtype=np.int64) % ln.block
    blk = np.arange(T, dtype=np.int64) // ln.block
    lane, tg = tid & (LANES - 1), tid >> log_lanes
    active = np.ones(T, dtype=bool)
    i = np.zeros(T, dtype=np.int64)
    if mode in (LANE_MODES["row"], LANE_MODES["row_dense"]):
        row = blk * LANES + lane
        active = row < rows
        row = np.where(active, row, rows - 1)
        o = np.zeros(T, dtype=np.int64)
        out_base = row * n
    else:
        lane_tiles = (d_i >> log_lanes) * d_o if mode == LANE_MODES["i"] else d_o >> log_lanes
        row = blk // lane_tiles
        tt = blk - row * lane_tiles
        limb_rows = int(prm["limb_rows"])
        if limb_rows > 1:  # rows limb by limb: the k-th row run is row j limbs + l for k = l limb_rows + j
            limb_of, j = np.divmod(row, limb_rows)
            row = j * limbs + limb_of
        if mode == LANE_MODES["i"]:
            tiles_i = d_i >> log_lanes
            o = tt // tiles_i
            i = (tt - o * tiles_i) * LANES + lane
            out_base = row * n + o * NP * d_i + i
        elif mode == LANE_MODES["o"]:
            dd = digit_d
            blocks_d = tt // dd
            rem = tt - blocks_d * dd
            o = (blocks_d * LANES + lane) * dd + rem
            out_base = row * n + o // dd + digit_m * (o % dd)
        else:
            v = tt * LANES + lane
            o = bitrev(v, log_do) if log_do else np.zeros(T, dtype=np.int64)
            out_base = row * n + v
    assert (row < rows).all()
    in_base = row // int(prm["in_spread"]) * n + o * NP * d_i + i
    limb = row % limbs
    q = consts["q"][limb].astype(U64)
    ar = Arith(arith_kind, q, consts["mu"][limb].astype(U64), consts["m"][limb].astype(U64))
    sub = table("tw", "tw_stride")
    # a merge's last pass may read its stages in that pass's order (tables.last_pass_order), by its lanes' v
    last_order = mode in (LANE_MODES["bitrev_ordered"], LANE_MODES["bitrev_ordered_paired"])
    h = (v if last_order else o) if use_h else np.zeros(T, dtype=np.int64)
    paired_pass = last and mode == LANE_MODES["bitrev_ordered_paired"]

    x = []
    for e in range(R):
        p = (e << LOG_G) | tg
        addr = in_base + p * d_i
        x.append(ar.mul(src[addr].astype(U64), in2[addr].astype(U64)) if fuse else src[addr].astype(U64))

    smem_size = LANES * NP
    for step in range(steps):
        s = 0 if step == 0 else r0 + (step - 1) * log_r
        stages = r0 if step == 0 else log_r
        lo_bits = log_np - s - log_r
        gg = bitrev(tg, LOG_G) if (step == steps - 1 and steps > 1 and LOG_G > 0) else tg
        g_hi = np.zeros(T, dtype=np.int64) if step == 0 else gg >> lo_bits
        g_lo = gg if step == 0 else gg & ((1 << lo_bits) - 1)
        if step > 0:
            prev_s = 0 if step == 1 else r0 + (step - 2) * log_r
            prev_lo = log_np - prev_s - log_r
            pg_hi = np.zeros(T, dtype=np.int64) if step == 1 else tg >> prev_lo
            pg_lo = tg if step == 1 else tg & ((1 << prev_lo) - 1)
            smem = np.zeros((ln.grid, smem_size), dtype=U64)
            written = np.zeros((ln.grid, smem_size), dtype=np.int64)
            for e in range(R):
                p = (pg_hi << (log_np - prev_s)) | (e << prev_lo) | pg_lo
                idx = swizzle(lane * NP + p)
                assert (idx < smem_size).all()
                np.add.at(written, (blk, idx), 1)
                smem[blk, idx] = x[e]
            assert (written == 1).all(), "shared-memory words written twice or never"
            for e in range(R):
                p = (g_hi << (log_np - s)) | (e << lo_bits) | g_lo
                x[e] = smem[blk, swizzle(lane * NP + p)]
        for u in range(stages):
            half = R >> (u + 1)
            st = s + u
            # a merge's last pass: the transform's last two stages read the even groups' entries, and the odd
            # groups multiply by entry 0 first (the ratio of the two, the same in every stage: tables.merge_table)
            paired = paired_pass and step == steps - 1 and u >= 1 and u >= stages - 2
            for b in range(R // 2):
                j, e = b // half, (b // half) * 2 * half + (b % half)
                if paired and j & 1:
                    x[e + half] = ar.mul_tw(x[e + half], sub[limb, 0, 0].astype(U64), sub[limb, 0, 1].astype(U64))
                    j -= 1
                r = (g_hi << u) | j
                idx = (1 << (s0 + st)) | ((r << s0) | h if last_order else (h << st) | r)
                assert (idx < sub.shape[1]).all()
                w, wq = sub[limb, idx, 0].astype(U64), sub[limb, idx, 1].astype(U64)
                # Mod60 leaves out the reduction every other stage, counted from the pass's last
                reduced = ar.kind != "Mod60" or (log_np - 1 - st) % 2 == 0
                x[e], x[e + half] = ar.ct(x[e], x[e + half], w, wq, reduced)

    for e in range(R):
        k = (bitrev(e, log_r) << LOG_G) | tg
        v = x[e]
        if tw_mode:
            c_p, alpha, beta, gamma, delta = (int(prm[f]) for f in ("c_p", "alpha", "beta", "gamma", "delta"))
            ex = (c_p * (alpha * k + beta) * (gamma * i + delta)) & int(prm["z_mask"])
            z_bits = int(prm["z_bits"])
            if tw_mode == TABLE_MODES["two"]:
                zh = table("zh", "z_stride_h")[limb, ex >> z_bits]
                v = ar.mul_tw(v, zh[:, 0].astype(U64), zh[:, 1].astype(U64))
            zl = table("zl", "z_stride_l")[limb, ex & ((1 << z_bits) - 1)]
            v = ar.mul_tw(v, zl[:, 0].astype(U64), zl[:, 1].astype(U64))
        if last:
            addr = out_base + k * (n >> log_np)
            if post_mode:
                jp = addr - row * n if prm["post_by_output"] else k
                if post_mode == TABLE_MODES["two"]:
                    ph = table("ph", "p_stride_h")[limb, jp >> int(prm["p_bits"])]
                    v = ar.mul_tw(v, ph[:, 0].astype(U64), ph[:, 1].astype(U64))
                pl = table("pl", "p_stride_l")[limb, jp & int(prm["p_mask"])]
                v = ar.mul_tw(v, pl[:, 0].astype(U64), pl[:, 1].astype(U64))
            v = ar.reduce(v)
        elif prm["keep_positions"]:
            g_last = bitrev(tg, LOG_G) if LOG_G > 0 else np.zeros(T, dtype=np.int64)
            addr = out_base + ((g_last << log_r) | e) * d_i
        else:
            addr = out_base + k * d_i
        addr, v = addr[active], v[active]
        assert len(np.unique(addr)) == len(addr), "two threads store one element"
        dst[addr] = v.astype(dst.dtype)


def emulate_transform(plan, x3, inverse, in2=None, idx=None):
    """The GPU backend's launch sequence for (batch, limbs, n) array x3, run by the emulator."""
    idx = idx if idx is not None else tuple(range(plan.limbs))
    word_bits = WORD_BITS[x3.dtype]
    rows, limbs = x3.shape[0] * x3.shape[1], x3.shape[1]
    tables = plan.gpu_pass_tables(idx, inverse, word_bits)
    launches = plan.gpu_launches(idx, tables, rows, word_bits, fuse=in2 is not None)
    consts = modconst_table(plan, idx)
    # the host tables stand in for the device ones: the struct holds their addresses
    device = [{k: np.ascontiguousarray(v) for k, v in t.items() if isinstance(v, np.ndarray)} for t in tables]
    memory = {address(a): a for a in [consts] + [a for d in device for a in d.values()]}
    buffers = {
        "x": x3.reshape(-1).copy(),
        "out": np.zeros(x3.size, dtype=x3.dtype),
        "tmp": np.zeros(x3.size, dtype=x3.dtype),
    }
    flat2 = None if in2 is None else in2.reshape(-1)
    for ln in launches:
        prm = pass_params(ln, tables[ln.pass_index], device[ln.pass_index], consts, rows, plan.n, limbs)[0]
        emulate_pass(ln, buffers[ln.src], flat2, buffers[ln.dst], prm, memory, ln.template[0])
    return buffers["out"].reshape(x3.shape), launches
