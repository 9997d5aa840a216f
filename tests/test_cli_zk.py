"""`hebatch zk-ntt`: one transform on this machine's CPU or over CPU workers, verified exactly; bad input."""

import numpy as np
import pytest

import hebatch as hb
from hebatch.jobs.zk import argument, check_points, horner, random_elements, resolve_field

from .cli_support import assert_clean_failure, invoke, last_json


@pytest.mark.parametrize("field", ["goldilocks", "babybear", str(hb.ntt_primes(50, 2**12, 1)[0])])
@pytest.mark.parametrize("inverse", [False, True])
def test_single_device_verified(field, inverse):
    args = ["zk-ntt", "--log-n", 10, "--field", field, "--verify", "--device", "cpu", "--json"]
    summary = last_json(invoke(*args, *(["--inverse"] if inverse else [])))
    assert summary["n"] == 1024 and summary["points_wrong"] == 0 and summary["round_trip_exact"] is True
    assert summary["seconds"] > 0


@pytest.mark.parametrize("field", ["bn254", "bls12-381", "bls12-377"])
def test_wide_fields_verified(field):
    summary = last_json(invoke("zk-ntt", "--log-n", 8, "--field", field, "--verify", "--device", "cpu", "--json"))
    assert summary["points_wrong"] == 0 and summary["round_trip_exact"] is True


def test_wide_random_elements_are_reduced_and_spread():
    field = resolve_field("bls12-381")
    x = random_elements(field, 4096, np.random.default_rng())
    values = [int(v) for v in field.from_limbs(x)]
    assert x.shape == (4096, 4) and max(values) < field.p
    assert max(values).bit_length() == field.p.bit_length()  # the top limb is used in full
    assert len(set(values)) == 4096


@pytest.mark.parametrize("field", ["goldilocks", "babybear", "bn254"])
@pytest.mark.parametrize("inverse", [False, True])
def test_coset_verified(field, inverse):
    args = ["zk-ntt", "--log-n", 9, "--field", field, "--coset", "--verify", "--device", "cpu", "--json"]
    summary = last_json(invoke(*args, *(["--inverse"] if inverse else [])))
    assert summary["coset"] is True and summary["points_wrong"] == 0 and summary["round_trip_exact"] is True


def test_coset_output_is_not_the_plain_transform():
    field = resolve_field("goldilocks")
    rng = np.random.default_rng()
    x = random_elements(field, 64, rng)
    y = hb.coset_ntt(x, argument(field))
    assert check_points(x, y, field, inverse=False, points=4, rng=rng, coset=True) == []
    assert len(check_points(x, y, field, inverse=False, points=4, rng=rng)) > 0


def test_spread_over_workers_verified():
    summary = last_json(invoke("zk-ntt", "--log-n", 12, "--workers", 2, "--verify", "--device", "cpu", "--json"))
    assert summary["workers"] == 2 and summary["points_wrong"] == 0 and summary["round_trip_exact"]


def test_check_points_catches_a_wrong_value():
    q = hb.GOLDILOCKS
    field = resolve_field(str(q))
    rng = np.random.default_rng()
    x = rng.integers(0, q, 64, dtype=np.uint64)
    y = hb.ntt(x, q)
    assert check_points(x, y, field, inverse=False, points=4, rng=rng) == []
    y[0] ^= np.uint64(1)  # point 0 is always among those checked
    assert check_points(x, y, field, inverse=False, points=4, rng=rng) == [0]


def test_horner_matches_naive_sum():
    q, coefficients, z = 97, [5, 0, 96, 13], 7
    assert horner(coefficients, z, q) == sum(c * z**j for j, c in enumerate(coefficients)) % q


@pytest.mark.parametrize(
    "args, words",
    [
        (("--field", "fooField"), ["--field"]),
        (("--field", "91"), ["prime"]),
        (("--field", "97", "--log-n", "10"), ["root of unity"]),
        (("--field", "babybear", "--log-n", "28", "--workers", "1", "--scheduler", "tcp://127.0.0.1:1"), []),
        (("--log-n", "10", "--coset", "--workers", "2"), ["--coset"]),
    ],
)
def test_bad_input(args, words):
    assert_clean_failure(invoke("zk-ntt", *args), *words)


