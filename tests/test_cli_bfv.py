"""`hebatch bfv`: keys in files, encrypt -> eval -> decrypt on a CPU cluster, checked against plaintexts."""

import json
import os

import numpy as np
import pytest
import zarr

from hebatch.jobs.bfv_pipeline import Pipeline, format_poly, parse_poly, rotation_steps

from .cli_support import FAST_CLUSTER, assert_clean_failure, invoke, last_json

T = 65537


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    directory = tmp_path_factory.mktemp("keys") / "k"
    summary = last_json(
        invoke(
            "bfv", "keygen", "--keys", directory, "--preset", "n4096", "--max-features", 8, "--device", "cpu", "--json"
        )
    )
    assert summary["n"] == 4096 and summary["t"] == T
    return directory


def test_key_files(keys):
    names = set(os.listdir(keys))
    assert names == {"params.json", "secret.key", "public.key", "relin.key", "galois.key"}
    assert os.stat(keys / "secret.key").st_mode & 0o077 == 0
    assert json.loads((keys / "params.json").read_text())["preset"] == "n4096"


def _encrypt(tmp_path, keys, values):
    np.save(tmp_path / "records.npy", values)
    summary = last_json(
        invoke(
            "bfv",
            "encrypt",
            tmp_path / "records.npy",
            tmp_path / "records.ct.zarr",
            "--keys",
            keys,
            "--chunk",
            2,
            "--device",
            "cpu",
            *FAST_CLUSTER,
            "--json",
        )
    )
    assert summary["records"] == len(values) and summary["chunks_written"] == (len(values) + 1) // 2
    return tmp_path / "records.ct.zarr"


def test_encrypt_eval_decrypt_elementwise(tmp_path, keys):
    values = np.random.default_rng().integers(0, T, size=(3, 5))
    cts = _encrypt(tmp_path, keys, values)
    summary = last_json(
        invoke(
            "bfv",
            "eval",
            cts,
            tmp_path / "out.ct.zarr",
            "--keys",
            keys,
            "--poly",
            "2x^2+5",
            "--add-const",
            7,
            "--device",
            "cpu",
            *FAST_CLUSTER,
            "--json",
        )
    )
    assert summary["steps"] == ["poly 2x^2 + 5", "add-const 7"]
    summary = last_json(
        invoke(
            "bfv",
            "decrypt",
            tmp_path / "out.ct.zarr",
            tmp_path / "out.npy",
            "--keys",
            keys,
            "--device",
            "cpu",
            "--json",
        )
    )
    assert summary["min_noise_budget_bits"] > 0
    expected = [[(2 * int(v) ** 2 + 5 + 7) % T for v in row] for row in values]
    assert np.load(tmp_path / "out.npy").tolist() == expected


def test_keys_with_digits_of_two_limbs(tmp_path):
    """keygen --digit-limbs 2: recorded in params.json and read back by every later command (its fingerprint
    checked); a squaring relinearized with the one-digit key decrypts exactly."""
    directory = tmp_path / "k2"
    keygen = ["bfv", "keygen", "--keys", directory, "--preset", "n4096", "--max-features", 2, "--digit-limbs", 2]
    summary = last_json(invoke(*keygen, "--device", "cpu", "--json"))
    assert summary["digit_limbs"] == 2 and json.loads((directory / "params.json").read_text())["digit_limbs"] == 2
    values = np.random.default_rng().integers(0, T, size=(2, 3))
    cts = _encrypt(tmp_path, directory, values)
    squared = tmp_path / "sq.ct.zarr"
    invoke("bfv", "eval", cts, squared, "--keys", directory, "--square", "--device", "cpu", *FAST_CLUSTER)
    invoke("bfv", "decrypt", squared, tmp_path / "sq.npy", "--keys", directory, "--device", "cpu")
    assert np.load(tmp_path / "sq.npy").tolist() == [[int(v) ** 2 % T for v in row] for row in values]


def test_encrypted_dot_products(tmp_path, keys):
    values = np.random.default_rng().integers(0, 100, size=(3, 6))
    weights = np.random.default_rng().integers(0, 100, size=6)
    np.savetxt(tmp_path / "w.txt", weights[None], fmt="%d")
    cts = _encrypt(tmp_path, keys, values)
    assert (
        invoke(
            "bfv",
            "eval",
            cts,
            tmp_path / "dots.ct.zarr",
            "--keys",
            keys,
            "--dot-with",
            tmp_path / "w.txt",
            "--device",
            "cpu",
            *FAST_CLUSTER,
        ).exit_code
        == 0
    )
    assert (
        invoke(
            "bfv", "decrypt", tmp_path / "dots.ct.zarr", tmp_path / "dots.zarr", "--keys", keys, "--device", "cpu"
        ).exit_code
        == 0
    )
    got = zarr.open_group(str(tmp_path / "dots.zarr"), mode="r")["data"][:]
    assert got[:, 0].tolist() == [sum(int(a) * int(b) for a, b in zip(row, weights)) % T for row in values]


def test_eval_resumes(tmp_path, keys):
    values = np.random.default_rng().integers(0, T, size=(4, 2))
    cts = _encrypt(tmp_path, keys, values)
    args = (
        "bfv",
        "eval",
        cts,
        tmp_path / "sq.ct.zarr",
        "--keys",
        keys,
        "--square",
        "--device",
        "cpu",
        *FAST_CLUSTER,
        "--json",
    )
    assert last_json(invoke(*args))["chunks_written"] == 2
    group = zarr.open_group(str(tmp_path / "sq.ct.zarr"), mode="r+")
    group["data_done"][1] = 0
    group["data"][2:4] = 0
    assert last_json(invoke(*args))["chunks_written"] == 1
    invoke("bfv", "decrypt", tmp_path / "sq.ct.zarr", tmp_path / "sq.npy", "--keys", keys, "--device", "cpu")
    assert np.load(tmp_path / "sq.npy").tolist() == [[int(v) ** 2 % T for v in row] for row in values]


