// NTT pass kernel: every GPU transform of hebatch is a sequence of launches of `ntt_pass`.
//
// A pass views each row of n elements as a 3-D array [o][p][i] with extents (D_o, NP, D_i) and runs
// NP-point Cooley-Tukey transforms along p, one per (o, i), in shared memory: LANES such
// transforms per block, R = 2^LOG_R elements per thread. Stages are done R at a time in registers
// (a radix-R step), with shared-memory exchanges between steps. Twiddles come from a table in the
// merge layout (entry 2^s + i serves butterfly group i of stage s; negacyclic psi powers folded in), whose
// stages of a multi-pass merge's last pass may be stored in that pass's order (LANES_BITREV_ORDERED).
//
// The passes compose two algorithms:
//  * 4-step (n = n1 * n2 [* n3]): sub-transforms with their own small tables, each non-last pass
//    multiplying its output by zeta^E (zeta = w or psi, E from the pass's digit and column, looked up
//    in one or two small tables), the last pass storing transposed so the result is in natural order.
//  * merge (radix-2): the passes cover consecutive stages of one n-point transform with the full
//    table (the global index bits above the pass, H = o, select the table entries); the last pass
//    stores bit-reversed positions, so again the result is in natural order.
// The inverse runs the same passes with inverse-root tables; the last pass multiplies by a post
// factor (n^-1, and psi^-j for negacyclic transforms).
#include "launch.cuh"
#include "modarith.cuh"

// Threads per block at most (the launch plans' limit, passed by the loader from hebatch/backend/kernels.py;
// the default serves builds without it, and tests/test_kernel_boundary.py checks that the two agree).
#ifndef NTT_MAX_THREADS
#define NTT_MAX_THREADS 1024
#endif
static_assert(NTT_MAX_THREADS >= 32 && NTT_MAX_THREADS <= 1024 && (NTT_MAX_THREADS & (NTT_MAX_THREADS - 1)) == 0,
              "NTT_MAX_THREADS: a power of two of at most 1024 threads");

// The enums below mirror LANE_MODES and TABLE_MODES of hebatch/backend/kernels.py (checked by
// tests/test_kernel_boundary.py); their values appear in the kernels' template arguments.
enum LaneMode {
    LANES_ALONG_I = 0,    // lanes are consecutive columns i (in-place passes)
    LANES_ALONG_O = 1,    // lanes step o by `digit_d`; output base = o / d + m * (o % d) (4-step last pass)
    LANES_ALONG_ROW = 2,  // lanes are consecutive rows (one-pass transforms of small n)
    LANES_BITREV = 3,     // lanes are o = bitrev(v), v consecutive; output base = v (merge last pass)
    LANES_BITREV_ORDERED = 4,  // the same, its table stages holding group o 2^t + r at r 2^s0 + v
                               // (hebatch.ntt.tables.last_pass_order): neighbouring lanes read neighbouring entries
    LANES_BITREV_ORDERED_PAIRED = 5,  // the same, the transform's last two stages reading their even groups'
                                      // entries only (ntt_steps, PAIRED)
    LANES_ALONG_ROW_DENSE = 6,  // LANES_ALONG_ROW compiled for more blocks per SM (NTT_MAX_REGS_DENSE_ROWS): batches
                                // of many rows of one row per block (hebatch.ntt.recipes.dense_rows)
};

// How a pass gets a power of a root: not at all, from one lookup table, or as the product of two (high, low).
enum TableMode {
    TABLES_NONE = 0,
    TABLES_ONE = 1,
    TABLES_TWO = 2,
};

