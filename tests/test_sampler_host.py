"""The GPU samplers of kernels/rns.cu (ChaCha20 keystream -> uniform, ternary, Gaussian) built for the CPU
and driven by CupyRnsOps's launch code: RFC 8439's vectors through the test hook, every sample equal to the
Python model (tests/sampler_model.py) for the engine's key and call numbers, a fresh nonce per call and per
replay of recorded launches, the per-call size limit, and the distributions' statistics."""

import numpy as np
import pytest

from . import host_kernels, sampler_model, sampler_stats

pytestmark = pytest.mark.skipif(host_kernels.compiler() is None, reason="needs a C++ compiler (g++ or clang++)")

# small moduli (every residue its own bucket), 16 and 30 bits, and near 2^62 (the largest the kernels take)
MODULI = (3, 5, 17, 257, 65537, 1073692673, 2**61 - 1, 4611686018425815041, 2**62 - 57)


class Recorder:
    """A loader whose kernels run at once, or, while `recording`, are kept and run by replay(): what a
    CUDA graph does with its launches (same arguments, same buffers)."""

    def __init__(self, module):
        self.module, self.recording, self.launches = module, False, []

    def get_function(self, name):
        fn = self.module.get_function(name)

        def launch(grid, block, args, **kw):
            if self.recording:
                self.launches.append((fn, grid, block, args))
            else:
                fn(grid, block, args)

        return launch

    def replay(self):
        for fn, grid, block, args in self.launches:
            fn(grid, block, args)


class CutModule(host_kernels.HostModule):
    """rns.cu built with the Gaussian's cut at `cut` sigma (so that redraws and clamps happen)."""

    def __init__(self, cut):
        source = (host_kernels.kernel_dir() / "rns.cu").read_text()
        self.lib = host_kernels.host_library(
            source, headers=("modarith.cuh", "chacha20.cuh"), defines=(f"SAMPLER_GAUSS_CUT={cut}",)
        )
        self.emulated_grid = (2, 3, 4)


@pytest.fixture(scope="module")
def module():
    return host_kernels.HostModule()


def fresh_ops(module):
    """A new engine (new key, calls numbered from 0) on the host build."""
    from hebatch.backend.gpu.rns import CupyRnsOps

    return CupyRnsOps(xp=np, loader=lambda: module)


def engine_key(ops) -> bytes:
    (key, _counter) = ops._samplers[0]
    return sampler_model.key_bytes(key)


def next_call(ops) -> int:
    return int(ops._samplers[0][1][0])


@pytest.mark.parametrize("case", range(len(sampler_model.RFC8439_BLOCKS)))
def test_rfc8439_vectors_through_the_hook(module, case):
    key, nonce, counter, want = sampler_model.RFC8439_BLOCKS[case]
    out = np.zeros(16, dtype=np.uint32)
    module.get_function("rns_chacha20_blocks")((1,), (32,), (out, *sampler_model.hook_args(key, nonce, counter, 1)))
    assert out.astype("<u4").tobytes().hex() == want
    assert sampler_model.chacha20_blocks(key, nonce, counter, 1).astype("<u4").tobytes().hex() == want


def test_hook_blocks_match_the_model(module):
    rng = np.random.default_rng()
    key, nonce = rng.bytes(32), rng.bytes(12)
    counter, blocks = int(rng.integers(0, 2**32 - 64)), 37
    out = np.zeros(16 * blocks, dtype=np.uint32)
    module.get_function("rns_chacha20_blocks")((2,), (8,), (out, *sampler_model.hook_args(key, nonce, counter, blocks)))
    np.testing.assert_array_equal(out.reshape(blocks, 16), sampler_model.chacha20_blocks(key, nonce, counter, blocks))


def test_samples_equal_the_model_call_after_call(module):
    ops = fresh_ops(module)
    u = ops.random_uniform((2, len(MODULI), 7), MODULI)  # 126 draws: the last block half used
    key = engine_key(ops)
    assert len(set(key)) > 1, "the key is not random bytes"
    np.testing.assert_array_equal(u, sampler_model.uniform(key, 0, u.shape, MODULI))
    t = ops.random_ternary((3, 5, 11))
    np.testing.assert_array_equal(t, sampler_model.ternary(key, 1, t.shape))
    e = ops.random_gaussian((5, 301), 3.2)
    want, _, _ = sampler_model.gaussian(key, 2, e.shape, 3.2)
    np.testing.assert_array_equal(e, want)
    u2 = ops.random_uniform((1, 2, 1000), MODULI[-2:])
    np.testing.assert_array_equal(u2, sampler_model.uniform(key, 3, u2.shape, MODULI[-2:]))
    assert next_call(ops) == 4
    other = fresh_ops(module)
    other.random_ternary((4,))
    assert engine_key(other) != key, "two engines share a key"