def test_demo_json():
    summary = last_json(
        invoke(
            "bfv",
            "demo",
            "--records",
            2,
            "--features",
            3,
            "--chunk",
            1,
            "--square",
            "--device",
            "cpu",
            *FAST_CLUSTER,
            "--json",
        )
    )
    assert summary["records_wrong"] == 0 and summary["chunks_evaluated"] == 2


def test_bad_inputs(tmp_path, keys):
    np.save(tmp_path / "big.npy", np.full((2, 3), T + 1))
    np.save(tmp_path / "float.npy", np.zeros((2, 3)))
    cases = [
        (("encrypt", tmp_path / "big.npy", tmp_path / "c.zarr", "--keys", keys), ["[0, t)"]),
        (("encrypt", tmp_path / "float.npy", tmp_path / "c.zarr", "--keys", keys), ["dtype"]),
        (("encrypt", tmp_path / "missing.npy", tmp_path / "c.zarr", "--keys", keys), ["does not exist"]),
        (("encrypt", tmp_path / "big.npy", tmp_path / "c.zarr", "--keys", tmp_path), ["params.json"]),
        (("eval", tmp_path / "none.zarr", tmp_path / "o.zarr", "--keys", keys, "--square"), ["does not exist"]),
        (("eval", tmp_path / "none.zarr", tmp_path / "o.zarr", "--keys", keys), ["at least one step"]),
        (("eval", tmp_path / "none.zarr", tmp_path / "o.zarr", "--keys", keys, "--poly", "x^"), ["--poly"]),
        (("decrypt", tmp_path / "none.zarr", tmp_path / "o.npy", "--keys", keys), ["does not exist"]),
    ]
    for args, words in cases:
        assert_clean_failure(invoke("bfv", *args, *(FAST_CLUSTER if args[0] != "decrypt" else [])), *words)


def test_keys_of_another_key_pair_are_refused(tmp_path, keys):
    cts = _encrypt(tmp_path, keys, np.ones((2, 2), dtype=np.int64))
    other = tmp_path / "other"
    invoke("bfv", "keygen", "--keys", other, "--preset", "n4096", "--max-features", 2, "--device", "cpu")
    assert_clean_failure(invoke("bfv", "decrypt", cts, tmp_path / "x.npy", "--keys", other), "key")


def test_parse_poly():
    assert parse_poly("3x^2+2x+1") == (1, 2, 3)
    assert parse_poly("x^3 - 4") == (-4, 0, 0, 1)
    assert parse_poly("7") == (7,)
    assert format_poly((1, 2, 3)) == "3x^2 + 2x + 1"
    for bad in ["", "3y", "x^", "2x^40"]:
        with pytest.raises(ValueError):
            parse_poly(bad)


def test_pipeline_plain_reference():
    rng = np.random.default_rng()
    values = rng.integers(0, T, size=(4, 5))
    pipe = Pipeline(features=5, poly=(1, 0, 2), square=True, mul_const=3, add_const=4)
    expected = [[((2 * int(v) ** 2 + 1) ** 2 * 3 + 4) % T for v in row] for row in values]
    assert pipe.plain(values, T).tolist() == expected
    w = tuple(int(x) for x in rng.integers(0, T, 5))
    dot = Pipeline(features=5, dot_with=w)
    assert dot.plain(values, T)[:, 0].tolist() == [sum(int(a) * b for a, b in zip(r, w)) % T for r in values]
    assert rotation_steps(5) == [1, 2, 4] and rotation_steps(1) == []


def test_eval_into_an_output_of_another_pipeline_refused(tmp_path, keys):
    values = np.random.default_rng().integers(0, T, size=(2, 3))
    cts = _encrypt(tmp_path, keys, values)
    out = tmp_path / "out.ct.zarr"
    common = ("--keys", keys, "--device", "cpu", *FAST_CLUSTER)
    np.savetxt(tmp_path / "w1.txt", [[1, 2, 3]], fmt="%d")
    np.savetxt(tmp_path / "w2.txt", [[3, 2, 1]], fmt="%d")
    last_json(invoke("bfv", "eval", cts, out, "--dot-with", tmp_path / "w1.txt", *common, "--json"))
    attrs = dict(zarr.open_group(str(out), mode="r").attrs)
    for other in (["--square"], ["--dot-with", tmp_path / "w2.txt"]):  # the second differs in its weights only
        result = invoke("bfv", "eval", cts, out, *other, *common)
        assert_clean_failure(result, "holds the results of dot-with 3 weights", "--overwrite")
        assert dict(zarr.open_group(str(out), mode="r").attrs) == attrs  # not relabelled
    again = last_json(invoke("bfv", "eval", cts, out, "--dot-with", tmp_path / "w1.txt", *common, "--json"))
    assert again["chunks_written"] == 0  # the same pipeline resumes
    last_json(invoke("bfv", "eval", cts, out, "--square", "--overwrite", *common, "--json"))
    invoke("bfv", "decrypt", out, tmp_path / "sq.npy", "--keys", keys, "--device", "cpu")
    assert np.load(tmp_path / "sq.npy").tolist() == [[int(v) ** 2 % T for v in row] for row in values]