// The parameters of one ntt_pass launch (NTT_PASS_PARAMS of hebatch/backend/kernels.py, field by field).
// Tables are stacked per limb: limb l's entries start at l * stride.
template <class Tw>
struct NttPassParams {
    const ModConst* consts;  // one row per limb
    const Tw* tw;            // sub-transform twiddles (merge layout)
    const Tw* zh;            // store twiddles zeta^E: high and low tables (TW_MODE)
    const Tw* zl;
    const Tw* ph;            // post factors of the last pass: high and low tables (POST_MODE)
    const Tw* pl;
    long long rows, n;         // rows of n elements; row r uses limb r % limbs
    long long d_i, d_o;        // extents of i and o in the [o][p][i] view of a row
    long long digit_d, digit_m;  // LANES_ALONG_O: output base o / d + m (o % d)
    long long tw_stride, z_stride_h, z_stride_l, p_stride_h, p_stride_l;
    long long z_mask, c_p;     // E = c_p (alpha k + beta)(gamma i + delta) & z_mask
    long long p_mask;          // post factor index j: high[j >> p_bits] low[j & p_mask]
    int limbs, log_do;         // log_do: the bits of o of LANES_BITREV(_ORDERED)
    int s0, use_h;             // merge passes: first stage, whether o's bits select the table entries
    int z_bits, alpha, beta, gamma, delta;
    int p_bits, post_by_output;  // post factor index: the output position (1) or k (0)
    int keep_positions;        // merge non-last passes: store at the positions of the in-place transform
    int in_spread;             // input row of row r: r / in_spread (> 1: one input row feeds in_spread rows)
    int limb_rows;             // > 1: rows = limb_rows * limbs, and the blocks go limb by limb (see ntt_pass)
};

// The parameters of twiddle_grid (TWIDDLE_GRID_PARAMS of hebatch/backend/kernels.py).
template <class Tw>
struct TwiddleGridParams {
    const Tw* high;
    const Tw* low;
    const ModConst* consts;
    long long rows, cols, x_row_stride, x_col_stride;
    u64 row0, row_step, col0, col_step, mask;
    int bits;
};

// The parameters of merge_table (MERGE_TABLE_PARAMS of hebatch/backend/kernels.py).
template <class Tw>
struct MergeTableParams {
    const Tw* high;
    const Tw* low;
    const ModConst* consts;
    long long count;
    u64 mult, add, mask;
    int log_n, bits;
    int last_bits;  // stages from here on in the order of a merge's last pass (0: natural order)
};

// Bank-conflict-avoiding placement of 64/32-bit words: XOR the low nibble with the higher nibbles.
__device__ __forceinline__ int swizzle(int x) { return x ^ (((x >> 4) ^ (x >> 8) ^ (x >> 12)) & 15); }