@pytest.mark.parametrize("cut", [0.25, 1.5])
def test_gaussian_redraws_and_clamps_match_the_model(cut):
    # a small cut rejects most draws: the redraws (streams 1, 2, ...) and, at 0.25 sigma, the clamp after
    # 16 rejections (probability 0.80^16 = 0.03 per value: about 120 of 4012) are exercised
    ops = fresh_ops(CutModule(cut))
    sigma, shape = 7.3, (4, 1003)
    e = ops.random_gaussian(shape, sigma)
    want, _, clamped = sampler_model.gaussian(engine_key(ops), 0, shape, sigma, cut=cut)
    np.testing.assert_array_equal(e, want)
    assert np.abs(e).max() <= round(cut * sigma)
    assert clamped.any() == (cut < 1)


def test_replayed_launches_draw_under_a_fresh_nonce(module):
    recorder = Recorder(module)
    from hebatch.backend.gpu.rns import CupyRnsOps

    ops = CupyRnsOps(xp=np, loader=lambda: recorder)
    ops.random_ternary((8,))  # the engine's key and counter exist before recording
    key, start = engine_key(ops), next_call(ops)
    shape, moduli = (2, 3, 64), MODULI[-3:]
    recorder.recording = True
    out = ops.random_uniform(shape, moduli)
    recorder.recording = False
    assert next_call(ops) == start, "recording ran a launch"
    results = []
    for replay in range(3):
        recorder.replay()
        results.append(out.copy())
        np.testing.assert_array_equal(out, sampler_model.uniform(key, start + replay, shape, moduli))
    assert not (results[0] == results[1]).all() and not (results[1] == results[2]).all()
    # a direct call after the replays takes the next number
    t = ops.random_ternary((10,))
    np.testing.assert_array_equal(t, sampler_model.ternary(key, start + 3, (10,)))


def test_one_call_is_limited_to_2_32_blocks_per_nonce(module):
    from hebatch.backend.gpu.rns import SAMPLER_MAX_BLOCKS

    ops = fresh_ops(module)
    limit = SAMPLER_MAX_BLOCKS * 4
    with pytest.raises(ValueError, match="at most"):
        ops.random_ternary((limit + 1,))  # refused before anything is allocated or claimed
    with pytest.raises(ValueError, match="at most"):
        ops.random_gaussian((2, limit // 2 + 2), 3.2)
    with pytest.raises(ValueError, match="at most"):
        ops.random_uniform((2**16, 1, 2**18 + 1), MODULI[:1])
    assert ops._samplers == {}


def test_a_forked_process_gets_its_own_key(module, monkeypatch):
    from hebatch.backend.gpu import rns

    ops = fresh_ops(module)
    ops.random_ternary((4,))
    key = engine_key(ops)
    monkeypatch.setattr(rns.os, "getpid", lambda: -1)
    ops.random_ternary((4,))
    assert engine_key(ops) != key and next_call(ops) == 1


def test_sampler_arguments_are_checked(module):
    ops = fresh_ops(module)
    with pytest.raises(ValueError, match="sigma"):
        ops.random_gaussian((4,), 0.0)
    with pytest.raises(ValueError, match="shape"):
        ops.random_uniform((4, 8), MODULI[:3])
    with pytest.raises(ValueError, match="non-negative"):
        ops.random_ternary((-1, 4))
    assert ops.random_ternary((0, 4)).shape == (0, 4)


def test_uniform_statistics(module):
    ops = fresh_ops(module)
    u = ops.random_uniform((32, len(MODULI), 4096), MODULI)  # 2^17 draws per modulus
    for i, q in enumerate(MODULI):
        sampler_stats.check_uniform(u[:, i, :], q, what=f"host-build uniform limb {i}")


def test_ternary_statistics(module):
    sampler_stats.check_ternary(fresh_ops(module).random_ternary((16, 1 << 16)), what="host-build ternary")


@pytest.mark.parametrize("sigma", [3.2, 19.0])
def test_gaussian_statistics(module, sigma):
    e = fresh_ops(module).random_gaussian((1 << 20,), sigma)
    sampler_stats.check_gaussian(e, sigma, what=f"host-build gaussian sigma {sigma}")
