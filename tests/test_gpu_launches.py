"""The GPU backend's launch sequences and tables, run through a NumPy model of the kernel.

These check on any machine what the GPU tests check on a GPU: that the passes, their geometry,
their tables and the kernel's index arithmetic compute exactly the transform of the contract.
"""

import numpy as np
import pytest

import hebatch as hb
from hebatch.backend import LANE_MODES, get
from hebatch.field import default_root
from hebatch.ntt import recipes
from hebatch.ntt.plan import make_plan

from .gpu_emulator import emulate_transform
from .oracle import random_residues

Q60 = hb.ntt_primes(60, 2**12, 2)  # Mod60 butterflies
Q62 = hb.ntt_primes(62, 2**14, 2)  # Mod64 butterflies
Q30 = hb.ntt_primes(30, 2**12, 1)[0]


def cpu_reference(x3, moduli, n, negacyclic, inverse):
    plan = make_plan(n, tuple(moduli), tuple(default_root(q, n, negacyclic) for q in moduli), negacyclic, "radix2")
    backend = get("cpu").ntt
    return (backend.inverse if inverse else backend.forward)(x3.astype(np.uint64), plan)


def run_case(
    moduli,
    log_n,
    batch,
    algorithm,
    negacyclic,
    inverse,
    dtype=np.uint64,
    fuse=False,
    split=None,
    ordered_last=False,
    paired_last=False,
):
    n = 1 << log_n
    rng = np.random.default_rng()
    x3 = np.stack([random_residues(rng, q, (batch, n), dtype) for q in moduli], axis=1)
    roots = tuple(default_root(q, n, negacyclic) for q in moduli)
    args = (split, None, ordered_last, False, None, paired_last)
    plan = make_plan(n, tuple(moduli), roots, negacyclic, algorithm, *args)
    plan.cache.clear()
    in2 = None
    if fuse:
        in2 = np.stack([random_residues(rng, q, (batch, n), dtype) for q in moduli], axis=1)
    got, launches = emulate_transform(plan, x3, inverse, in2)
    if fuse:
        backend = get("cpu").ntt
        product = backend.pointwise_mul(x3.astype(np.uint64), in2.astype(np.uint64), plan)
        expected = cpu_reference(product, moduli, n, negacyclic, True)
    else:
        expected = cpu_reference(x3, moduli, n, negacyclic, inverse)
    assert (got.astype(np.uint64) == expected).all(), (algorithm, [ln.name for ln in launches])
    return launches


def clear_plans():
    from hebatch.ntt.word import _plan_choice

    make_plan.cache_clear()
    _plan_choice.cache_clear()


@pytest.fixture
def small_tiles(monkeypatch):
    """Shrink the recipe's tile so that multi-pass transforms appear at small n."""
    monkeypatch.setitem(recipes.TILE_LOG, 8, 8)
    monkeypatch.setitem(recipes.TILE_LOG, 4, 8)
    monkeypatch.setitem(recipes.SINGLE_PASS_MAX_LOG, 8, 5)
    monkeypatch.setitem(recipes.SINGLE_PASS_MAX_LOG, 4, 5)
    monkeypatch.setattr(recipes, "SMALL_TILE_LOG", 6)
    clear_plans()  # the plans and passes of the shrunk recipe
    yield
    clear_plans()


@pytest.mark.parametrize("negacyclic", [False, True])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize(
    "moduli",
    [Q60, Q62, [hb.GOLDILOCKS], [hb.BABYBEAR, Q30]],
    ids=["mod60", "mod64", "goldilocks", "mod32"],
)
def test_single_pass(moduli, negacyclic, inverse):
    dtype = np.uint32 if moduli[0] < 2**31 else np.uint64
    for log_n in (1, 3, 4, 7):
        launches = run_case(moduli, log_n, 3, "4step", negacyclic, inverse, dtype)
        assert len(launches) == 1