// One radix-R step of the sub-transform (STEP is a compile-time constant so x stays in registers),
// then the next step. Step 0 covers the top R0 stages; every later step covers LOG_R stages.
// h: the global index bits above the pass (o of a merge pass, 0 for others), or, when ORDERED
// (LANES_BITREV_ORDERED), the lane's v, the table's stages of this pass being in the last pass's order.
// PAIRED (LANES_BITREV_ORDERED_PAIRED, a merge's last pass, whose last stages are the transform's): in every stage
// the odd groups 2k + 1 take the twiddle of group 2k times one constant, `pair` (entry 0 of the merge table, see
// merge_table), so in the transform's last two stages the thread multiplies its odd butterflies' second inputs by
// it and reads half of the stage's entries (the two stages hold three quarters of the table), for one more product
// per two butterflies of those stages. The plan chooses it where each row reads the table from device memory
// (hebatch.ntt.recipes.paired_last_stage).
template <class A, int LOG_NP, int LOG_LANES, int LOG_R, bool ORDERED, bool PAIRED, int STEP>
__device__ __forceinline__ void ntt_steps(typename A::T (&x)[1 << LOG_R], typename A::T* smem, int lane, int tg,
                                          const typename A::Tw* __restrict__ table, int s0, long long h,
                                          const typename A::Tw& pair, const A& arith) {
    constexpr int NP = 1 << LOG_NP;
    constexpr int R = 1 << LOG_R;
    constexpr int LOG_G = LOG_NP - LOG_R;
    constexpr int STEPS = (LOG_NP + LOG_R - 1) / LOG_R;
    constexpr int R0 = LOG_NP - (STEPS - 1) * LOG_R;
    if constexpr (STEP < STEPS) {
        constexpr int s = STEP == 0 ? 0 : R0 + (STEP - 1) * LOG_R;  // first stage of this step
        constexpr int stages = STEP == 0 ? R0 : LOG_R;
        constexpr int lo_bits = LOG_NP - s - LOG_R;  // p bits below this step's come from the group id
        // the last step's group id is bit-reversed so that the final stores are contiguous
        int g = tg;
        if constexpr (STEP == STEPS - 1 && STEPS > 1 && LOG_G > 0) g = (int)(__brev((u32)tg) >> (32 - LOG_G));
        const int g_hi = STEP == 0 ? 0 : g >> lo_bits;
        const int g_lo = STEP == 0 ? g : (g & ((1 << lo_bits) - 1));

        if constexpr (STEP > 0) {
            // exchange: write values at their positions of the previous step, read those of this step
            constexpr int prev_s = STEP == 1 ? 0 : R0 + (STEP - 2) * LOG_R;
            constexpr int prev_lo = LOG_NP - prev_s - LOG_R;
            const int pg_hi = STEP == 1 ? 0 : tg >> prev_lo;
            const int pg_lo = STEP == 1 ? tg : (tg & ((1 << prev_lo) - 1));
            // swizzle is XOR-linear and the bit fields of an address are disjoint: the address of element e
            // is the swizzled base XOR a constant of the unrolled loop
            const int write_base = swizzle(lane * NP + ((pg_hi << (LOG_NP - prev_s)) | pg_lo));
#pragma unroll
            for (int e = 0; e < R; ++e) smem[write_base ^ swizzle(e << prev_lo)] = x[e];
            __syncthreads();
            const int read_base = swizzle(lane * NP + ((g_hi << (LOG_NP - s)) | g_lo));
#pragma unroll
            for (int e = 0; e < R; ++e) x[e] = smem[read_base ^ swizzle(e << lo_bits)];
            if constexpr (STEP < STEPS - 1) __syncthreads();
        }

        // butterflies: stage s+u pairs e and e + R/2^(u+1); its twiddle depends on the p bits above.
        // Group r = g_hi 2^u + j of the pass's sub-transform (j < 2^u, a loop constant) reads entry
        // 2^(s0+st) | h 2^st | r (ORDERED: 2^(s0+st) | r 2^s0 | h); the bit fields are disjoint, so the
        // stage's entries are one pointer plus j (ORDERED: j 2^s0), not an index computed per entry.
#pragma unroll
        for (int u = 0; u < stages; ++u) {
            const int half = R >> (u + 1);
            const int st = s + u;
            const typename A::Tw* stage_tw =
                table + ((1ll << (s0 + st)) | (ORDERED ? ((long long)g_hi << (u + s0)) | h
                                                       : (h << st) | ((long long)g_hi << u)));
            typename A::Tw w;
            // the transform's last two stages (from the step's second stage on, where the groups 2k, 2k + 1 are
            // one thread's)
            const bool paired = PAIRED && STEP == STEPS - 1 && u >= 1 && u >= stages - 2;
#pragma unroll
            for (int b = 0; b < R / 2; ++b) {  // constant trip counts keep x in registers
                const int j = b / half, e = j * 2 * half + (b % half);
                if (paired) {
                    if (j & 1)
                        x[e + half] = arith.mul_tw(x[e + half], pair);
                    else
                        w = stage_tw[ORDERED ? (long long)j << s0 : j];
                } else if (b % half == 0) {
                    w = stage_tw[ORDERED ? (long long)j << s0 : j];
                }
                // A::ALTERNATE_STAGES: every other stage without the reduction, counted from the pass's last
                if constexpr (A::ALTERNATE_STAGES) {
                    if ((LOG_NP - 1 - st) & 1)
                        arith.ct_unreduced(x[e], x[e + half], w);
                    else
                        arith.ct(x[e], x[e + half], w);
                } else {
                    arith.ct(x[e], x[e + half], w);
                }
            }
        }
        ntt_steps<A, LOG_NP, LOG_LANES, LOG_R, ORDERED, PAIRED, STEP + 1>(x, smem, lane, tg, table, s0, h, pair,
                                                                         arith);
    }
}

