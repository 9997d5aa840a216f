"""The ChaCha20 samplers of kernels/rns.cu on a GPU: RFC 8439's vectors through the test hook, device
samples equal to the Python model (tests/sampler_model.py) for the engine's key and call numbers, a fresh
nonce at every replay of a recorded CUDA graph, GraphReplayer keeping a sampling graph only with a sampler
of its own (whose replays then draw the model's values under the graph's key), encryption on a context with
graphs, and the distributions' statistics on large device samples. Skipped without a GPU
(tests/test_sampler_host.py runs the same kernels' host build on any machine)."""

import warnings

import numpy as np
import pytest

from . import sampler_model, sampler_stats

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")

MODULI = (3, 5, 17, 257, 65537, 1073692673, 2**61 - 1, 4611686018425815041, 2**62 - 57)


def fresh_ops():
    """A new engine: its own key, calls numbered from 0."""
    from hebatch.backend.gpu.rns import CupyRnsOps

    return CupyRnsOps()


def engine_key(ops) -> bytes:
    return sampler_model.key_bytes(ops._samplers[cp.cuda.Device().id][0])


def next_call(ops) -> int:
    return int(ops._samplers[cp.cuda.Device().id][1].get()[0])


@pytest.mark.parametrize("case", range(len(sampler_model.RFC8439_BLOCKS)))
def test_rfc8439_vectors_on_the_device(case):
    from hebatch.backend.gpu.loader import load_module

    key, nonce, counter, want = sampler_model.RFC8439_BLOCKS[case]
    out = cp.zeros(16, dtype=cp.uint32)
    load_module("rns.cu").get_function("rns_chacha20_blocks")(
        (1,), (32,), (out, *sampler_model.hook_args(key, nonce, counter, 1))
    )
    assert out.get().astype("<u4").tobytes().hex() == want


def test_device_blocks_match_the_model():
    from hebatch.backend.gpu.loader import load_module

    rng = np.random.default_rng()
    key, nonce = rng.bytes(32), rng.bytes(12)
    counter, blocks = int(rng.integers(0, 2**31)), 100_003
    out = cp.zeros(16 * blocks, dtype=cp.uint32)
    load_module("rns.cu").get_function("rns_chacha20_blocks")(
        (64,), (128,), (out, *sampler_model.hook_args(key, nonce, counter, blocks))
    )
    np.testing.assert_array_equal(
        out.get().reshape(blocks, 16), sampler_model.chacha20_blocks(key, nonce, counter, blocks)
    )


def test_device_samples_equal_the_model():
    ops = fresh_ops()
    u = ops.random_uniform((3, len(MODULI), 1001), MODULI)
    key = engine_key(ops)
    np.testing.assert_array_equal(u.get(), sampler_model.uniform(key, 0, u.shape, MODULI))
    t = ops.random_ternary((7, 3001))
    np.testing.assert_array_equal(t.get(), sampler_model.ternary(key, 1, t.shape))
    e = ops.random_gaussian((4, 4099), 3.2)
    want, fragile, _ = sampler_model.gaussian(key, 2, e.shape, 3.2)
    # the device's log and cospi may differ from the host's in the last bit: only values within 1e-9 of a
    # rounding boundary may differ (expected count here: about 1e-4)
    differ = e.get() != want
    assert not (differ & ~fragile).any(), f"{int((differ & ~fragile).sum())} Gaussian samples differ from the model"
    assert next_call(ops) == 3


def test_graph_replays_draw_under_fresh_nonces():
    ops = fresh_ops()
    shape, moduli = (2, 3, 4096), MODULI[-3:]
    ops.random_uniform(shape, moduli)  # key, counter, tables and kernels exist before recording
    key, start = engine_key(ops), next_call(ops)
    pool = cp.cuda.MemoryPool()
    stream = cp.cuda.Stream(non_blocking=True)
    stream.begin_capture()
    try:
        with cp.cuda.using_allocator(pool.malloc), stream:
            out = ops.random_uniform(shape, moduli)
    finally:
        graph = stream.end_capture()
    results = []
    for replay in range(3):
        graph.launch(stream=stream)
        stream.synchronize()
        results.append(out.get())
        np.testing.assert_array_equal(results[-1], sampler_model.uniform(key, start + replay, shape, moduli))
    assert not (results[0] == results[1]).all() and not (results[1] == results[2]).all()
    assert next_call(ops) == start + 3