def test_out_of_range_log_n_is_a_usage_error():
    result = invoke("zk-ntt", "--log-n", 29)
    assert result.exit_code == 2 and "--log-n" in result.output


def test_wide_fields_resolve():
    assert resolve_field("bn254").limbs == 4 and resolve_field("BLS12_381") is hb.BLS12_381_FR


def test_prime_fields_are_library_fields():
    """A prime given by number becomes a one-word hb.PrimeField; a named field's prime keeps its name."""
    q = hb.ntt_primes(40, 2**10, 1)[0]
    field = resolve_field(str(q))
    assert isinstance(field, hb.PrimeField) and field.p == q and field.limbs == 1
    assert pow(field.root_of_unity(1 << 10), 1 << 9, q) == q - 1  # a primitive root of order 2^10
    assert resolve_field(str(hb.GOLDILOCKS)).name == "goldilocks"


@pytest.mark.parametrize("field", ["goldilocks", "babybear", "bn254", "bls12-381"])
@pytest.mark.parametrize("block", [64, 1 << 24])
def test_evaluate_matches_horner(field, block, monkeypatch):
    from hebatch.jobs import zk
    from hebatch.jobs.zk import as_ints, evaluate

    monkeypatch.setattr(zk, "EVALUATE_BLOCK", block)  # 64: several blocks, each with its power offset

    f = resolve_field(field)
    rng = np.random.default_rng()
    x = random_elements(f, 256, rng)
    z = int(rng.integers(1, 2**62)) % f.p or 1
    assert evaluate(x, f, z) == horner(as_ints(x, f), z, f.p)


@pytest.mark.parametrize("field", ["goldilocks", "babybear", "bn254"])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("coset", [False, True])
def test_verify_catches_one_wrong_element_anywhere(field, inverse, coset):
    """One wrong output element at a random index (rarely among the points checked) fails verification."""
    from hebatch.jobs.zk import run_transform, verify

    f = resolve_field(field)
    rng = np.random.default_rng()
    x = random_elements(f, 1024, rng)
    y = np.array(run_transform(x, f, inverse, coset))
    assert verify(x, y, f, inverse=inverse, points=3, rng=rng, coset=coset)["round_trip_exact"]
    k = int(rng.integers(1, 1024))
    y[k] = (y[k] + 1) % f.p if f.limbs == 1 else f.to_limbs([(f.from_limbs(y[k]) + 1) % f.p])[0]
    checks = verify(x, y, f, inverse=inverse, points=3, rng=rng, coset=coset)
    assert checks["round_trip_exact"] is False


@pytest.mark.gpu
@pytest.mark.parametrize("field", ["goldilocks", "babybear", "bn254", "bls12-381"])
def test_verify_on_the_gpu_catches_one_wrong_element(field):
    """The device check: exact at 2^20, and one wrong element of the device output is caught there."""
    import cupy

    from hebatch.jobs.zk import as_ints, evaluate, run_transform, verify

    f = resolve_field(field)
    rng = np.random.default_rng()
    x = random_elements(f, 1 << 20, rng)
    z = int(rng.integers(1, 2**62)) % f.p or 1
    small = x[:4096]
    assert evaluate(cupy.asarray(small), f, z) == horner(as_ints(small, f), z, f.p)
    y = run_transform(cupy.asarray(x), f, False)
    assert verify(x, y, f, inverse=False, points=3, rng=rng)["round_trip_exact"]
    k = int(rng.integers(1, 1 << 20))
    if f.limbs == 1:
        y[k] = (int(y[k]) + 1) % f.p
    else:
        y[k] = cupy.asarray(f.to_limbs([(f.from_limbs(cupy.asnumpy(y[k])) + 1) % f.p])[0])
    assert verify(x, y, f, inverse=False, points=3, rng=rng)["round_trip_exact"] is False