// Registers per thread that ntt_pass may use at most, through its launch bounds' blocks per SM (a tuning
// knob; 255 leaves the compiler free). At 128 the 64-bit passes that used up to 168 get one more block per
// SM: on the H100, 2^12 x 4096 went 0.81x / 0.85x (forward / inverse) and 2^24 0.97x / 0.90x of their time
// without the limit; the instances that spill 8-24 bytes per thread under it (cuobjdump; one-pass blocks
// with the fused product among them) still ran 0.94x-1.00x
// (benchmarks/results/ntt-max-regs-ab-H100-80GB-HBM3-2026-11-26.json).
#ifndef NTT_MAX_REGS
#define NTT_MAX_REGS 128
#endif
// The same for passes of at most 8 elements per thread (LOG_R <= 3: few rows of few elements, where more
// threads at a time is the point; see SMALL_SPLIT_RADIX_LOG in hebatch/ntt/recipes.py).
#ifndef NTT_MAX_REGS_SMALL_R
#define NTT_MAX_REGS_SMALL_R 80
#endif
// The same for LANES_ALONG_ROW_DENSE: 64, four 256-thread blocks (rows of 2^12) or two of 512 (2^13) per SM instead
// of two or one, for batches of many rows (hebatch.ntt.recipes.DENSE_ROWS_MIN, with the measurements). Some instances
// spill (cuobjdump -res-usage, nvcc 13: 8-104 bytes of stack a thread with 60- and 62-bit moduli, 8 for Goldilocks
// inverses, none for 32-bit words or the 60-bit 2^12 forward).
#ifndef NTT_MAX_REGS_DENSE_ROWS
#define NTT_MAX_REGS_DENSE_ROWS 64
#endif
constexpr int ntt_max_regs(int log_r, int lane_mode) {
    if (log_r <= 3) return NTT_MAX_REGS_SMALL_R;
    return lane_mode == LANES_ALONG_ROW_DENSE ? NTT_MAX_REGS_DENSE_ROWS : NTT_MAX_REGS;
}
constexpr int ntt_min_blocks(int threads, int regs) {
    return 65536 / (threads * regs) > 1 ? 65536 / (threads * regs) : 1;
}

template <class A, int LOG_NP, int LOG_LANES, int LOG_R, int LANE_MODE, bool LAST, int TW_MODE, int POST_MODE,
          bool FUSE>