def test_first_sampling_inside_a_capture_is_refused():
    ops = fresh_ops()
    stream = cp.cuda.Stream(non_blocking=True)
    stream.begin_capture()
    try:
        with stream, pytest.raises(RuntimeError, match="capture"):
            ops.random_ternary((16,))
    finally:
        stream.end_capture()


def test_graph_replayer_never_keeps_a_sampling_graph():
    from hebatch.backend.graphs import GraphReplayer

    ops = fresh_ops()
    replayer = GraphReplayer()

    def sample():
        return ops.random_uniform((1, 2, 1024), MODULI[-2:])

    first = replayer("sample", sample)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        second = replayer("sample", sample)  # recorded, replayed once, compared with a direct run: dropped
    assert any("different result" in str(w.message) for w in caught)
    third = replayer("sample", sample)
    assert replayer.replays == 0
    values = [a.get() for a in (first, second, third)]
    assert not (values[0] == values[1]).all() and not (values[1] == values[2]).all()


def test_a_graph_with_its_own_sampler_is_kept_and_replays_draw_the_models_values():
    from hebatch.backend.graphs import GraphReplayer

    ops = fresh_ops()
    replayer = GraphReplayer()
    shape, moduli = (2, 3, 2048), MODULI[-3:]
    offset = cp.asarray(np.random.default_rng().integers(0, 2**40, shape, dtype=np.uint64))

    def noisy(x):
        return ops.add(x, ops.random_uniform(shape, moduli), moduli)

    def plus(x, u):
        return np.array([[(int(a) + int(b)) % m for a, b in zip(xr, ur)] for xr, ur, m in zip(x, u, moduli)])

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # kept: no "different result" warning
        outs = [replayer("noisy", noisy, (offset,), sampler=ops).get() for _ in range(5)]
    assert replayer.replays == 3
    (recorded,) = [v for v in replayer._entries.values() if not isinstance(v, str)]
    graph_key = sampler_model.key_bytes(recorded.sampling[0])
    assert graph_key != engine_key(ops)
    assert int(recorded.sampling[1].get()[0]) == 4 and next_call(ops) == 1
    x = (offset.get() % np.array(moduli, dtype=np.uint64)[:, None]).astype(object)
    # call 1: the engine's nonce 0; call 2: the checked direct run under the graph's nonce 0; then 1, 2, 3
    for call, (key, nonce) in enumerate([(engine_key(ops), 0), (graph_key, 0), (graph_key, 1), (graph_key, 2)]):
        u = sampler_model.uniform(key, nonce, shape, moduli).astype(object)
        want = np.stack([plus(x[i], u[i]) for i in range(shape[0])])
        np.testing.assert_array_equal(outs[call].astype(object), want)


def test_encryption_on_a_context_with_graphs():
    from hebatch import bfv

    params = bfv.Params.preset("n4096")
    ctx = bfv.Context(params, backend="gpu")
    assert ctx.graphs is not None
    keys = ctx.keygen()
    values = cp.asarray(np.random.default_rng().integers(0, params.t, (2, params.n)))
    pt = ctx.encode(values)
    cts = [ctx.encrypt(keys.public, pt) for _ in range(4)] + [ctx.encrypt_symmetric(keys.secret, pt) for _ in range(4)]
    assert ctx.graphs.replays >= 4  # the third and fourth of each kind replayed a recorded graph
    for i, ct in enumerate(cts):
        np.testing.assert_array_equal(ctx.decode(ctx.decrypt(keys.secret, ct)).get(), values.get())
        for other in cts[:i]:
            assert not bool(cp.array_equal(ct.data, other.data)), "two encryptions drew the same randomness"


def test_uniform_statistics_on_the_device():
    ops = fresh_ops()
    u = ops.random_uniform((256, len(MODULI), 4096), MODULI).get()  # 2^20 per modulus
    for i, q in enumerate(MODULI):
        sampler_stats.check_uniform(u[:, i, :], q, what=f"device uniform limb {i}")


def test_ternary_statistics_on_the_device():
    sampler_stats.check_ternary(fresh_ops().random_ternary((256, 1 << 16)).get(), what="device ternary")


@pytest.mark.parametrize("sigma", [3.2, 19.0])
def test_gaussian_statistics_on_the_device(sigma):
    e = fresh_ops().random_gaussian((1 << 24,), sigma).get()
    sampler_stats.check_gaussian(e, sigma, what=f"device gaussian sigma {sigma}")