@pytest.mark.parametrize("algorithm", ["4step", "radix2"])
@pytest.mark.parametrize("negacyclic", [False, True])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize(
    "moduli", [Q60, Q62, [hb.GOLDILOCKS], [hb.BABYBEAR]], ids=["mod60", "mod64", "goldilocks", "mod32"]
)
def test_multi_pass(small_tiles, moduli, algorithm, negacyclic, inverse):
    dtype = np.uint32 if moduli[0] < 2**31 else np.uint64
    seen = set()
    # (ordered_last, paired_last): the last pass's table order, and reading half of the last stage
    variants = ((False, False), (True, False), (True, True)) if algorithm == "radix2" else ((False, False),)
    for log_n in (6, 9, 11, 13):
        for ordered_last, paired in variants:
            order = dict(ordered_last=ordered_last, paired_last=paired)
            launches = run_case(moduli, log_n, 2, algorithm, negacyclic, inverse, dtype, **order)
            seen.add(len(launches))
            mode = launches[-1].template[4]
            modes = {(True, False): "bitrev_ordered", (True, True): "bitrev_ordered_paired"}
            assert (mode == LANE_MODES[modes[ordered_last, paired]]) if ordered_last else mode not in (4, 5)
    assert seen == {2, 3}  # two- and three-pass recipes both covered


def test_ordered_last_pass_of_every_multi_pass_merge():
    """plan_for orders the last pass of every GPU merge of several passes over 64-bit words (Goldilocks too);
    one-pass sizes, 32-bit words and the CPU keep the natural table."""
    import types

    from hebatch.ntt.validate import check_transform_args
    from hebatch.ntt.word import plan_for

    gpu, cpu = types.SimpleNamespace(name="gpu"), types.SimpleNamespace(name="cpu")

    def plan(log_n, rows, q, dtype=np.uint64):
        args = check_transform_args((1 << log_n,), dtype, q, negacyclic=True)
        return plan_for(args, gpu, rows, dtype)

    q = hb.ntt_primes(60, 1 << 23, 1)[0]
    for log_n, rows in ((14, 1024), (22, 1), (16, 256), (20, 1), (15, 1), (14, 1)):
        assert plan(log_n, rows, q).ordered_last and plan(log_n, rows, hb.GOLDILOCKS).ordered_last, (log_n, rows)
    assert not plan(12, 4096, q).ordered_last  # one pass
    # few large rows per limb read half of the last two stages; rows sharing the table from L2 read them whole,
    # and rows whose table exceeds the L2 read half at any batch
    big, most, huge = recipes.PAIRED_MIN_LOG_N, recipes.PAIRED_MAX_BATCH, recipes.PAIRED_ANY_BATCH_MIN_LOG_N
    assert plan(big + 2, 1, q).paired_last and plan(big, most, q).paired_last
    assert plan(big, 1, hb.GOLDILOCKS).paired_last
    assert not plan(big - 1, 1, q).paired_last and not plan(14, 1024, q).paired_last
    assert not plan(big, most + 1, q).paired_last and not plan(huge - 1, most + 1, q).paired_last
    assert plan(huge, most + 1, q).paired_last and plan(huge, 64, hb.GOLDILOCKS).paired_last
    rns = check_transform_args((2, 1 << big), np.uint64, [q, hb.ntt_primes(60, 1 << 23, 2)[1]], negacyclic=True)
    assert plan_for(rns, gpu, most).paired_last and not plan_for(rns, gpu, most + 1).paired_last  # rows per limb
    with pytest.raises(ValueError, match="paired_last"):  # without the ordered table
        root = default_root(q, 1 << 14, True)
        make_plan(1 << 14, (q,), (root,), True, "radix2", None, None, False, False, None, True)
    assert not plan(16, 256, hb.BABYBEAR, np.uint32).ordered_last
    args = check_transform_args((1 << 14,), np.uint64, q, negacyclic=True)
    assert not plan_for(args, cpu, 1024).ordered_last


def test_fused_product(small_tiles):
    for log_n in (4, 9, 12):
        run_case(Q60, log_n, 2, "4step", True, True, fuse=True)
    run_case([hb.BABYBEAR], 10, 1, "4step", False, True, np.uint32, fuse=True)