__global__ void __launch_bounds__((1 << (LOG_NP + LOG_LANES - LOG_R)),
                                  ntt_min_blocks(1 << (LOG_NP + LOG_LANES - LOG_R),
                                                 ntt_max_regs(LOG_R, LANE_MODE)))
    ntt_pass(const typename A::T* __restrict__ in, const typename A::T* __restrict__ in2,
             typename A::T* __restrict__ out, KERNEL_PARAMS NttPassParams<typename A::Tw> prm) {
    static_assert((1 << (LOG_NP + LOG_LANES - LOG_R)) <= NTT_MAX_THREADS, "more threads than a block may have");
    static_assert(LANE_MODE >= LANES_ALONG_I && LANE_MODE <= LANES_ALONG_ROW_DENSE,
                  "LANE_MODE: one of enum LaneMode");
    static_assert(TW_MODE >= TABLES_NONE && TW_MODE <= TABLES_TWO && POST_MODE >= TABLES_NONE &&
                      POST_MODE <= TABLES_TWO,
                  "TW_MODE, POST_MODE: one of enum TableMode");
    typedef typename A::T T;
    typedef typename A::Tw Tw;
    constexpr int NP = 1 << LOG_NP;
    constexpr int LANES = 1 << LOG_LANES;
    constexpr int R = 1 << LOG_R;
    constexpr int LOG_G = LOG_NP - LOG_R;  // thread groups per sub-transform: G = NP / R
    constexpr bool ALONG_ROW = LANE_MODE == LANES_ALONG_ROW || LANE_MODE == LANES_ALONG_ROW_DENSE;
    // A one-pass launch (lanes along rows) covers whole rows, n = NP and d_i = 1 (hebatch.ntt.launch's
    // transform_launches; hebatch.backend.gpu.ntt.pass_params checks it). An inverse's takes them as compile-time
    // constants: its loads, stores and post factors are then one pointer plus constants each, with no address computed
    // per element. So does the forward of 2^13 64-bit words; other forwards keep them as parameters: compiled with the
    // constants, the dense-rows forward of 2^12 60-bit words spilled 48 bytes (README, Performance, 2026-11-27).
    constexpr bool ROW_CONSTANTS = ALONG_ROW && (POST_MODE != TABLES_NONE || (LOG_NP == 13 && sizeof(T) == 8));
    // the struct's fields read into locals once
    const long long rows = prm.rows, n = ROW_CONSTANTS ? NP : prm.n, d_i = ROW_CONSTANTS ? 1 : prm.d_i;
    const long long d_o = prm.d_o, digit_d = prm.digit_d;
    const long long digit_m = prm.digit_m, tw_stride = prm.tw_stride;
    const long long z_stride_h = prm.z_stride_h, z_stride_l = prm.z_stride_l;
    const long long z_mask = prm.z_mask, c_p = prm.c_p;
    const long long p_stride_h = prm.p_stride_h, p_stride_l = prm.p_stride_l;
    const long long p_mask = prm.p_mask;
    const int limbs = prm.limbs, log_do = prm.log_do, s0 = prm.s0;
    const int use_h = prm.use_h, z_bits = prm.z_bits, alpha = prm.alpha;
    const int beta = prm.beta, gamma = prm.gamma, delta = prm.delta;
    const int p_bits = prm.p_bits, post_by_output = prm.post_by_output;
    const int keep_positions = prm.keep_positions;
    const int in_spread = prm.in_spread;
    const u32 limb_rows = (u32)prm.limb_rows;
    const ModConst* __restrict__ consts = prm.consts;
    const typename A::Tw* __restrict__ tw = prm.tw;
    const typename A::Tw* __restrict__ zh = prm.zh;
    const typename A::Tw* __restrict__ zl = prm.zl;
    const typename A::Tw* __restrict__ ph = prm.ph;
    const typename A::Tw* __restrict__ pl = prm.pl;
    extern __shared__ unsigned char smem_raw[];
    T* smem = reinterpret_cast<T*>(smem_raw);

    const int tid = threadIdx.x;
    const int lane = tid & (LANES - 1);
    const int tg = tid >> LOG_LANES;

    // ---- which sub-transform this lane owns: (row, o, i) ----
    // A grid has fewer than 2^31 blocks and a launch fewer than 2^32 rows, so tiles and rows are divided
    // in 32 bits; the extents d_i, d_o and digit_d are powers of two, so their divisions are shifts.
    long long row, o, i = 0, out_base, lane_v = 0;
    const u32 tile = blockIdx.x;
    bool active = true;
    if (ALONG_ROW) {
        row = (long long)tile * LANES + lane;
        active = row < rows;
        if (!active) row = rows - 1;  // stays in bounds; results discarded
        o = 0;
        out_base = row * n;
    } else {
        const u32 lane_tiles = (u32)(LANE_MODE == LANES_ALONG_I ? (d_i >> LOG_LANES) * d_o : d_o >> LOG_LANES);
        const u32 k = tile >> (__ffs(lane_tiles) - 1);  // each row's tiles in turn
        const u32 t = tile & (lane_tiles - 1);
        if (limb_rows > 1) {
            // rows limb by limb (row j limbs + l is the k = l limb_rows + j-th): a limb's rows follow one another and
            // read its tables from L2 (with many limbs, row by row they did not)
            const u32 l = k / limb_rows;
            row = (long long)(k - l * limb_rows) * limbs + l;
        } else {
            row = k;
        }
        if (LANE_MODE == LANES_ALONG_I) {
            const u32 tiles_i = (u32)(d_i >> LOG_LANES);
            o = t >> (__ffs(tiles_i) - 1);
            i = (long long)(t & (tiles_i - 1)) * LANES + lane;
            out_base = row * n + o * NP * d_i + i;
        } else if (LANE_MODE == LANES_ALONG_O) {
            const int d_bits = __ffsll(digit_d) - 1;
            // o = (group of LANES values of o / d, lane) d + the tile's remainder mod d
            o = ((long long)(t >> d_bits) * LANES + lane) * digit_d + (t & (digit_d - 1));
            out_base = row * n + (o >> d_bits) + digit_m * (o & (digit_d - 1));
        } else {  // LANES_BITREV, LANES_BITREV_ORDERED(_PAIRED)
            lane_v = (long long)t * LANES + lane;
            o = log_do ? (long long)(__brevll((u64)lane_v) >> (64 - log_do)) : 0;
            out_base = row * n + lane_v;
        }
    }
    const long long in_base = (in_spread == 1 ? row : (long long)((u32)row / (u32)in_spread)) * n + o * NP * d_i + i;
    const int limb = (int)((u32)row % (u32)limbs);
    const A arith(consts[limb]);
    const Tw* table = tw + limb * tw_stride;
    // merge passes: the global index bits above this pass select the table entries (LANES_BITREV_ORDERED: in the
    // last pass's order, by v; see ntt_steps)
    constexpr bool ORDERED = LANE_MODE == LANES_BITREV_ORDERED || LANE_MODE == LANES_BITREV_ORDERED_PAIRED;
    const long long h = ORDERED ? lane_v : (use_h ? o : 0);

    T x[R];

    // ---- step 0: load straight from global memory (consecutive threads: consecutive lanes, then
    // consecutive groups, so rows and columns are both read in contiguous runs) ----
    // element e sits at p = e G + tg: one pointer stepped by G d_i, not an address computed per element
    const long long in_step = d_i << LOG_G;
    const long long in_first = in_base + tg * d_i;
#pragma unroll
    for (int e = 0; e < R; ++e) {
        const long long addr = in_first + e * in_step;
        if (FUSE) {
            x[e] = arith.mul(in[addr], in2[addr]);
        } else {
            x[e] = in[addr];
        }
    }

    // a merge's last pass ends with the transform's last stage, whose odd groups' twiddles are the even ones'
    // times table[0] (merge_table)
    constexpr bool PAIRED = LAST && LANE_MODE == LANES_BITREV_ORDERED_PAIRED;
    typename A::Tw pair{};
    if constexpr (PAIRED) pair = table[0];
    ntt_steps<A, LOG_NP, LOG_LANES, LOG_R, ORDERED, PAIRED, 0>(x, smem, lane, tg, table, s0, h, pair, arith);

    if (!active) return;

    // ---- store: element e sits at p = bitrev_G(tg) * R + e and holds sub-output k = bitrev_R(e) * G + tg ----
    // The store loop is written once per value of its run-time switch (post_by_output in a last pass,
    // keep_positions otherwise), so that no select stays in the unrolled loop.
    // A merge inverse's last pass (bitrev lanes, d_i = 1) stores output j = v + k 2^s0 (lane v, k = ebr G + tg) through
    // one pointer per thread stepped by ebr times a per-thread constant, for the output and for the post factors, where
    // j was formed per element: one table, post[j] (p_mask is n - 1 or 0); two, high[j >> p_bits] low[j & p_mask], with
    // p_bits <= s0, so that j >> p_bits = (v >> p_bits) + k 2^(s0 - p_bits) and the low factor is the lane's, read once
    // (both checked by hebatch.backend.gpu.ntt.pass_params). Forwards keep the per-element address: so compiled,
    // 2^16 x 256 and 2^17 x 128 ran 1.01x.
    constexpr bool MERGE_LAST = LAST && POST_MODE != TABLES_NONE && (LANE_MODE == LANES_BITREV || ORDERED);
    constexpr bool LANE_POST = MERGE_LAST && POST_MODE == TABLES_TWO;
    Tw lane_post{};
    if (LANE_POST && post_by_output) lane_post = pl[limb * p_stride_l + (lane_v & p_mask)];
    const Tw* __restrict__ post_row = pl + limb * p_stride_l;  // a one-pass launch's factor: post_row[k & p_mask]
    const long long out_stride = n >> LOG_NP;  // 2^s0 in a merge's last pass
    const long long e_step = out_stride << LOG_G;
    T* __restrict__ out_thread = out + out_base + tg * out_stride;
    const bool post_indexed = p_mask != 0;
    const Tw* __restrict__ post_low_thread = post_row + (post_indexed ? lane_v + tg * out_stride : 0);
    const long long post_low_step = post_indexed ? e_step : 0;
    const Tw* __restrict__ post_high_thread =
        ph + limb * p_stride_h + (lane_v >> p_bits) + ((long long)tg << (s0 - p_bits));
    const long long post_high_step = (long long)1 << (LOG_G + s0 - p_bits);
    auto store = [&](auto by_position) {
        constexpr bool BY_POSITION = decltype(by_position)::value;
#pragma unroll
        for (int e = 0; e < R; ++e) {
            const int ebr = (int)(__brev((u32)e) >> (32 - LOG_R));
            const long long k = ((long long)ebr << LOG_G) | tg;
            T v = x[e];
            if (TW_MODE != TABLES_NONE) {
                // E = c_p (alpha k + beta)(gamma i + delta) mod N_z; N_z is a power of two, so wrapping u64 is exact
                const u64 ex = (u64)c_p * ((u64)alpha * (u64)k + (u64)beta) * ((u64)gamma * (u64)i + (u64)delta) &
                               (u64)z_mask;
                if (TW_MODE == TABLES_TWO) v = arith.mul_tw(v, zh[limb * z_stride_h + (ex >> z_bits)]);
                v = arith.mul_tw(v, zl[limb * z_stride_l + (ex & ((1ull << z_bits) - 1))]);
            }
            if (MERGE_LAST && BY_POSITION) {
                if (POST_MODE == TABLES_TWO) v = arith.mul_tw(v, post_high_thread[ebr * post_high_step]);
                out_thread[ebr * e_step] =
                    arith.mul_tw_reduced(v, POST_MODE == TABLES_TWO ? lane_post : post_low_thread[ebr * post_low_step]);
            } else if (LAST) {
                const long long stride = n >> LOG_NP;
                const long long addr = out_base + k * stride;
                if (POST_MODE != TABLES_NONE) {
                    // one pass: the factor of output k (< NP) from post_row; a 4-step last pass: of k or the position
                    const long long jpost = BY_POSITION ? addr - row * n : k;  // post_by_output
                    if (POST_MODE == TABLES_TWO) v = arith.mul_tw(v, ph[limb * p_stride_h + (jpost >> p_bits)]);
                    out[addr] = arith.mul_tw_reduced(
                        v, ALONG_ROW ? post_row[(u32)k & (u32)p_mask] : pl[limb * p_stride_l + (jpost & p_mask)]);
                } else {
                    // a store twiddle's product leaves v below 4q, a butterfly up to 16q (Mod60)
                    out[addr] = TW_MODE != TABLES_NONE ? arith.reduce_product(v) : arith.reduce(v);
                }
            } else if (BY_POSITION) {  // keep_positions: the next (merge) pass continues the same in-place transform
                const int g_last = LOG_G > 0 ? (int)(__brev((u32)tg) >> (32 - LOG_G)) : 0;
                out[out_base + ((long long)((g_last << LOG_R) | e)) * d_i] = v;
            } else {
                out[out_base + k * d_i] = v;
            }
        }
    };
    if (LAST && POST_MODE == TABLES_NONE)
        store(Bool<false>());  // the switch selects nothing here
    else if (LAST ? post_by_output : keep_positions)
        store(Bool<true>());
    else
        store(Bool<false>());
}

