"""GraphReplayer's bookkeeping (record on the second call, verify, replay, fall back, key owners,
eviction) against a stand-in for CuPy whose "graphs" re-run the recorded launches on the recorded
buffers, as CUDA graphs do. The real recording runs in tests/test_gpu_rns.py on a GPU."""

import contextlib
import types
import warnings

import numpy as np
import pytest

from hebatch.backend.graphs import GraphReplayer


class FakeCuda:
    """Launches run at once, or are recorded while a stream captures; a graph replays them."""

    def __init__(self):
        self.capturing = None  # list of recorded launches while capturing
        self.launches = 0
        outer = self

        class Stream:
            def __init__(self, non_blocking=False):
                pass

            def begin_capture(self):
                outer.capturing = []

            def end_capture(self):
                recorded, outer.capturing = outer.capturing, None
                return types.SimpleNamespace(launch=lambda stream=None: [f() for f in recorded])

            def wait_event(self, event):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        self.events = []  # "sync" and "free" as the device is synchronized and a graph's pool freed
        self.cuda = types.SimpleNamespace(
            Event=lambda disable_timing=False: types.SimpleNamespace(record=lambda stream=None: None),
            MemoryPool=lambda: types.SimpleNamespace(malloc=None, free_all_blocks=lambda: self.events.append("free")),
            using_allocator=lambda malloc: contextlib.nullcontext(),
            Stream=Stream,
            get_current_stream=lambda: Stream(),
            Device=lambda: types.SimpleNamespace(id=0, synchronize=lambda: self.events.append("sync")),
        )
        self.ndarray, self.empty, self.array_equal = np.ndarray, np.empty, np.array_equal

    def launch(self, fn):
        """A kernel launch: fn() writes its output buffer."""
        self.launches += 1
        if self.capturing is not None:
            self.capturing.append(fn)
        else:
            fn()


def affine(fake, calls):
    """x * 3 + k, one launch, counting direct runs in calls."""

    def fn(x, k):
        calls.append(1)
        out = np.empty_like(x)
        fake.launch(lambda: np.copyto(out, x * 3 + k))
        return out

    return fn


def test_records_on_second_call_then_replays_fresh_inputs():
    fake, calls = FakeCuda(), []
    rep = GraphReplayer(cupy=fake)
    fn, key = affine(fake, calls), np.arange(4, dtype=np.uint64)
    rng = np.random.default_rng()
    for _ in range(6):
        x = rng.integers(0, 1000, size=4, dtype=np.uint64)
        out = rep("affine", fn, (x,), (key,), (key,))
        assert np.array_equal(out, x * 3 + key)
    # direct runs: call 1 (warm-up), call 2 (inside the recording and the check); replays after
    assert len(calls) == 3 and rep.replays == 4


def test_replay_output_is_not_overwritten_by_the_next_replay():
    fake = FakeCuda()
    rep = GraphReplayer(cupy=fake)
    fn, key = affine(fake, []), np.zeros(3, dtype=np.uint64)
    outs = [rep("affine", fn, (np.full(3, v, dtype=np.uint64),), (key,), (key,)) for v in range(5)]
    assert [int(o[0]) for o in outs] == [0, 3, 6, 9, 12]


def test_new_key_object_moves_its_data_in():
    fake = FakeCuda()
    rep = GraphReplayer(cupy=fake)
    fn = affine(fake, [])
    x = np.arange(4, dtype=np.uint64)
    k1, k2 = np.ones(4, dtype=np.uint64), np.full(4, 7, dtype=np.uint64)
    for _ in range(3):
        assert np.array_equal(rep("affine", fn, (x,), (k1,), (k1,)), x * 3 + 1)
    assert np.array_equal(rep("affine", fn, (x,), (k2,), (k2,)), x * 3 + 7)
    assert np.array_equal(rep("affine", fn, (x,), (k1,), (k1,)), x * 3 + 1)


def test_shapes_and_keys_are_separate_graphs():
    fake = FakeCuda()
    rep = GraphReplayer(cupy=fake)
    fn = affine(fake, [])
    for n in (4, 8, 4, 8, 4, 8):
        x = np.arange(n, dtype=np.uint64)
        k = np.ones(n, dtype=np.uint64)
        assert np.array_equal(rep("affine", fn, (x,), (k,), (k,)), x * 3 + 1)
    assert rep.replays == 2