def test_two_level_twiddle_tables(monkeypatch, small_tiles):
    """Large transforms look twiddles up in two tables; force that path at a small size."""
    from hebatch import arith

    monkeypatch.setattr(arith, "SINGLE_LEVEL_MAX_LOG", 3)
    for algorithm in ("4step", "radix2"):
        for inverse in (False, True):
            launches = run_case(Q60, 10, 1, algorithm, True, inverse)
            assert any(ln.template[6] == 2 or ln.template[7] == 2 for ln in launches) == (
                algorithm == "4step" or inverse
            )


def test_pass_params_refuses_a_post_split_above_the_last_pass(monkeypatch, small_tiles):
    """A merge's last pass reads the low post factor once per lane (output j = v + k 2^s0), which holds only while
    the two post tables split j at or below s0: launch parameters for any other split are refused."""
    from hebatch import arith
    from hebatch.backend.gpu.ntt import modconst_table, pass_params

    monkeypatch.setattr(arith, "SINGLE_LEVEL_MAX_LOG", 3)
    n, idx = 1 << 10, tuple(range(len(Q60)))
    plan = make_plan(n, tuple(Q60), tuple(default_root(q, n, True) for q in Q60), True, "radix2", None, None, True)
    tables = plan.gpu_pass_tables(idx, True, 64)
    last = plan.gpu_launches(idx, tables, 2 * len(Q60), 64, False)[-1]
    host = dict(tables[last.pass_index])
    assert host["post_mode"] == 2 and last.template[4] == LANE_MODES["bitrev_ordered"]
    device = {k: v for k, v in host.items() if isinstance(v, np.ndarray)}
    args = (modconst_table(plan, idx), 2 * len(Q60), n, len(Q60))
    pass_params(last, host, device, *args)  # the plan's own split
    host["post_bits"] = last.geometry["s0"] + 1
    with pytest.raises(ValueError, match="post factor split"):
        pass_params(last, host, device, *args)


def test_pass_params_refuses_a_partial_post_mask_in_the_last_pass(small_tiles):
    """A merge inverse's last pass indexes a one-table post factor by the whole output position (mask n - 1) or reads
    its entry 0 (mask 0, cyclic): launch parameters with any other mask are refused."""
    from hebatch.backend.gpu.ntt import modconst_table, pass_params

    n, idx = 1 << 10, tuple(range(len(Q60)))
    for negacyclic in (True, False):
        roots = tuple(default_root(q, n, negacyclic) for q in Q60)
        plan = make_plan(n, tuple(Q60), roots, negacyclic, "radix2", None, None, True)
        tables = plan.gpu_pass_tables(idx, True, 64)
        last = plan.gpu_launches(idx, tables, 2 * len(Q60), 64, False)[-1]
        host = dict(tables[last.pass_index])
        assert host["post_mode"] == 1 and host["post_mask"] == (n - 1 if negacyclic else 0)
        device = {k: v for k, v in host.items() if isinstance(v, np.ndarray)}
        args = (modconst_table(plan, idx), 2 * len(Q60), n, len(Q60))
        pass_params(last, host, device, *args)
        host["post_mask"] = n // 2 - 1
        with pytest.raises(ValueError, match="post table mask"):
            pass_params(last, host, device, *args)


def test_pass_params_refuses_a_row_pass_over_other_rows():
    """A one-pass launch (lanes along rows) compiles n = 2^log_np and d_i = 1 in: parameters for rows of another
    length are refused."""
    from hebatch.backend.gpu.ntt import modconst_table, pass_params

    n, idx = 1 << 10, tuple(range(len(Q60)))
    plan = make_plan(n, tuple(Q60), tuple(default_root(q, n, True) for q in Q60), True, "radix2", None, None, False)
    tables = plan.gpu_pass_tables(idx, True, 64)
    (only,) = plan.gpu_launches(idx, tables, 2 * len(Q60), 64, False)
    assert only.template[4] in (LANE_MODES["row"], LANE_MODES["row_dense"])
    host = dict(tables[only.pass_index])
    device = {k: v for k, v in host.items() if isinstance(v, np.ndarray)}
    consts = modconst_table(plan, idx)
    pass_params(only, host, device, consts, 2 * len(Q60), n, len(Q60))
    with pytest.raises(ValueError, match="pass along rows"):
        pass_params(only, host, device, consts, 2 * len(Q60), 2 * n, len(Q60))