// Pointwise product per limb: c = a * b mod q, with a's or b's batch broadcast when its row count is 1.
template <class A>
__global__ void pointwise_mul(const typename A::T* __restrict__ a, const typename A::T* __restrict__ b,
                              typename A::T* __restrict__ c, long long rows, long long n, int limbs,
                              long long a_rows, long long b_rows, const ModConst* __restrict__ consts) {
    const long long total = rows * n;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long row = idx / n;
        const long long col = idx - row * n;
        const int limb = (int)(row % limbs);
        const A arith(consts[limb]);
        const long long ra = a_rows == rows ? row : row % limbs;
        const long long rb = b_rows == rows ? row : row % limbs;
        c[idx] = arith.reduce_product(arith.mul(a[ra * n + col], b[rb * n + col]));
    }
}

// Shoup companion floor(w 2^64 / q) of a merge-table entry; Goldilocks multiplies without one.
template <class A>
__device__ __forceinline__ u64 table_companion(u64 w, u64 q) {
    return (u64)(((u128)w << 64) / q);
}
template <>
__device__ __forceinline__ u64 table_companion<Goldilocks>(u64, u64) {
    return 0;
}

// The radix-2 (merge) twiddle table of hebatch/ntt/tables.py built on the device: entry k, 1 <= k < count,
// of stage s = floor(log2 k) and group i = k - 2^s (from position k - 2^s = r 2^b + v when s >= b = last_bits:
// i = bitrev_b(v) 2^(s - b) + r, tables.last_pass_order) is root^E with E = (mult brv_s(i) + add) << (log_n - 1 - s)
// (forward negacyclic: mult 2, add 1; cyclic: 1, 0), E < N = mask + 1, root^E = high[E >> bits] *
// low[E & (2^bits - 1)]; entry 0 is the ratio of odd to even groups' entries, one constant for every stage from
// stage 1 on (1 below 4 points).
// Each entry carries its Shoup companion.
template <class A>
__global__ void merge_table(typename A::Tw* __restrict__ out, KERNEL_PARAMS MergeTableParams<typename A::Tw> prm) {
    const A arith(prm.consts[0]);
    const u64 q = prm.consts[0].q;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < prm.count;
         k += (long long)gridDim.x * blockDim.x) {
        u64 e = 0;  // the exponent of the entry's power of root (entry 0 below 4 points: 1)
        if (k == 0) {
            // entry 0 (no stage's): the ratio of a stage's entries of odd groups 2k + 1 to those of groups 2k,
            // E(2k + 1) - E(2k) = mult 2^(log_n - 2) in every stage s >= 1 (bitrev_s(2k + 1) is that of 2k plus
            // 2^(s - 1)); the last merge pass reads it instead of half of the last two stages (ntt_steps, PAIRED)
            if (prm.log_n >= 2) e = (prm.mult << (prm.log_n - 2)) & prm.mask;
        } else {
            const int s = 63 - __clzll(k);
            const int b = prm.last_bits;
            u64 i = (u64)k - (1ull << s);
            if (b > 0 && s >= b) i = ((__brevll(i & ((1ull << b) - 1)) >> (64 - b)) << (s - b)) | (i >> b);
            const u64 j = s ? __brevll(i) >> (64 - s) : 0;
            e = ((prm.mult * j + prm.add) << (prm.log_n - 1 - s)) & prm.mask;
        }
        const u64 w =
            arith.reduce_product(arith.mul_tw(prm.high[e >> prm.bits].w, prm.low[e & ((1ull << prm.bits) - 1)]));
        typename A::Tw entry;
        entry.w = w;
        entry.wq = table_companion<A>(w, q);
        out[k] = entry;
    }
}

