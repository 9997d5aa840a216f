"""GPU launch recipes: how a transform of size n is cut into passes of `kernels/ntt.cu`'s ntt_pass.

A pass runs 2^log_np-point sub-transforms in shared memory, 2^log_lanes of them per block,
2^log_r elements per thread. Two algorithms share the kernel:
  * "4step": n = n1 * n2 (* n3); sub-transforms along one index digit each, twiddles between passes,
    a transposing store at the end (natural order, no permutation pass).
  * "radix2" (merge): the passes cover consecutive stages of one n-point Cooley-Tukey transform with
    the full twiddle table; the last pass stores bit-reversed positions (natural order).
A transform small enough for one block is one pass, identical for both algorithms.
"""

from __future__ import annotations

from dataclasses import dataclass

import hebatch.arith as arith

from ..backend import MAX_THREADS

# Tile, lane and radix sizes below: set on an NVIDIA H100 80GB HBM3 on 2026-11-22 with
# benchmarks/ntt_bench.py; the committed run with these values is benchmarks/results/
# ntt-H100-80GB-HBM3-2026-11-22.json (no committed file holds the alternatives that were tried).
# Shared-memory tile, in elements, of one block (64-bit words: 2^13 = 64 KiB).
TILE_LOG = {8: 13, 4: 14}
# Largest n done by a single block (one pass, no trip through global memory between stages).
SINGLE_PASS_MAX_LOG = {8: 14, 4: 14}
# Rows per block when n is small: enough elements per block to keep the SMs busy.
SMALL_TILE_LOG = 12
# Columns per block in multi-pass transforms: 8 words = 64-byte runs per row (coalesced).
MULTI_PASS_LANES_LOG = 3
RADIX_LOG = 4  # 16 elements per thread: a radix-16 step in registers between shared-memory exchanges