def test_blocks_go_limb_by_limb(small_tiles):
    """Multi-pass merges of several limbs whose tables outweigh the L2 share take their rows limb by limb
    (recipes.limb_major_rows; the emulator knows no L2): every row and column is still covered once and the results
    stay exact. One limb, one pass, 4-step passes (small tables) and tables within the share keep the rows in order;
    pass_params refuses rows that are not limbs x limb_rows."""
    from hebatch.backend.gpu.ntt import modconst_table, pass_params

    moduli = hb.ntt_primes(60, 2**12, 3)
    for inverse in (False, True):
        launches = run_case(moduli, 9, 4, "radix2", True, inverse)
        assert len(launches) > 1 and [ln.geometry["limb_rows"] for ln in launches] == [4] * len(launches)
    assert all(ln.geometry["limb_rows"] == 0 for ln in run_case(moduli[:1], 9, 4, "radix2", True, False))
    assert all(ln.geometry["limb_rows"] == 0 for ln in run_case(moduli, 4, 4, "radix2", True, False))
    assert all(ln.geometry["limb_rows"] == 0 for ln in run_case(moduli, 9, 4, "4step", True, True))
    n, idx = 1 << 9, (0, 1, 2)
    plan = make_plan(n, tuple(moduli), tuple(default_root(q, n, True) for q in moduli), True, "radix2")
    for inverse, table_bytes in ((False, 3 * n * 16), (True, 3 * n * 32)):  # an inverse's post factors: one table
        tables = plan.gpu_pass_tables(idx, inverse, 64)
        for l2, limb_rows in ((2 * table_bytes - 2, 4), (2 * table_bytes, 0)):  # LIMB_MAJOR_L2_SHARE of L2
            launches = plan.gpu_launches(idx, tables, 12, 64, False, l2)
            assert {ln.geometry["limb_rows"] for ln in launches} == {limb_rows}, (inverse, l2)
    last = plan.gpu_launches(idx, tables, 12, 64, False)[-1]  # no L2 known: limb by limb
    host = dict(tables[last.pass_index])
    device = {k: v for k, v in host.items() if isinstance(v, np.ndarray)}
    consts = modconst_table(plan, idx)
    assert pass_params(last, host, device, consts, 12, n, 3)[0]["limb_rows"] == 4
    with pytest.raises(ValueError, match="limb by limb"):
        pass_params(last, host, device, consts, 9, n, 3)


def test_merge_post_factor_from_one_table(monkeypatch, small_tiles):
    """A batch of merge inverses of up to 2^POST_ONE_TABLE_MAX_LOG points takes n^-1 psi^-j from one table of n
    entries (exact through the kernel model); plan_for chooses it for negacyclic inverses of any row count."""
    import types

    from hebatch import arith
    from hebatch.ntt.validate import check_transform_args
    from hebatch.ntt.word import plan_for

    monkeypatch.setattr(arith, "SINGLE_LEVEL_MAX_LOG", 3)
    monkeypatch.setattr(recipes, "POST_ONE_TABLE_MAX_LOG", 10)
    n = 1 << 10
    rng = np.random.default_rng()
    x3 = np.stack([random_residues(rng, q, (2, n), np.uint64) for q in Q60], axis=1)
    plan = make_plan(
        n, tuple(Q60), tuple(default_root(q, n, True) for q in Q60), True, "radix2", None, None, False, True
    )
    got, launches = emulate_transform(plan, x3, True)
    assert launches[-1].template[7] == 1  # one post table
    assert (got.astype(np.uint64) == cpu_reference(x3, Q60, n, True, True)).all()
    with pytest.raises(ValueError, match="post_one_table"):
        make_plan(
            2 * n, tuple(Q60), tuple(default_root(q, 2 * n, True) for q in Q60), True, "radix2", None, None, False, True
        )

    gpu = types.SimpleNamespace(name="gpu")
    args = check_transform_args((n,), np.uint64, Q60[0], negacyclic=True, algorithm="radix2")
    clear_plans()
    assert plan_for(args, gpu, 1).post_one_table and plan_for(args, gpu, 64).post_one_table
    cyclic = check_transform_args((n,), np.uint64, Q60[0], negacyclic=False, algorithm="radix2")
    assert not plan_for(cyclic, gpu, 64).post_one_table  # n^-1 alone: one entry


