"""The 256-bit launch plan of the transforms layer (hebatch.ntt.launch.field_plan): a pure function of the
size, the batch and the device's properties, handed finished to the GPU field engine."""

import sys

import numpy as np
import pytest

from hebatch.backend.gpu import ntt256 as gpu_zk
from hebatch.backend.kernels import NTT256_LOG_BLOCK
from hebatch.field import BN254_FR
from hebatch.ntt.launch import FIELD_WORD_BYTES, field_log_block, field_passes, field_plan

from .fake_cupy import FakeArray, fake_cupy

H100 = {"sm_count": 132, "threads_per_sm": 2048, "shared_per_block": 232448, "memory_bytes": 80 << 30}


def test_plan_holds_both_directions_with_and_without_the_scale():
    plan = field_plan(1 << 20, 3, H100)
    assert (plan.log_n, plan.batch, plan.log_block) == (20, 3, NTT256_LOG_BLOCK)
    for dit in (False, True):
        for scale in (False, True):
            assert list(plan.passes(dit, scale)) == field_passes(20, 3, dit, scale)
    assert field_plan(1 << 20, 3, H100) is plan  # cached: one object per (size, batch, device limits)


def test_block_size_follows_the_device_shared_memory():
    assert field_log_block(None) == field_log_block(H100) == NTT256_LOG_BLOCK
    small = dict(H100, shared_per_block=48 * 1024)  # 1536 elements fit: blocks of 2^10
    assert field_log_block(small) == 10
    plan = field_plan(1 << 16, 1, small)
    for dit in (False, True):
        assert all(p.smem <= 48 * 1024 and p.log_k + p.log_c <= 10 for p in plan.passes(dit, True))
        assert sum(p.log_k for p in plan.passes(dit, True)) == 16
    with pytest.raises(ValueError, match="shared memory"):
        field_log_block(dict(H100, shared_per_block=FIELD_WORD_BYTES))


@pytest.mark.parametrize(
    "args,error,match",
    [
        ((3, 1), ValueError, "n must be a power of two"),
        ((0, 1), ValueError, "n must be a power of two"),
        ((8, -1), ValueError, "batch must be >= 0"),
        ((8.0, 1), TypeError, "n must be an int"),
        ((8, True), TypeError, "batch must be an int"),
    ],
)
def test_bad_plan_arguments(args, error, match):
    with pytest.raises(error, match=match):
        field_plan(*args)
    with pytest.raises(ValueError, match="direct_max_log"):
        field_plan(8, 1, direct_max_log=29)


def test_the_gpu_engine_takes_only_the_plan_of_its_input(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy())
    engine = gpu_zk.CupyFieldNTT()
    field = BN254_FR
    x = np.zeros((2, 16, 4), dtype=np.uint64).view(FakeArray)
    w = field.root_of_unity(16)
    with pytest.raises(TypeError, match="plan must be the launch plan"):
        engine.forward(x, field, w)
    with pytest.raises(ValueError, match="plan is for 1 x 2\\^4 elements, x has 2 x 16"):
        engine.forward(x, field, w, plan=field_plan(16, 1))
    with pytest.raises(ValueError, match="plan is for 2 x 2\\^5"):
        engine.inverse(x, field, w, plan=field_plan(32, 2))
