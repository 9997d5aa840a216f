"""zk-ntt shows its stages (input, copies, warm-up, each timed run, the cluster) as it goes."""

from contextlib import contextmanager

import pytest

from hebatch.jobs import zk


@pytest.fixture
def stages(monkeypatch):
    seen: list[tuple[int, str]] = []

    @contextmanager
    def recording(total):
        yield lambda description: seen.append((total, description))

    monkeypatch.setattr(zk, "stepper", recording)
    return seen


def test_single_device_stages(stages):
    summary = zk.zk_ntt("babybear", 10, device="cpu", repeats=2, verify_points=2)
    assert summary["points_wrong"] == 0 and summary["round_trip_exact"]
    descriptions = [d for _, d in stages]
    assert descriptions == ["random input: 2^10 elements", "warm-up transform (tables, kernels)"] + [
        f"transform {i}/2" for i in (1, 2)
    ]
    assert {total for total, _ in stages} == {len(stages)}  # the bar's total is the number of stages


def test_spread_stages(stages):
    summary = zk.zk_ntt("goldilocks", 8, device="cpu", workers=1, repeats=1)
    assert summary["workers"] == 1
    descriptions = [d for _, d in stages]
    assert descriptions[:2] == ["random input: 2^8 elements", "start a local cluster"]
    assert descriptions[2].startswith("send ") and descriptions[3] == "transform 1/1 over 1 worker"
    assert {total for total, _ in stages} == {len(stages)}


def test_stepper_counts_to_the_total():
    with zk.stepper(2) as step:
        step("one")
        step("two")
