"""GPU launch plans, as pure functions of the transform's size, word, row count and the device's
properties: the `ntt_pass` launches (kernels/ntt.cu) of the 64-bit/32-bit word transforms, and the
`ntt256_pass` passes (kernels/ntt256.cu) of the 256-bit prime-field transforms. Free of CuPy, so they
are checked on a CPU (tests/gpu_emulator.py, tests/test_ntt256_host.py) and enumerated by the prebuild
tool; the backends receive them finished."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..backend import LANE_MODES, NTT256_LOG_BLOCK, TABLE_MODES
from .recipes import dense_rows, limb_major_rows


@dataclass(frozen=True)
class Launch:
    """One ntt_pass launch: template arguments, shape, buffers by role and the geometry of its parameters."""

    template: tuple  # (arith, log_np, log_lanes, log_r, lane_mode, last, tw_mode, post_mode, fuse)
    grid: int
    block: int
    smem: int
    src: str  # "x", "tmp" or "out"
    dst: str
    pass_index: int  # which entry of the plan's gpu_pass_tables
    geometry: dict  # d_i, d_o, digit_d, digit_m, log_do, s0, use_h, keep_positions, limb_rows

    @property
    def name(self) -> str:
        a, log_np, log_lanes, log_r, mode, last, tw, post, fuse = self.template
        flag = {True: "true", False: "false"}
        return f"ntt_pass<{a},{log_np},{log_lanes},{log_r},{mode},{flag[last]},{tw},{post},{flag[fuse]}>"


def transform_launches(
    plan,
    pass_tables: list[dict],
    rows: int,
    word_bits: int,
    arith: str,
    fuse: bool = False,
    limbs: int = 1,
    l2_bytes: int = 0,
) -> list[Launch]:
    """The launches of one transform of `rows` rows, row r on limb r % limbs, on a GPU with `l2_bytes` of L2 cache
    (0: none known, as for host builds). Free of CuPy, so it can be checked on a CPU."""
    n = plan.n
    passes = plan.gpu_passes(word_bits // 8)
    # the tables a multi-pass merge's last pass reads, every limb's: n twiddles with their companions, and an
    # inverse's n post factors when they come from one table
    table_bytes = 0
    if plan.algorithm == "radix2" and len(passes) > 1:
        one_post = pass_tables[-1]["post_mode"] == TABLE_MODES["one"]
        table_bytes = limbs * n * (word_bits // 4) * (2 if one_post else 1)
    limb_rows = limb_major_rows(rows, limbs, table_bytes, l2_bytes)  # 0 where table_bytes is (one pass, 4-step)
    launches = []
    src = "x"
    d_before = 1  # product of the earlier passes' sizes
    for index, p in enumerate(passes):
        last = index == len(passes) - 1
        n_p, lanes = 1 << p.log_np, 1 << p.log_lanes
        geom = dict(d_i=1, d_o=1, digit_d=1, digit_m=1, log_do=0, s0=0, use_h=0, keep_positions=0, limb_rows=limb_rows)
        grid = rows * (n // (n_p * lanes))
        if len(passes) == 1:
            mode, grid = "row_dense" if dense_rows(p, rows) else "row", -(-rows // lanes)
        elif plan.algorithm == "radix2":
            geom.update(
                d_o=d_before,
                d_i=n // (d_before * n_p),
                s0=p.s0,
                use_h=1,
                log_do=p.s0,
                keep_positions=0 if last else 1,
            )
            # the last pass's lanes are bit-reversed; its table stages in its order where the plan says so
            if not last:
                mode = "i"
            elif plan.merge_last_bits(word_bits):
                mode = "bitrev_ordered_paired" if plan.paired_last else "bitrev_ordered"
            else:
                mode = "bitrev"
        elif last:  # output base of o = k1 n2 + k2 is k1 + n1 k2 (three passes); o (two passes)
            first = 1 << passes[0].log_np
            geom.update(d_o=d_before, digit_d=d_before // first if len(passes) == 3 else 1, digit_m=first)
            mode = "o"
        else:
            geom.update(d_o=d_before, d_i=n // (d_before * n_p))
            mode = "i"
        t = pass_tables[index]
        dst = "out" if last else ("tmp" if src == "x" else src)
        template = (
            arith,
            p.log_np,
            p.log_lanes,
            p.log_r,
            LANE_MODES[mode],
            last,
            t["tw_mode"],
            t["post_mode"] if last else 0,
            fuse and index == 0,
        )
        # ntt_pass divides tiles and rows in 32 bits, and its extents by shifts (kernels/ntt.cu)
        assert all(v & (v - 1) == 0 for v in (geom["d_i"], geom["d_o"], geom["digit_d"])), geom
        if grid >= 2**31 or rows >= 2**32:
            raise ValueError(
                f"a batch of {rows} rows of {n} elements needs {grid} blocks in one launch (at most 2**31 - 1 "
                "blocks and 2**32 - 1 rows): transform it in parts"
            )
        launches.append(Launch(template, grid, p.threads, p.smem_bytes(word_bits // 8), src, dst, index, geom))
        src = dst
        d_before *= n_p
    return launches


# -- 256-bit prime fields (kernels/ntt256.cu) ----------------------------------------------------------
#
# One kernel, ntt256_pass, runs up to 2^log_block elements of a transform in shared memory: log_k
# stages on every group of K = 2^log_k elements spaced 2^log_low apart, 2^log_c such groups (lanes) a
# block. A transform is DIF passes (natural in, bit-reversed out; top index bits first) or DIT passes
# (bit-reversed in, natural out; low bits first), the passes with low bits below them carrying the
# twiddles of a 4-step split.
#
# Pass sizes: set on an NVIDIA H100 80GB HBM3 on 2026-11-23 with benchmarks/zk_bench.py. The block size
# (NTT256_LOG_BLOCK of hebatch/backend/kernels.py) and FIELD_MAX_LOG_K_STRIDED: the run in
# benchmarks/results/zk-H100-80GB-HBM3-2026-11-23.json; FIELD_DIRECT_TWIDDLE_MAX_LOG (raised from 20 to
# 24 that afternoon): the run in zk-H100-80GB-HBM3-2026-11-23-wide-chains.json. Neither file holds the
# alternatives that were tried; re-run zk_bench.py before changing one. FIELD_MAX_LOG_K_STRIDED 7, 8 and 10 against
# 9 on 2026-11-27 (zk-plan-strided-probe-H100-80GB-HBM3-2026-11-27.json): 9 fastest or within 1% at 2^20 x 16 and
# 2^24-2^28.
FIELD_WORD_BYTES = 32  # one element: 4 limbs of 64 bits
FIELD_MAX_LOG_K_STRIDED = 9  # passes over strided columns keep >= 4 consecutive columns (128 bytes) per block
FIELD_DIRECT_TWIDDLE_MAX_LOG = 24  # passes whose 4-step twiddles span M <= 2^24 read them from one M-entry table


@dataclass(frozen=True)
class FieldPass:
    """One ntt256_pass launch: log_k stages on groups spaced 2^log_low apart, 2^log_c lanes a block.
    scale: multiply every output by n^-1 (one multiplication per element); scale_in_twiddle: take the
    4-step twiddles from the table pre-multiplied by n^-1 instead (no extra multiplication);
    direct_twiddles: read each 4-step twiddle from one table of M = 2^(log_low + log_k) entries instead of
    forming it from the two sqrt(n) tables (one multiplication per element fewer)."""

    dit: bool
    log_k: int
    log_low: int
    log_c: int
    grid: int
    scale: bool
    scale_in_twiddle: bool = False
    direct_twiddles: bool = False

    @property
    def smem(self) -> int:
        return (FIELD_WORD_BYTES << self.log_k) << self.log_c


@dataclass(frozen=True)
class FieldPlan:
    """The launch plan of 256-bit field transforms of `batch` rows of 2^log_n elements: the passes of the
    DIF and DIT transforms, each without and with the factor n^-1 (inverse transforms)."""

    log_n: int
    batch: int
    log_block: int  # elements per block at most: 2^log_block
    direct_max_log: int
    transforms: dict  # (dit, scale) -> tuple[FieldPass, ...]

    def passes(self, dit: bool, scale: bool) -> tuple[FieldPass, ...]:
        return self.transforms[(bool(dit), bool(scale))]


def field_log_block(device: dict | None = None) -> int:
    """Elements per ntt256_pass block (log2): the kernels' NTT256_LOG_BLOCK, less where the device's
    shared memory per block (`device["shared_per_block"]`, hebatch.device.device_properties) holds fewer."""
    if device is None:
        return NTT256_LOG_BLOCK
    fits = (int(device["shared_per_block"]) // FIELD_WORD_BYTES).bit_length() - 1
    if fits < 1:
        raise ValueError(f"device: {device['shared_per_block']} bytes of shared memory per block hold no 2 elements")
    return min(NTT256_LOG_BLOCK, fits)


def field_pass_sizes(
    log_n: int, log_block: int = NTT256_LOG_BLOCK, max_log_k_strided: int = FIELD_MAX_LOG_K_STRIDED
) -> list[int]:
    """Stages per pass: the first entry is the pass over contiguous groups (up to log_block stages), the
    rest are the passes over strided columns (up to max_log_k_strided stages each), as few passes as
    possible."""
    if log_n <= log_block:
        return [log_n]
    passes = 2
    while log_block + max_log_k_strided * (passes - 1) < log_n:
        passes += 1
    first = min(log_block, max(log_n - max_log_k_strided * (passes - 1), -(-log_n // passes)))
    rest = log_n - first
    others = [rest // (passes - 1) + (1 if i < rest % (passes - 1) else 0) for i in range(passes - 1)]
    return [first] + others


def field_passes(
    log_n: int,
    batch: int,
    dit: bool,
    scale: bool,
    direct_max_log: int = FIELD_DIRECT_TWIDDLE_MAX_LOG,
    log_block: int = NTT256_LOG_BLOCK,
    max_log_k_strided: int = FIELD_MAX_LOG_K_STRIDED,
) -> list[FieldPass]:
    """The passes of one DIF (dit=False: top bits first) or DIT (low bits first) transform; passes with
    4-step twiddles over M <= 2^direct_max_log read them from a direct table."""
    sizes = field_pass_sizes(log_n, log_block, max_log_k_strided)
    if dit:  # contiguous pass first, then up through the strided ones
        spans, low = [], 0
        for k in sizes:
            spans.append((k, low))
            low += k
    else:  # strided passes from the top, contiguous last
        spans, high = [], log_n
        for k in list(reversed(sizes[1:])) + [sizes[0]]:
            high -= k
            spans.append((k, high))
    # n^-1 rides on the 4-step twiddles of the first pass that has them (every element gets one), else
    # it is a multiplication on the last pass's stores
    twiddled = next((i for i, (_, low) in enumerate(spans) if low > 0), None)
    passes = []
    for index, (k, low) in enumerate(spans):
        lanes = batch << (log_n - k)
        log_c = min(log_block - k, max(0, (lanes - 1).bit_length()))
        grid = -(-lanes // (1 << log_c))
        passes.append(
            FieldPass(
                dit,
                k,
                low,
                log_c,
                grid,
                scale and twiddled is None and index == len(spans) - 1,
                scale and index == twiddled,
                0 < low and low + k <= direct_max_log,
            )
        )
    return passes


def field_plan(
    n: int,
    batch: int,
    device: dict | None = None,
    *,
    direct_max_log: int = FIELD_DIRECT_TWIDDLE_MAX_LOG,
    max_log_k_strided: int = FIELD_MAX_LOG_K_STRIDED,
    log_block: int | None = None,
) -> FieldPlan:
    """The launch plan of `batch` transforms of n elements (a power of two) of a 256-bit field on a device
    with properties `device` (hebatch.device.device_properties; None: the kernels' own block size).
    direct_max_log: passes whose 4-step twiddles span at most 2^this entries read them from one table
    (32 bytes an entry, so up to 512 MiB at the default 24, built on the device); 0 forms every twiddle
    from two sqrt(n) tables. max_log_k_strided, log_block: smaller passes and blocks (tests)."""
    for value, name in ((n, "n"), (batch, "batch"), (direct_max_log, "direct_max_log")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a power of two, got {n}")
    if batch < 0:
        raise ValueError(f"batch must be >= 0, got {batch}")
    if not 0 <= direct_max_log <= 28:
        raise ValueError(f"direct_max_log must be in [0, 28], got {direct_max_log}")
    block = field_log_block(device) if log_block is None else min(log_block, field_log_block(device))
    return _field_plan(n.bit_length() - 1, batch, direct_max_log, block, max_log_k_strided)


@lru_cache(maxsize=256)
def _field_plan(log_n: int, batch: int, direct_max_log: int, log_block: int, max_log_k_strided: int) -> FieldPlan:
    transforms = {
        (dit, scale): tuple(field_passes(log_n, batch, dit, scale, direct_max_log, log_block, max_log_k_strided))
        for dit in (False, True)
        for scale in (False, True)
    }
    return FieldPlan(log_n, batch, log_block, direct_max_log, transforms)


def mont_mul_count(log_n: int, batch: int, inverse: bool, direct_max_log: int = FIELD_DIRECT_TWIDDLE_MAX_LOG) -> int:
    """Montgomery multiplications of one transform: one per butterfly but those of each pass's stage of
    half-size 1 (twiddle 1); for the 4-step twiddle of every pass with low bits, one per element to apply
    it and, unless the pass reads a direct table, one per element to form it from two tables; one per
    element for n^-1 where no pass has 4-step twiddles to carry it."""
    n = 1 << log_n
    passes = field_passes(log_n, 1, False, inverse, direct_max_log)
    twiddles = sum(1 if p.direct_twiddles else 2 for p in passes if p.log_low > 0)
    return batch * (n // 2 * (log_n - len(passes)) + n * twiddles + n * sum(p.scale for p in passes))