def test_few_blocks_take_fewer_columns():
    """Merges whose passes run at most FEW_BLOCKS_MAX blocks take FEW_BLOCKS_LANES_LOG columns per block (exact
    through the kernel model, forward and inverse); plan_for chooses that by row count."""
    import types

    from hebatch.ntt.validate import check_transform_args
    from hebatch.ntt.word import plan_for

    n = 1 << 20
    q = hb.ntt_primes(60, 2 * n, 1)[0]
    gpu = types.SimpleNamespace(name="gpu")
    args = check_transform_args((n,), np.uint64, q, negacyclic=True)
    clear_plans()
    few = plan_for(args, gpu, 1)
    assert few.lanes_log == recipes.FEW_BLOCKS_LANES_LOG
    assert {p.log_lanes for p in few.gpu_passes(8)} == {recipes.FEW_BLOCKS_LANES_LOG}
    rows_at_limit = recipes.FEW_BLOCKS_MAX >> (20 - 10 - recipes.MULTI_PASS_LANES_LOG)
    assert plan_for(args, gpu, rows_at_limit).lanes_log == recipes.FEW_BLOCKS_LANES_LOG
    assert plan_for(args, gpu, rows_at_limit + 1).lanes_log is None
    gold = check_transform_args((n,), np.uint64, hb.GOLDILOCKS, negacyclic=True)
    assert plan_for(gold, gpu, 1).lanes_log == recipes.FEW_BLOCKS_LANES_LOG  # Goldilocks alike
    with pytest.raises(ValueError, match="lanes_log"):
        make_plan(n, (q,), (default_root(q, n, True),), True, "radix2", None, None, False, False, 5)
    rng = np.random.default_rng()
    for log_n in (9, 12):
        m = 1 << log_n
        x3 = np.stack([random_residues(rng, p, (2, m), np.uint64) for p in Q60], axis=1)
        roots = tuple(default_root(p, m, True) for p in Q60)
        for inverse in (False, True):
            plan = make_plan(
                m, tuple(Q60), roots, True, "radix2", (1 << (log_n // 2), m >> (log_n // 2)), None, False, False, 1
            )
            got, launches = emulate_transform(plan, x3, inverse)
            assert len(launches) == 2 and all(ln.template[2] == 1 for ln in launches)
            assert (got.astype(np.uint64) == cpu_reference(x3, Q60, m, True, inverse)).all()


@pytest.mark.parametrize("inverse", [False, True])
def test_many_rows_of_one_row_blocks_take_the_dense_mode(monkeypatch, inverse):
    """One-pass transforms of one row per block take LANES_ALONG_ROW_DENSE (compiled for more blocks per SM) from
    DENSE_ROWS_MIN rows on (exact through the kernel model); fewer rows, blocks of several rows and 1024-thread
    blocks keep LANES_ALONG_ROW."""
    from hebatch.ntt.launch import transform_launches

    monkeypatch.setattr(recipes, "DENSE_ROWS_MIN", 3)  # the model runs few rows
    for moduli, dtype in ((Q60, np.uint64), ([hb.BABYBEAR, Q30], np.uint32)):
        modes = {batch: run_case(moduli, 12, batch, "radix2", True, inverse, dtype)[0].template[4] for batch in (1, 2)}
        # rows = batch x limbs: 2 rows plain, 4 dense
        assert modes == {1: LANE_MODES["row"], 2: LANE_MODES["row_dense"]}, modes
    for log_n, word_bytes, dense in ((11, 8, False), (12, 8, True), (13, 8, True), (13, 4, True), (14, 8, False)):
        n = 1 << log_n
        q = hb.BABYBEAR if word_bytes == 4 else hb.ntt_primes(60, 2 * n, 1)[0]
        plan = make_plan(n, (q,), (default_root(q, n, True),), True, "radix2")
        arith = "Mod32" if word_bytes == 4 else "Mod60"
        (launch,) = transform_launches(plan, [dict(tw_mode=0, post_mode=0)], 4096, 8 * word_bytes, arith)
        assert (launch.template[4] == LANE_MODES["row_dense"]) == dense, (log_n, word_bytes)


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("log_n", sorted(recipes.SMALL_BATCH_SPLIT[8]))
def test_few_rows_take_two_merge_passes(log_n, inverse):
    import types

    from hebatch.ntt.validate import check_transform_args
    from hebatch.ntt.word import plan_for

    moduli = hb.ntt_primes(60, 2 << log_n, 2)
    args = check_transform_args((7, 1 << log_n), np.uint64, moduli[0], negacyclic=True)
    gpu, cpu = types.SimpleNamespace(name="gpu"), types.SimpleNamespace(name="cpu")
    few, most = plan_for(args, gpu, 7), plan_for(args, gpu, 4096)
    assert few.algorithm == "radix2" and few.split == recipes.small_batch_split(log_n, 7, 8)
    split_rows = recipes.SMALL_BATCH_SPLIT[8][log_n][1]  # None: every batch takes the split
    assert len(few.gpu_passes(8)) == 2 and len(most.gpu_passes(8)) == (2 if split_rows is None else 1)
    assert plan_for(args, cpu, 7).split is None and plan_for(args, gpu, 7, np.uint32).split is None
    launches = run_case(moduli, log_n, 3, "radix2", True, inverse, split=few.split)
    assert len(launches) == 2


@pytest.mark.parametrize("log_n", sorted(recipes.SMALL_BATCH_SPLIT[8]))
def test_few_elements_take_eight_per_thread(log_n):
    import types

    from hebatch.ntt.validate import check_transform_args
    from hebatch.ntt.word import plan_for

    gpu = types.SimpleNamespace(name="gpu")
    args = check_transform_args((1, 1 << log_n), np.uint64, hb.ntt_primes(60, 2 << log_n, 1)[0], negacyclic=True)
    most_rows = (1 << recipes.SMALL_SPLIT_RADIX_MAX_LOG[8]) >> log_n  # rows x n at the limit
    for rows, radix in ((1, 3), (most_rows, 3), (most_rows + 1, None), (4096, None)):
        plan = plan_for(args, gpu, rows)
        assert plan.radix_log == radix, rows
        passes = plan.gpu_passes(8)
        assert all(p.log_r == (radix or recipes.RADIX_LOG) for p in passes), rows
    assert plan_for(args, gpu, 1, np.uint32).radix_log is None  # 32-bit words: no split, no change
    with pytest.raises(ValueError, match="radix_log"):
        make_plan(1 << log_n, args.moduli, args.roots, True, "radix2", None, 5)


def test_recipe_shapes():
    for log_n in range(1, 29):
        for word in (8, 4):
            passes = recipes.gpu_passes("4step", log_n, word)
            assert sum(p.log_np for p in passes) == log_n
            assert all(p.threads <= 1024 and p.smem_bytes(word) <= 227 * 1024 for p in passes)
            assert len(passes) <= 3


def test_pass_modes_match_tables():
    for log_n, nega, algorithm in [
        (5, True, "4step"),
        (12, False, "radix2"),
        (16, True, "4step"),
        (17, True, "radix2"),
        (20, True, "4step"),
        (22, False, "4step"),
    ]:
        n = 1 << log_n
        q = hb.ntt_primes(60, n, 1)[0]
        plan = make_plan(n, (q,), (default_root(q, n, nega),), nega, algorithm)
        for inverse in (False, True):
            tables = plan.gpu_pass_tables((0,), inverse, 64)
            assert plan.gpu_pass_modes(inverse, 64) == [
                (t["tw_mode"], t["post_mode"] if i == len(tables) - 1 else 0) for i, t in enumerate(tables)
            ]


def test_butterfly_kind_by_modulus_size():
    """Moduli below 2^60 (every limb of a group) take Mod60's butterflies; up to 2^62, Mod64's."""
    from hebatch.backend import arith_name

    q61 = hb.ntt_primes(61, 2, 1)[0]
    assert Q60[0] < 2**60 <= q61 < 2**61 <= Q62[0]
    assert arith_name(Q60, 64) == "Mod60"
    assert arith_name([q61], 64) == arith_name(Q62, 64) == arith_name([Q60[0], Q62[0]], 64) == "Mod64"
    assert arith_name([hb.GOLDILOCKS], 64) == "Goldilocks" and arith_name([hb.BABYBEAR], 32) == "Mod32"


def test_launch_limits_are_refused():
    """ntt_pass divides its tiles and rows in 32 bits: a launch beyond them is refused with the sizes named."""
    from hebatch.ntt.launch import transform_launches

    n = 1 << 12
    plan = make_plan(n, (Q60[0],), (default_root(Q60[0], n, True),), True, "radix2")
    modes = [dict(tw_mode=t, post_mode=p) for t, p in plan.gpu_pass_modes(False, 64)]
    assert len(transform_launches(plan, modes, 2**31 - 1, 64, "Mod60")) == 1
    with pytest.raises(ValueError, match=r"2147483648 rows of 4096 elements .* in parts"):
        transform_launches(plan, modes, 2**31, 64, "Mod60")


def test_symbol_names_round_trip():
    from hebatch.ntt.prebuild import name_of_symbol

    symbol = (
        "_Z8ntt_passI5Mod64Li12ELi0ELi4ELi2ELb1ELi0ELi1ELb0EEvPKNT_1TES4_PS2_xxixxxxiPK8ModConstPKNS1_2TwEx"
        "iiSB_SB_xxixxiiiiSB_SB_xxixii"
    )
    assert name_of_symbol(symbol) == "ntt_pass<Mod64,12,0,4,2,true,0,1,false>"
    assert (
        name_of_symbol("_Z13pointwise_mulI10GoldilocksEvPKNT_1TES4_PS2_xxixxPK8ModConst") == "pointwise_mul<Goldilocks>"
    )
    assert name_of_symbol("_Z3fooi") is None


def test_estimated_shoup_product_bound():
    """Mod64's twiddle product estimates Shoup's quotient; the result must be x w mod q plus at most 3q."""
    from .gpu_emulator import Arith

    rng = np.random.default_rng()
    for q in hb.ntt_primes(62, 2, 2) + hb.ntt_primes(61, 2, 1) + hb.ntt_primes(40, 2, 1) + [97]:
        x = np.concatenate(
            [
                np.array([0, 1, 2**64 - 1, 2**63, 4 * q - 1], dtype=np.uint64),
                rng.integers(0, 2**63, size=5000, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
            ]
        )
        w = np.concatenate([np.array([q - 1, 1, q - 1, q // 2, q - 2], dtype=np.uint64), random_residues(rng, q, 5000)])
        wq = np.array([(int(v) << 64) // q for v in w], dtype=np.uint64)
        arith = Arith("Mod64", np.uint64(q), np.uint64(0), np.uint64(0))
        r = arith.mul_tw(x, w, wq)  # asserts r < 4q
        assert [int(v) % q for v in r] == [int(a) * int(b) % q for a, b in zip(x, w)]
