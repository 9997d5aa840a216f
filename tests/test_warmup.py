"""`hebatch warmup` and what `hebatch info` says about compiled kernels (prebuilt cubins, the cache)."""

import json

import pytest

from hebatch.backend import prebuilt_status, source_digest
from hebatch.device import gpu_available

from .cli_support import invoke, last_json


@pytest.mark.skipif(gpu_available(), reason="checks the CPU-only answer")
def test_warmup_without_gpu_says_there_is_nothing_to_do():
    result = invoke("warmup", "--json")
    assert result.exit_code == 0
    assert last_json(result)["cases"] == 0 and "nothing to warm up" in result.stderr


def _fake_cubin(tmp_path, sources):
    cubin = tmp_path / "sm_90.cubin"
    cubin.write_bytes(b"\0")
    (tmp_path / "sm_90.cubin.json").write_text(
        json.dumps({"arch": "sm_90", "sources": sources, "kernels": {"a<1>": "_Z1a"}})
    )
    return cubin


def test_prebuilt_status_checks_the_sources(tmp_path):
    assert prebuilt_status(_fake_cubin(tmp_path, source_digest()))["matches_sources"] is True
    assert prebuilt_status(_fake_cubin(tmp_path, "0" * 64))["matches_sources"] is False
    assert prebuilt_status(tmp_path / "absent.cubin") == {"path": str(tmp_path / "absent.cubin"), "present": False}


def test_info_names_the_prebuilt_cubin_and_whether_it_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("HEBATCH_KERNEL_CUBIN", str(_fake_cubin(tmp_path, "0" * 64)))
    summary = last_json(invoke("info", "--json"))
    assert summary["prebuilt_cubin"]["matches_sources"] is False and summary["prebuilt_cubin"]["kernels"] == 1
    table = invoke("info").stdout
    assert "not used" in table and "hebatch.ntt.prebuild" in table


@pytest.mark.gpu
def test_warm_kernels_compiles_into_the_cache(tmp_path):
    """A fresh process warms into an empty cache folder: the compiled kernels land there."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CUPY_CACHE_DIR": str(tmp_path), "HEBATCH_KERNEL_CUBIN": ""}
    code = "from hebatch.ntt.warmup import warm_kernels; print(warm_kernels(log_ns=(10,))['cases'])"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 0 and any(p.is_file() for p in tmp_path.rglob("*"))


@pytest.mark.gpu
def test_shipped_cubin_is_used_only_when_it_matches(monkeypatch):
    """The cubin CI ships for this architecture loads when built from these sources; else NVRTC compiles."""
    import cupy

    from hebatch.backend import shipped_cubin
    from hebatch.backend.gpu import loader

    path = shipped_cubin(f"sm_{cupy.cuda.Device().compute_capability}")
    if not path.is_file():
        pytest.skip(f"no cubin shipped at {path} (built by .ci/run or python -m hebatch.ntt.prebuild)")
    monkeypatch.delenv("HEBATCH_KERNEL_CUBIN", raising=False)
    status = prebuilt_status(path)
    assert loader.prebuilt_path() == str(path)
    name = next(iter(json.loads(pathlib_text(path))["kernels"]))
    module = loader.load_module("ntt.cu", name_expressions=[name])
    assert isinstance(module, loader._Prebuilt) == status["matches_sources"]


def pathlib_text(path):
    return open(str(path) + ".json").read()