@dataclass(frozen=True)
class Pass:
    log_np: int  # sub-transform size
    log_lanes: int  # sub-transforms per block
    log_r: int  # elements per thread
    s0: int = 0  # merge: first stage of the pass (global index bits above the pass)

    @property
    def threads(self) -> int:
        return 1 << (self.log_np + self.log_lanes - self.log_r)

    def smem_bytes(self, word_bytes: int) -> int:
        steps = -(-self.log_np // self.log_r)
        return (word_bytes << (self.log_np + self.log_lanes)) if steps > 1 else 0


def _split(log_n: int, parts: int) -> list[int]:
    """log_n cut into `parts` nearly equal digits, larger first."""
    base, extra = divmod(log_n, parts)
    return [base + 1 if i < extra else base for i in range(parts)]


MAX_THREADS_LOG = MAX_THREADS.bit_length() - 1  # threads per block at most


def _single_pass(log_n: int, radix: int) -> Pass:
    """One block per row (or several rows per block when n is small; at most 1024 threads)."""
    log_r = min(radix, log_n)
    log_lanes = max(0, min(SMALL_TILE_LOG - log_n, MAX_THREADS_LOG - (log_n - log_r)))
    return Pass(log_n, log_lanes, log_r)


def gpu_passes(
    algorithm: str,
    log_n: int,
    word_bytes: int,
    digits: tuple[int, ...] | None = None,
    log_r: int | None = None,
    log_lanes: int | None = None,
) -> tuple[Pass, ...]:
    """The passes for a transform of 2^log_n words of `word_bytes` bytes.

    digits: explicit log2 sizes of the passes' sub-transforms (for tuning); they must sum to log_n.
    log_r: log2 elements per thread (None: RADIX_LOG).
    log_lanes: log2 columns per block of multi-pass transforms (None: MULTI_PASS_LANES_LOG; the digits are
    chosen for that default either way).
    """
    radix = RADIX_LOG if log_r is None else log_r
    if digits is None:
        if log_n <= SINGLE_PASS_MAX_LOG[word_bytes]:
            digits = (log_n,)
        else:
            per_pass = TILE_LOG[word_bytes] - MULTI_PASS_LANES_LOG
            parts = -(-log_n // per_pass)
            digits = tuple(_split(log_n, parts))
    if sum(digits) != log_n or min(digits) < 1:
        raise ValueError(f"pass digits {digits} do not add up to log n = {log_n}")
    if len(digits) == 1:
        return (_single_pass(log_n, radix),)
    passes = []
    s0 = 0
    for d in digits:
        lanes = MULTI_PASS_LANES_LOG if log_lanes is None else log_lanes
        passes.append(Pass(d, lanes, min(radix, d), s0 if algorithm == "radix2" else 0))
        s0 += d
    return tuple(passes)


# algorithm="auto": the choice per device (the CPU backend always takes radix-2) and, on a GPU, per
# (log n, word size). Both algorithms are exact; the choice is speed only. Measured on an NVIDIA
# H100 80GB HBM3 on 2026-11-22 (benchmarks/results/ntt-H100-80GB-HBM3-2026-11-22.json):
# for 64-bit words, multi-pass merge transforms (2^15..2^24)
# beat 4-step by 3-18% (no twiddle multiplication between passes); for 32-bit words 4-step is as
# fast or faster (by up to 15% at 2^16 x 256); one-pass sizes are the same kernel either way. On
# 2026-11-26 (same GPU, negacyclic, one row, benchmarks/results/ntt-large-algorithms-H100-80GB-HBM3-
# 2026-11-26.json) merge, its table (16 n bytes per limb and direction) built on the device, also beat
# 4-step at 2^24..2^28 forward and inverse: q60 forward 0.63 / 1.26 / 2.78 / 6.23 / 11.84 ms against
# 0.78 / 1.38 / 3.09 / 6.86 / 13.29 ms, Goldilocks forward 0.73 / 1.57 / 3.32 / 6.76 / 12.75 ms against
# 0.95 / 1.94 / 3.95 / 7.98 / 15.91 ms.
MERGE_LOG_N_RANGE = {8: range(15, 29), 4: range(0)}


# Few rows of a one-pass size: one block per row leaves most SMs idle (a 2^14-point row is one block of
# 1024 threads working through 14 stages), so two merge passes of many small blocks run instead. Per word
# size, log n -> (log2 of the first pass's size, most rows that take the split; None: any number). Measured
# on an NVIDIA H100 80GB HBM3 on 2026-11-25 with q60 rows, device time (benchmarks/ntt_small_batch.py; one
# pass against every split: benchmarks/results/ntt-small-batch-probe-H100-80GB-HBM3-2026-11-25.json, the
# choice made: ntt-small-batch-H100-80GB-HBM3-2026-11-25.json): 2^14, 1-64 rows: one pass 39-42 us, 7+7
# stages 10.6-23 us (forward). 2^13, 1-64 rows: 17.5-18.4 us against 10-15 us; 128 rows: one pass faster.
# 2^12: even. 2^15 and up already take two passes. Large batches of 2^14 (H100, 2026-11-26, q55 rows,
# benchmarks/results/ntt-2p14-split-H100-80GB-HBM3-2026-11-26.json): 7+7 against one pass 0.95x-0.96x
# forward and 0.98x inverse at 1024 and 3840 rows (the one-pass block of 1024 threads holds a whole SM, so
# its barriers leave the SM idle in 49% of cycles), BFV n16384 multiplication of 64 ciphertexts 0.96x;
# 6+8 and 8+6 slower than 7+7, 16 or 32 columns per block slower than 8, 4-step slower than merge. Again on
# the Mod60 butterflies (2026-11-26, ntt-2p14-onepass-probe-H100-80GB-HBM3-2026-11-26.json): one pass 1.17x-1.24x
# the split's time at 1024 and 3840 rows, BFV n16384 multiplication of 64 ciphertexts 1.10x.
SMALL_BATCH_SPLIT = {8: {13: (6, 64), 14: (7, None)}, 4: {}}


def small_batch_split(log_n: int, rows: int, word_bytes: int) -> tuple[int, int] | None:
    """The (n1, n2) merge split for `rows` GPU transforms of 2^log_n words when that many rows run faster
    in two passes than in one (SMALL_BATCH_SPLIT), else None."""
    entry = SMALL_BATCH_SPLIT[word_bytes].get(log_n)
    if entry is None or (entry[1] is not None and rows > entry[1]):
        return None
    return 1 << entry[0], 1 << (log_n - entry[0])


# The two passes of such a split over few elements in all (rows x n at most 2^SMALL_SPLIT_RADIX_MAX_LOG): 8
# elements per thread instead of 16, twice the threads on a GPU that one wave of blocks leaves mostly idle.
# Measured on an NVIDIA H100 80GB HBM3 on 2026-11-26 (BFV operations on one ciphertext, replayed graphs;
# benchmarks/results/ntt-small-split-radix-ab-H100-80GB-HBM3-2026-11-26.json): n16384 decryption (7 rows)
# 0.90x, encryption 0.95x; n8192 encryption 0.91x, relinearization 0.93x, decryption 0.96x, the rest within 2%.
# With 8 elements in every pass, n16384 multiplication (48-64 rows of 2^14 per transform) ran 1.04x: hence
# the limit. Again on 2026-11-27 with the PTX products, the limit at 2^20: one n16384 multiplication 1.02x,
# relinearization and rotation 1.045x
# (benchmarks/results/bfv-small-split-radix-limit-probe-H100-80GB-HBM3-2026-11-27.json).
SMALL_SPLIT_RADIX_LOG = 3
SMALL_SPLIT_RADIX_MAX_LOG = {8: 18, 4: 0}


def small_batch_radix(log_n: int, rows: int, word_bytes: int) -> int | None:
    """log2 elements per thread for `rows` GPU transforms of 2^log_n words that take a small-batch split over
    few elements in all (SMALL_SPLIT_RADIX_LOG), else None (the recipe's RADIX_LOG)."""
    if small_batch_split(log_n, rows, word_bytes) is None or rows << log_n > 1 << SMALL_SPLIT_RADIX_MAX_LOG[word_bytes]:
        return None
    return SMALL_SPLIT_RADIX_LOG


# The last pass of a multi-pass merge transform of 64-bit words reads its twiddles in its lanes' order (a table
# whose stages of that pass are stored as hebatch.ntt.tables.last_pass_order). Measured on an NVIDIA H100 80GB
# HBM3 on 2026-11-26 against the natural order, same run (benchmarks/results/ntt-last-pass-order-ab-H100-80GB-
# HBM3-2026-11-26.json, final_runs): q60 forward / inverse 0.92x / 0.92x-0.93x at 2^14 x 1024 and 3840 rows,
# 0.88x / 0.90x at 2^16 x 256, 0.88x / 0.95x at 2^17 x 128, 0.95x-0.97x at 2^21-2^26; BFV n16384 multiplication,
# relinearization and rotation of 64 ciphertexts 0.94x-0.96x. In device time (graph-replayed calls): Goldilocks
# forward 0.94x-0.98x at 2^14 x 1024, 2^16 x 256 and x 64, 2^17 x 128 and 2^21-2^26, inverse 0.97x-1.006x
# (ntt-ordered-goldilocks-ab-H100-80GB-HBM3-2026-11-26.json); passes of few blocks, single rows of 2^15-2^21 and
# 2^20 x 2, 2^16 x 8: q60 0.95x-0.96x at 2^19, 0.98x-0.99x at 2^18 inverse and 2^20, the rest within 1%
# (ntt-rules-device-time-ab-H100-80GB-HBM3-2026-11-26.json). Until then the order took 512 blocks a pass and
# left Goldilocks out: with 8 columns per block, one row of 2^20 (128 blocks) had read 1.06x-1.11x slower in
# streams of calls, and Goldilocks -3% to +4%.
# The order is a lane mode of its own (compiled apart): chosen at run time inside one kernel it cost 1-11%.


def ordered_last_pass(plan_passes) -> bool:
    """Whether a GPU merge of 64-bit words with these passes reads its last pass's twiddles in its lanes' order:
    every one of several passes."""
    return len(plan_passes) > 1


# The transform's last stage holds half of a merge table's entries, and its odd groups' twiddles are the even ones'
# times one constant (tables.merge_table's entry 0): the last pass may read the even entries only and multiply
# its odd butterflies' inputs by the constant (LANES_BITREV_ORDERED_PAIRED). That pays where each row reads a
# large table from device memory: from 2^PAIRED_MIN_LOG_N points, up to PAIRED_MAX_BATCH rows per limb. Measured
# on an NVIDIA H100 80GB HBM3 on 2026-11-26, device time (graph-replayed calls;
# benchmarks/results/ntt-paired-last-stage-ab-H100-80GB-HBM3-2026-11-26.json): q60 single rows of 2^20 / 2^22 /
# 2^24 / 2^26 / 2^28 0.945x / 0.961x / 0.960x / 0.952x / 0.980x forward and 0.951x / 0.973x / 0.983x / 0.981x /
# 0.989x inverse, Goldilocks 2^22-2^24 0.975x-1.001x; 2^20 x 2 / x 4 0.97x / 0.98x-1.00x, 2^22 x 2 and x 4 0.95x-0.97x,
# 2^24 x 2 0.95x / 0.98x. Single rows of 2^16-2^19 1.00x-1.02x; batches whose rows share a table from L2 (2^14 x
# 1024, 2^16 x 256, 2^17 x 128, 2^18 x 8) 0.99x-1.04x, and BFV n16384 decryption (7 rows of 2^14, one per limb)
# 1.13x-1.27x: they keep the full stage. Larger batches of 2^20 points and more were not measured.
# The ratio is the same constant in every stage, so since 2026-11-27 the pass reads the even entries only of the
# transform's last two stages (the second to last holds a quarter of the table). Same-run A/B against the last stage
# alone (H100, 2026-11-27, graph-replayed calls, two rounds; benchmarks/results/ntt-paired-two-stages-ab-H100-80GB-
# HBM3-2026-11-27.json, side "pair"): q60 single rows of 2^20-2^28 0.975x-0.988x forward and 0.983x-0.994x inverse,
# 2^22 x 2 0.98x / 0.99x, 2^20 x 4 1.00x, Goldilocks 2^22-2^24 0.98x-1.00x.
# From 2^PAIRED_ANY_BATCH_MIN_LOG_N points (a table of 64 MiB a limb and direction, larger than the L2) every row
# reads the table from device memory, so any batch takes it. Same-process A/B of the rule, the two stages paired
# (H100, 2026-11-27 01:38 UTC, three rounds; benchmarks/results/ntt-paired-rule-ab-H100-80GB-HBM3-2026-11-27.json):
# q60 2^22 x 8 0.936x / 0.952x (forward / inverse), 2^24 x 4 0.940x / 0.961x, 2^20 x 8 and x 16 0.995x-1.010x,
# 2^18 x 4 0.990x / 0.975x; single rows of 2^17-2^19 1.014x-1.024x (Goldilocks 2^18-2^19 0.999x-1.017x, 2^20
# 0.931x / 0.944x).
PAIRED_MIN_LOG_N = 20
PAIRED_MAX_BATCH = 4
PAIRED_ANY_BATCH_MIN_LOG_N = 22


def paired_last_stage(log_n: int, batch: int) -> bool:
    """Whether a multi-pass GPU merge (with ordered_last) of `batch` rows of 2^log_n points per limb reads only
    the even groups' entries of the transform's last two stages."""
    if log_n >= PAIRED_ANY_BATCH_MIN_LOG_N:
        return True
    return batch <= PAIRED_MAX_BATCH and log_n >= PAIRED_MIN_LOG_N


# The inverse of a merge transform multiplies output j by n^-1 psi^-j (negacyclic). Above 2^16 points that
# factor is a product of two table entries (arith.SINGLE_LEVEL_MAX_LOG); up to 2^18 points it is one table of n
# entries instead (4 MiB a limb), which the rows share from L2: one product per element fewer. Measured on an
# NVIDIA H100 80GB HBM3 on 2026-11-26 (q60, inverse, three processes per side,
# benchmarks/results/ntt-post-one-table-ab-H100-80GB-HBM3-2026-11-26.json): 2^17 x 128 0.92x, 2^18 x 64 0.96x,
# 2^17 x 8 1.00x. Few rows, in device time (graph-replayed calls; ntt-rules-device-time-ab-H100-80GB-HBM3-
# 2026-11-26.json): q60 2^17 x 1 / x 2 / x 4 0.955x / 0.98x / 0.995x, 2^18 x 1 / x 2 / x 4 0.99x / 1.006x /
# 1.012x; Goldilocks 0.95x-0.98x but 2^18 x 2 1.02x. (Single rows had kept two tables on stream timings of one
# row of 2^18, 1.04x, that the host's time per call bounded.)
POST_ONE_TABLE_MAX_LOG = 18


def post_one_table(log_n: int, negacyclic: bool) -> bool:
    """Whether GPU merge transforms of 2^log_n points take their inverse's post factor from one table."""
    return negacyclic and arith.SINGLE_LEVEL_MAX_LOG < log_n <= POST_ONE_TABLE_MAX_LOG


# Multi-pass merges that run few blocks: one row of 2^20 is two passes of 128 blocks (8 columns of 2^10
# points, 512 threads each), one block per SM. With 4 columns per block they run twice the blocks. Measured on
# an NVIDIA H100 80GB HBM3 on 2026-11-26 (benchmarks/recipe_sweep.py,
# benchmarks/results/ntt-recipe-sweep-mod60-H100-80GB-HBM3-2026-11-26.json): one row of 2^20 0.91x; 4 columns
# everywhere was slower at 2^14 x 1024 (1.12x), 2^17 x 128 (1.04x), 2^22 (1.15x) and 2^24 (1.09x), whose passes
# run 1024 blocks or more. The rule's A/B: benchmarks/results/ntt-few-blocks-lanes-ab-H100-80GB-HBM3-2026-11-26.json.
# Goldilocks too, in device time (graph-replayed calls; benchmarks/results/ntt-few-blocks-goldilocks-ab-H100-80GB-
# HBM3-2026-11-26.json): single rows of 2^17-2^20 0.79x-0.98x, two rows of 2^20 0.89x, the rest within 1%. (It had
# been left out on stream timings of single rows, which that day's host time per call bounded.) A limit of 512 or
# 1024 blocks moved nothing by more than 2%.
FEW_BLOCKS_LANES_LOG = 2
FEW_BLOCKS_MAX = 256  # blocks of a pass of the default recipe, at most


def few_blocks_lanes(log_n: int, rows: int, word_bytes: int) -> int | None:
    """log2 columns per block for `rows` multi-pass GPU merges of 2^log_n words whose passes would run at most
    FEW_BLOCKS_MAX blocks each (FEW_BLOCKS_LANES_LOG), else None (the recipe's MULTI_PASS_LANES_LOG)."""
    passes = gpu_passes("radix2", log_n, word_bytes)
    if len(passes) < 2 or max(rows << (log_n - p.log_np - p.log_lanes) for p in passes) > FEW_BLOCKS_MAX:
        return None
    return FEW_BLOCKS_LANES_LOG


# One-pass transforms of one row per block with 16 elements per thread (rows of 2^12 and 2^13 points: blocks of 256
# and 512 threads) in batches of many rows take a pass kernel compiled for 64 registers per thread instead of 128
# (kernels/ntt.cu, LANES_ALONG_ROW_DENSE): twice the blocks per SM, whose loads, stages and stores overlap. Measured
# on an NVIDIA H100 80GB HBM3 on 2026-11-26 with every one-row block at 64 registers, in device time (graph-replayed
# calls; benchmarks/results/ntt-dense-rows-ab-H100-80GB-HBM3-2026-11-26.json): q60 2^12 x 4096 0.90x / 0.98x
# (forward / inverse), 2^13 x 2048 0.88x / 0.91x; in that code's benchmark run against the previous one
# (ntt-H100-80GB-HBM3-2026-11-26-final12.json) BabyBear 2^12 x 4096 0.87x / 0.91x, Goldilocks 0.97x, the cases
# without one-pass rows 0.97x-1.01x. But 2^12 x 7 and x 64 ran 1.05x-1.21x, 2^13 x 128 1.08x / 1.13x and BFV
# n4096 single ciphertexts 1.09x-1.13x: their blocks fit in one wave either way, and some passes spill. Hence a
# least row count, about four waves of the 128-register blocks (rows between 129 and 2047 were not measured).
DENSE_ROWS_MIN = 1024
DENSE_ROWS_MAX_THREADS = 512  # blocks of 1024 threads have at most 64 registers a thread anyway


def dense_rows(p: Pass, rows: int) -> bool:
    """Whether the one-pass launch `p` over `rows` rows takes LANES_ALONG_ROW_DENSE (see DENSE_ROWS_MIN)."""
    return p.log_lanes == 0 and p.log_r == RADIX_LOG and p.threads <= DENSE_ROWS_MAX_THREADS and rows >= DENSE_ROWS_MIN


# The last pass of a multi-pass merge reads n table entries per row (16 bytes each for 64-bit words, twice the row's
# data) from its limb's table, an inverse as many post factors again. Row r uses limb r % limbs, so row by row the
# blocks that run together belong to as many limbs; where the limbs' tables are larger than about half the L2 cache
# (BFV's q and B_sk at n32768: 30 limbs, 1 MB of inverse tables each), a limb's entries leave L2 before its next row
# reads them. Such transforms take their rows limb by limb instead (kernels/ntt.cu, NttPassParams.limb_rows), a
# limb's rows one after another. Measured on an NVIDIA H100 80GB HBM3 (50 MB of L2) on 2026-11-27, device time of
# graph-replayed calls, same kernels, one process a side, two rounds
# (benchmarks/results/ntt-limb-order-ab-H100-80GB-HBM3-2026-11-27.json): n32768 over q and B_sk, inverse of 90 rows
# 72.8 -> 59.2 us and of 720 rows 503 -> 360 us with this rule; every multi-limb transform limb by limb also ran the
# forwards (15 MB) 0.98x / 1.03x for 90 / 720 rows, 14 limbs of q at n32768 (14 MB inverse) 0.98x / 1.03x inverse
# and 1.00x / 1.07x forward for 42 / 336 rows, and batches of 64 at n16384 (4-8 MB) 1.07x-1.13x: hence the share.
# BFV with the rule (bfv-limb-order-ab-...json): n32768 multiply + relinearize 0.96x, n65536 0.89x-0.90x, n16384
# within 1%.
LIMB_MAJOR_L2_SHARE = 0.5


def limb_major_rows(rows: int, limbs: int, table_bytes: int, l2_bytes: int) -> int:
    """Rows per limb of a multi-pass GPU transform over `rows` rows of `limbs` limbs (row r on limb r % limbs) whose
    last pass reads `table_bytes` of tables in all, on a GPU with `l2_bytes` of L2 cache, where its rows go limb by
    limb (LIMB_MAJOR_L2_SHARE), else 0 (row by row)."""
    if limbs > 1 and rows > limbs and rows % limbs == 0 and table_bytes > LIMB_MAJOR_L2_SHARE * l2_bytes:
        return rows // limbs
    return 0


def choose_algorithm(device: str, log_n: int, rows: int, word_bytes: int) -> str:
    """The algorithm for algorithm="auto": `rows` transforms of 2^log_n words on `device` ("cpu", "gpu")."""
    if device != "gpu":
        return "radix2"
    if log_n in MERGE_LOG_N_RANGE[word_bytes] or small_batch_split(log_n, rows, word_bytes):
        return "radix2"
    return "4step"