def test_failed_recording_falls_back_with_a_warning():
    fake = FakeCuda()
    rep = GraphReplayer(cupy=fake)

    def fn(x):
        if fake.capturing is not None:
            raise RuntimeError("cudaErrorStreamCaptureUnsupported: synchronize while capturing")
        return x + 1

    x = np.arange(3)
    assert np.array_equal(rep("f", fn, (x,)), x + 1)
    with pytest.warns(RuntimeWarning, match="not recorded.*synchronize while capturing"):
        assert np.array_equal(rep("f", fn, (x,)), x + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(rep("f", fn, (x,)), x + 1)  # direct from now on, no new warning
    assert rep.replays == 0


def test_a_graph_that_replays_differently_is_dropped():
    fake = FakeCuda()
    rep = GraphReplayer(cupy=fake)
    scale = [3]

    def fn(x):  # bakes a host value into its launch: replays differ once the value changes
        out = np.empty_like(x)
        s = scale[0]
        fake.launch(lambda: np.copyto(out, x * s))
        scale[0] += 1
        return out

    x = np.arange(1, 4)
    rep("f", fn, (x,))
    with pytest.warns(RuntimeWarning, match="different result"):
        rep("f", fn, (x,))
    assert rep.replays == 0


def test_large_inputs_run_directly_and_graphs_are_bounded():
    fake = FakeCuda()
    rep = GraphReplayer(max_input_bytes=64, max_graphs=2, cupy=fake)
    calls = []
    fn = affine(fake, calls)
    big = np.zeros(16, dtype=np.uint64)  # 128 bytes
    for _ in range(3):
        rep("affine", fn, (big,), (big,), (big,))
    assert len(calls) == 3 and rep.replays == 0
    for n in (1, 2, 3):  # three recorded shapes, two kept
        x = np.zeros(n, dtype=np.uint64)
        for _ in range(2):
            rep("affine", fn, (x,), (x,), (x,))
    recorded = [v for v in rep._entries.values() if not isinstance(v, str)]
    assert len(recorded) == 2


def test_large_constants_run_directly_small_inputs_with_a_large_key_replay():
    """The inputs' and the constants' sizes have limits of their own: a small batch with a key above the inputs'
    limit (as n32768's key-switching keys are) is recorded; a key above the constants' limit is not."""
    fake = FakeCuda()
    rep = GraphReplayer(max_input_bytes=64, max_constant_bytes=256, cupy=fake)

    def fn(x, k):  # x * 3 + sum(k), one launch
        out = np.empty_like(x)
        fake.launch(lambda: np.copyto(out, x * 3 + k.sum()))
        return out

    x, key, huge = np.arange(1, 5, dtype=np.uint64), np.arange(16, dtype=np.uint64), np.zeros(40, dtype=np.uint64)
    for _ in range(3):
        rep("affine", fn, (x,), (key,), (key,))
    assert rep.replays == 1
    for _ in range(3):
        rep("affine", fn, (x,), (huge,), (huge,))
    assert rep.replays == 1


def test_graph_memory_is_bounded():
    fake = FakeCuda()
    sizes = iter([300, 300, 300])
    fake.cuda.MemoryPool = lambda: types.SimpleNamespace(
        malloc=None, total_bytes=lambda: next(sizes), free_all_blocks=lambda: fake.events.append("free")
    )
    rep = GraphReplayer(max_graph_bytes=700, cupy=fake)
    fn = affine(fake, [])
    graphs = []
    for n in (1, 2, 3):
        x = np.zeros(n, dtype=np.uint64)
        for _ in range(2):
            rep("affine", fn, (x,), (x,), (x,))
        graphs += [v for v in rep._entries.values() if not isinstance(v, str) and v not in graphs]
    recorded = [v for v in rep._entries.values() if not isinstance(v, str)]
    assert len(recorded) == 2 and sum(v.nbytes for v in recorded) == 600
    # the evicted graph was released then and there: the device synchronized, the graph dropped, its pool freed
    evicted = graphs[0]
    assert evicted not in recorded and evicted.graph is None and evicted.out is None and evicted.inputs == []
    assert fake.events == ["sync", "free"]
    assert all(v.graph is not None for v in recorded)


def test_a_graph_evicted_between_lookup_and_replay_runs_directly():
    fake, calls = FakeCuda(), []
    rep = GraphReplayer(cupy=fake)
    fn, k = affine(fake, calls), np.arange(4, dtype=np.uint64)
    x = np.arange(4, dtype=np.uint64)
    for _ in range(2):
        rep("affine", fn, (x,), (k,), (k,))
    (entry,) = [v for v in rep._entries.values() if not isinstance(v, str)]
    entry.release()  # as another thread's eviction would, after this call found the entry
    before = len(calls)
    assert np.array_equal(rep("affine", fn, (x,), (k,), (k,)), x * 3 + k)
    assert len(calls) == before + 1 and rep.replays == 0


class FakeSampler:
    """The sampler protocol of the GPU engine (private_sampler, sampling_with, rewind_sampler) over the
    stand-in: a draw is a launch that claims its nonce from a counter array when it runs, as on the device."""

    def __init__(self, fake):
        self.fake, self.current = fake, self.private_sampler()  # the engine's shared sampler

    def private_sampler(self):
        return (int.from_bytes(np.random.default_rng().bytes(8), "little"), np.zeros(1, dtype=np.uint64))

    @contextlib.contextmanager
    def sampling_with(self, sampler):
        outer, self.current = self.current, sampler
        try:
            yield
        finally:
            self.current = outer

    def rewind_sampler(self, sampler):
        sampler[1][0] = 0

    @staticmethod
    def expected(sampler_key, nonce, n):
        return np.random.default_rng([sampler_key, nonce]).integers(0, 2**32, n, dtype=np.uint64)

    def noisy(self, x):
        """x + a fresh draw, the draw's nonce claimed from the counter at launch time."""
        out, (key, counter) = np.empty_like(x), self.current

        def run():
            nonce = int(counter[0])
            counter[0] += 1
            np.copyto(out, x + self.expected(key, nonce, x.size))

        self.fake.launch(run)
        return out


def test_a_sampling_graph_is_kept_with_its_own_sampler_and_draws_afresh_at_every_replay():
    fake = FakeCuda()
    sampler = FakeSampler(fake)
    rep = GraphReplayer(cupy=fake)
    rng = np.random.default_rng()
    outs, xs = [], []
    for _ in range(5):
        xs.append(rng.integers(0, 1000, size=6, dtype=np.uint64))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # kept: no "different result" warning
            outs.append(rep("noisy", sampler.noisy, (xs[-1],), sampler=sampler))
    assert rep.replays == 3
    recorded = next(v for v in rep._entries.values() if not isinstance(v, str))
    graph_key, counter = recorded.sampling
    assert graph_key != sampler.current[0]
    # call 1 drew from the shared sampler; call 2 is the checked direct run under the graph's nonce 0
    # (its replay drew the same and was not returned); replays 3, 4, 5 draw nonces 1, 2, 3
    assert np.array_equal(outs[0], xs[0] + sampler.expected(sampler.current[0], 0, 6))
    for call, nonce in ((1, 0), (2, 1), (3, 2), (4, 3)):
        assert np.array_equal(outs[call], xs[call] + sampler.expected(graph_key, nonce, 6))
    assert int(counter[0]) == 4 and int(sampler.current[1][0]) == 1


def test_a_sampling_graph_without_its_sampler_is_dropped():
    fake = FakeCuda()
    sampler = FakeSampler(fake)
    rep = GraphReplayer(cupy=fake)
    x = np.arange(6, dtype=np.uint64)
    rep("noisy", sampler.noisy, (x,))
    with pytest.warns(RuntimeWarning, match="different result"):
        rep("noisy", sampler.noisy, (x,))
    a, b = rep("noisy", sampler.noisy, (x,)), rep("noisy", sampler.noisy, (x,))
    assert rep.replays == 0 and not np.array_equal(a, b)