// y[i, j] = x[i, j] * root^E with E = ((row0 + row_step i) * (col0 + col_step j)) mod N, for a root
// of power-of-two order N: root^E = high[E >> bits] * low[E & (2^bits - 1)] (the twiddle step of a
// 4-step transform spread over several devices, on one block of its matrix). Offsets and steps
// arrive reduced mod N; N divides 2^64, so wrapping 64-bit products keep E exact.
template <class A>
__global__ void twiddle_grid(const typename A::T* __restrict__ x, typename A::T* __restrict__ y,
                             KERNEL_PARAMS TwiddleGridParams<typename A::Tw> prm) {
    const long long rows = prm.rows, cols = prm.cols, x_row_stride = prm.x_row_stride, x_col_stride = prm.x_col_stride;
    const u64 row0 = prm.row0, row_step = prm.row_step, col0 = prm.col0, col_step = prm.col_step, mask = prm.mask;
    const int bits = prm.bits;
    const typename A::Tw* __restrict__ high = prm.high;
    const typename A::Tw* __restrict__ low = prm.low;
    const ModConst* __restrict__ consts = prm.consts;
    const A arith(consts[0]);
    const long long total = rows * cols;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx / cols, j = idx - i * cols;
        const u64 e = ((row0 + row_step * (u64)i) * (col0 + col_step * (u64)j)) & mask;
        typename A::T v = x[i * x_row_stride + j * x_col_stride];
        v = arith.mul_tw(v, high[e >> bits]);
        v = arith.mul_tw(v, low[e & ((1ull << bits) - 1)]);
        y[idx] = arith.reduce_product(v);
    }
}
