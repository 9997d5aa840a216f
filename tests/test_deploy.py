"""The deployment kit (deploy/): what can be checked without a GPU, a scheduler or a network.

Kubernetes manifests parse and carry the fields the Dask operator needs; the SLURM job script renders
completely; every shell script parses; the wheelhouse lists exactly pyproject's runtime + gpu
dependencies; the Dockerfile copies files that exist; the SLURM script works without dask-jobqueue
until a cluster is asked for, and runs a real batch NTT against a local Dask scheduler.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

yaml = pytest.importorskip("yaml")
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
SHELL_SCRIPTS = sorted(DEPLOY.rglob("*.sh"))
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))
DASK_API = "kubernetes.dask.org/v1"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _documents():
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            yield path.name, doc


# --- layout -------------------------------------------------------------------------------------


def test_every_part_has_a_readme_and_the_index_links_them():
    index = (DEPLOY / "README.md").read_text()
    for part in ("docker", "slurm", "kubernetes", "local", "wheelhouse"):
        assert (DEPLOY / part / "README.md").is_file(), part
        assert f"({part}/" in index, f"deploy/README.md does not link {part}/"


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_shell_scripts_parse_and_are_executable(script):
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert os.access(script, os.X_OK), f"{script} is not executable"


def test_there_are_shell_scripts_to_check():
    names = {p.name for p in SHELL_SCRIPTS}
    assert {
        "start-local-gpu-cluster.sh",
        "stop-local-gpu-cluster.sh",
        "build-wheelhouse.sh",
        "install-offline.sh",
    } <= names


# --- Kubernetes -----------------------------------------------------------------------------------


def _check_gpu_worker(spec: dict, where: str):
    assert spec["replicas"] >= 1, where
    containers = spec["spec"]["containers"]
    assert containers, where
    for c in containers:
        assert c["image"], where
        assert c["resources"]["limits"]["nvidia.com/gpu"] == 1, f"{where}: one GPU per worker"
        line = c.get("command", []) + c["args"]
        text = " ".join(line)
        assert "dask cuda worker" in text, f"{where}: workers must run `dask cuda worker`, got {line}"
        assert "$(DASK_SCHEDULER_ADDRESS)" in c["args"], where
        assert c["args"][c["args"].index("--resources") + 1] == "GPU=1", where


def _check_scheduler(spec: dict, cluster_name: str, where: str):
    (container,) = spec["spec"]["containers"]
    assert container["image"], where
    assert "scheduler" in container["args"], where
    assert "nvidia.com/gpu" not in container.get("resources", {}).get("limits", {}), f"{where}: scheduler needs no GPU"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"tcp-comm": 8786, "http-dashboard": 8787}, where
    service = spec["service"]
    assert service["selector"] == {"dask.org/cluster-name": cluster_name, "dask.org/component": "scheduler"}, where
    targets = {p["name"]: (p["port"], p["targetPort"]) for p in service["ports"]}
    assert targets == {"tcp-comm": (8786, "tcp-comm"), "http-dashboard": (8787, "http-dashboard")}, where


def _check_claims(pod_spec: dict, claims: set, where: str):
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    for c in pod_spec["containers"]:
        for mount in c.get("volumeMounts", []):
            assert mount["name"] in volumes, f"{where}: mount {mount['name']} has no volume"
            claim = volumes[mount["name"]].get("persistentVolumeClaim", {}).get("claimName")
            assert claim is None or claim in claims, f"{where}: claim {claim} is not defined in deploy/kubernetes"


def test_manifests_parse_and_define_a_gpu_dask_cluster_and_job():
    docs = list(_documents())
    kinds = [doc["kind"] for _, doc in docs]
    assert "DaskCluster" in kinds and "DaskJob" in kinds
    claims = {doc["metadata"]["name"] for _, doc in docs if doc["kind"] == "PersistentVolumeClaim"}
    for name, doc in docs:
        assert doc["metadata"]["name"], name
        if doc["kind"] == "DaskCluster":
            assert doc["apiVersion"] == DASK_API
            _check_gpu_worker(doc["spec"]["worker"], name)
            _check_scheduler(doc["spec"]["scheduler"], doc["metadata"]["name"], name)
            _check_claims(doc["spec"]["worker"]["spec"], claims, name)
        elif doc["kind"] == "DaskJob":
            assert doc["apiVersion"] == DASK_API
            cluster = doc["spec"]["cluster"]["spec"]
            _check_gpu_worker(cluster["worker"], name)
            # A DaskJob's cluster is named after the job, so its scheduler Service selects that name.
            _check_scheduler(cluster["scheduler"], doc["metadata"]["name"], name)
            job = doc["spec"]["job"]["spec"]
            (runner,) = job["containers"]
            line = runner["command"] + runner["args"]
            assert line[line.index("hebatch") :][:2] == ["hebatch", "ntt"], line
            assert runner["args"][runner["args"].index("--scheduler") + 1] == "$(DASK_SCHEDULER_ADDRESS)"
            int(runner["args"][runner["args"].index("--modulus") + 1])
            _check_claims(job, claims, name)
            _check_claims(cluster["worker"]["spec"], claims, name)
        elif doc["kind"] == "PersistentVolumeClaim":
            assert "ReadWriteMany" in doc["spec"]["accessModes"], "workers on many nodes write the output"
        else:
            pytest.fail(f"{name}: unexpected kind {doc['kind']}")


def test_manifest_images_match_the_package_version():
    version = _pyproject()["version"]
    images = {c["image"] for _, doc in _documents() if doc["kind"].startswith("Dask") for c in _containers(doc)}
    assert images and all(image.endswith(f"/hebatch:{version}") for image in images), images


def _containers(doc):
    spec = doc["spec"]
    cluster = spec["cluster"]["spec"] if doc["kind"] == "DaskJob" else spec
    yield from cluster["worker"]["spec"]["containers"]
    yield from cluster["scheduler"]["spec"]["containers"]
    if doc["kind"] == "DaskJob":
        yield from spec["job"]["spec"]["containers"]


# --- SLURM job script template ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def render():
    return _load("hebatch_deploy_render", DEPLOY / "slurm" / "render.py")


def _random_values(rng):
    q = [
        int(v)
        for v in rng.choice(
            [1152921504606584833, 1152921504598720513, 998244353], size=rng.integers(1, 3), replace=False
        )
    ]
    return dict(
        input=f"/scratch/in {rng.integers(1000)}.zarr",
        output="/scratch/out.zarr",
        modulus=q,
        venv="/shared/venv",
        nodes=int(rng.integers(1, 9)),
        gpus_per_node=int(rng.integers(1, 9)),
        cpus_per_gpu=16,
        threads=int(rng.integers(1, 9)),
        walltime="02:30:00",
        partition="gpu",
        account="proj",
        extra_directives=["--constraint=h100"],
        negacyclic=bool(rng.integers(2)),
    )


def test_sbatch_template_renders_every_placeholder(render):
    rng = np.random.default_rng()
    values = _random_values(rng)
    script = render.render(**values)
    assert not re.search(r"\$\{[a-z_]+\}", script), "an unrendered placeholder is left"
    assert "$$" not in script.replace("$$(", "")  # `$$` of the template became `$`
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash"
    directives = [line for line in lines if line.startswith("#SBATCH ")]
    for expected in (
        f"--nodes={values['nodes']}",
        f"--ntasks-per-node={values['gpus_per_node']}",
        "--gpus-per-task=1",
        "--cpus-per-task=16",
        "--time=02:30:00",
        "--partition=gpu",
        "--account=proj",
        "--constraint=h100",
    ):
        assert f"#SBATCH {expected}" in directives, expected
    # every #SBATCH line comes before the first command, or sbatch ignores it
    first_command = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
    assert all(lines.index(d) < first_command for d in directives)
    assert "dask scheduler --scheduler-file" in script
    srun = next(line for line in lines if line.startswith("srun "))
    assert "--gpus-per-task=1" in srun and f"--ntasks-per-node={values['gpus_per_node']}" in srun
    assert (
        f'dask cuda worker --scheduler-file "$SCHEDULER_FILE" --nthreads {values["threads"]} --resources GPU=1'
        in script
    )
    assert f"WORKERS=$(( SLURM_JOB_NUM_NODES * {values['gpus_per_node']} ))" in script
    (client,) = [line for line in lines if line.startswith("hebatch ntt ")]
    words = shlex.split(client)
    assert words[2:4] == [values["input"], values["output"]]
    (given,) = [words[i + 1] for i, w in enumerate(words) if w == "--modulus"]
    assert [int(q) for q in given.split(",")] == values["modulus"]
    from hebatch.cli import main as hebatch_cli

    hebatch_cli.commands["ntt"].make_context("ntt", words[2:])  # the real command line accepts every option
    assert ("--negacyclic" in words) == values["negacyclic"]
    assert words[-2:] == ["--scheduler", "$ADDRESS"]
    assert lines.index(srun) < lines.index(client)


def test_rendered_sbatch_script_is_valid_bash(render, tmp_path):
    path = tmp_path / "job.sbatch"
    path.write_text(render.render(**_random_values(np.random.default_rng())))
    subprocess.run(["bash", "-n", str(path)], check=True)


def test_render_cli_writes_the_script(render, tmp_path):
    out = tmp_path / "job.sbatch"
    assert (
        render.main(
            [
                "--input",
                "in.zarr",
                "--output",
                "out.zarr",
                "--modulus",
                "998244353,7340033",
                "--venv",
                "/v",
                "--nodes",
                "3",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    text = out.read_text()
    assert "#SBATCH --nodes=3" in text and "--modulus 998244353,7340033" in text


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"nodes": 0}, "nodes must be a positive int"),
        ({"gpus_per_node": 1.5}, "gpus_per_node must be a positive int"),
        ({"walltime": "soon"}, "walltime"),
        ({"modulus": [1]}, "modulus"),
        ({"input": None}, "missing values: input"),
        ({"threads": 32, "cpus_per_gpu": 8}, "threads"),
        ({"extra_directives": ["rm -rf /"]}, "extra_directives"),
        ({"job_name": "a b"}, "job_name"),
        ({"log_dir": "my logs"}, "log_dir"),
        ({"colour": "red"}, "unknown values: colour"),
    ],
)
def test_render_rejects_bad_values_by_name(render, bad, message):
    values = {**_random_values(np.random.default_rng()), **bad}
    with pytest.raises(ValueError, match=message):
        render.render(**values)


def test_template_placeholders_are_exactly_the_rendered_fields(render):
    text = render.TEMPLATE.read_text()
    names = {m.group(1) for m in re.finditer(r"(?<!\$)\$\{([a-z_]+)\}", text)}
    assert names == set(render.template_fields(**_random_values(np.random.default_rng())))


# --- SLURM through dask-jobqueue -------------------------------------------------------------------


@pytest.fixture
def slurm(monkeypatch):
    return _load("hebatch_deploy_slurm", DEPLOY / "slurm" / "hebatch_slurm.py")


def test_slurm_script_imports_without_dask_jobqueue_and_names_it_when_needed(slurm, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)  # import of it raises ImportError
    with pytest.raises(ModuleNotFoundError, match="dask-jobqueue"):
        slurm.start_cluster(1, 1)
    assert slurm.main(["in.zarr", "out.zarr", "--modulus", "17"]) == 2


def test_slurm_cluster_options_are_one_gpu_dask_cuda_workers(slurm):
    options = slurm.cluster_options(
        queue="gpu",
        account="proj",
        cpus_per_gpu=12,
        threads=4,
        interface="ib0",
        job_extra_directives=["--constraint=h100"],
    )
    assert options["job_extra_directives"] == ["--gpus-per-task=1", "--constraint=h100"]
    assert options["worker_command"] == "dask_cuda.cli"
    assert options["worker_extra_args"] == ["--resources", "GPU=1"]
    assert (options["processes"], options["cores"], options["job_cpu"]) == (1, 4, 12)
    assert options["interface"] == "ib0" and options["queue"] == "gpu" and options["account"] == "proj"
    with pytest.raises(ValueError, match="must not request GPUs"):
        slurm.cluster_options(job_extra_directives=["--gres=gpu:4"])
    with pytest.raises(ValueError, match="threads"):
        slurm.cluster_options(cpus_per_gpu=2, threads=4)


def test_slurm_start_cluster_asks_one_job_per_gpu(slurm, monkeypatch):
    made = []

    class FakeSLURMCluster:
        def __init__(self, **kwargs):
            self.kwargs, self.scaled = kwargs, None
            made.append(self)

        def scale(self, jobs):
            self.scaled = jobs

    monkeypatch.setitem(sys.modules, "dask_jobqueue", types.SimpleNamespace(SLURMCluster=FakeSLURMCluster))
    rng = np.random.default_rng()
    nodes, gpus = int(rng.integers(1, 17)), int(rng.integers(1, 9))
    cluster = slurm.start_cluster(nodes, gpus, queue="gpu")
    assert made == [cluster] and cluster.scaled == nodes * gpus
    assert cluster.kwargs == slurm.cluster_options(queue="gpu")
    with pytest.raises(ValueError, match="nodes"):
        slurm.start_cluster(0, 4)


def test_slurm_job_script_from_dask_jobqueue(slurm):
    """With dask-jobqueue installed: the worker job script it writes from our options."""
    pytest.importorskip("dask_jobqueue")
    with slurm.slurm_cluster_class()(**slurm.cluster_options(queue="gpu", cpus_per_gpu=8)) as cluster:
        script = cluster.job_script()
    assert "#SBATCH --gpus-per-task=1" in script and "#SBATCH --cpus-per-task=8" in script
    assert "-m dask_cuda.cli" in script and "--resources GPU=1" in script and "--nthreads 4" in script


def test_slurm_run_ntt_on_a_running_scheduler(slurm, tmp_path):
    """run_ntt against a real (CPU) Dask scheduler: the written store equals hb.ntt of the input."""
    from distributed import LocalCluster

    import hebatch as hb
    from hebatch import dist

    rng = np.random.default_rng()
    n = 64
    moduli = hb.ntt_primes(40, n, 2)
    x = np.stack([rng.integers(0, q, size=(6, n), dtype=np.uint64) for q in moduli], axis=1)
    dist.to_zarr(dist.from_numpy(x, chunks=2), str(tmp_path / "in.zarr"))
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster:
        written = slurm.run_ntt(
            cluster.scheduler_address,
            str(tmp_path / "in.zarr"),
            str(tmp_path / "out.zarr"),
            moduli,
            negacyclic=True,
            workers=1,
            wait_timeout=30,
        )
    assert written >= 1 and dist.zarr_status(str(tmp_path / "out.zarr")) == (written, written)
    got = dist.from_zarr(str(tmp_path / "out.zarr")).compute()
    assert np.array_equal(got, hb.ntt(x, moduli, negacyclic=True))


# --- wheelhouse ------------------------------------------------------------------------------------


def _wheelhouse(*args, **kw):
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run(
        ["bash", str(DEPLOY / "wheelhouse" / "build-wheelhouse.sh"), *args],
        env=env,
        capture_output=True,
        text=True,
        **kw,
    )


def test_wheelhouse_list_is_exactly_runtime_plus_gpu_dependencies():
    project = _pyproject()
    expected = project["dependencies"] + project["optional-dependencies"]["gpu"]
    result = _wheelhouse("--list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected
    ucx = _wheelhouse("--list", "--ucx")
    assert ucx.stdout.splitlines() == expected + ["distributed-ucxx-cu13"]


def test_gpu_extra_brings_the_cuda_13_bindings_dask_cuda_imports():
    """dask-cuda imports cuda.core, which needs cuda-bindings: only dask-cuda's cu13 extra installs it."""
    gpu = _pyproject()["optional-dependencies"]["gpu"]
    assert any(re.match(r"dask-cuda\[cu13\]", req) for req in gpu), gpu
    assert any(req.startswith("cupy-cuda13x") for req in gpu), gpu


def test_wheelhouse_requirements_follow_pyproject(tmp_path):
    req = _load("hebatch_deploy_requirements", DEPLOY / "wheelhouse" / "requirements.py")
    rng = np.random.default_rng()
    deps = [f"pkg{i}>={rng.integers(1, 9)}" for i in range(rng.integers(1, 5))]
    gpu = [f"gpupkg{i}" for i in range(rng.integers(1, 4))]
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname='x'\nversion='1'\ndependencies="
        + repr(deps)
        + "\n[project.optional-dependencies]\ngpu="
        + repr(gpu + deps[:1])
        + "\n"
    )
    assert req.requirements(tmp_path / "pyproject.toml") == deps + gpu  # repeats dropped
    with pytest.raises(ValueError, match="extra 'nope'"):
        req.requirements(tmp_path / "pyproject.toml", extras=("nope",))


def test_wheelhouse_dry_run_downloads_binary_wheels_for_the_target(tmp_path):
    out = tmp_path / "wh"
    result = _wheelhouse(str(out), "--dry-run", "--python-version", "3.12", "--platform", "manylinux_2_28_aarch64")
    assert result.returncode == 0, result.stderr
    assert not out.exists(), "--dry-run must not create or download anything"
    lines = result.stdout.splitlines()
    (download,) = [line for line in lines if " download " in line and "--requirement" in line]
    for part in (
        "--only-binary=:all:",
        "--python-version 3.12",
        "--platform manylinux_2_28_aarch64",
        f"--requirement {out}/requirements-gpu.txt",
    ):
        assert part in download, part
    assert any(" wheel --no-deps --wheel-dir " in line and line.endswith(str(ROOT)) for line in lines)
    assert "ready" not in result.stdout and "nothing downloaded" in lines[-1]


def test_wheelhouse_rejects_bad_arguments(tmp_path):
    assert _wheelhouse().returncode == 2
    assert _wheelhouse(str(tmp_path), "--python-version", "twelve").returncode == 2
    assert _wheelhouse(str(tmp_path), "--bogus").returncode == 2


def test_install_offline_never_uses_an_index(tmp_path):
    result = subprocess.run(
        [
            "bash",
            str(DEPLOY / "wheelhouse" / "install-offline.sh"),
            str(tmp_path),
            "--venv",
            str(tmp_path / "venv"),
            "--dry-run",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    installs = [line for line in result.stdout.splitlines() if " pip install " in line]
    assert installs and all("--no-index" in line and f"--find-links {tmp_path}" in line for line in installs)
    assert any(line.endswith("hebatch\\[gpu\\]") for line in installs)
    missing = subprocess.run(
        ["bash", str(DEPLOY / "wheelhouse" / "install-offline.sh"), str(tmp_path)], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "hebatch-*.whl" in missing.stderr
    assert "nothing installed" in result.stdout and "installed; check" not in result.stdout
    assert "no hebatch-*.whl" in result.stderr  # the dry run says what a real run would miss


# --- local cluster ---------------------------------------------------------------------------------


def _fake_nvidia_smi(tmp_path, count):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lines = "".join(f'echo "GPU {i}: NVIDIA H100 (UUID: GPU-{i:04d})"\n' for i in range(count))
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\n" + lines)
    (bin_dir / "nvidia-smi").chmod(0o755)
    return bin_dir


def test_local_cluster_plans_one_worker_per_gpu(tmp_path):
    count = int(np.random.default_rng().integers(1, 9))
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["PATH"] = f"{_fake_nvidia_smi(tmp_path, count)}:{env['PATH']}"
    env["HEBATCH_RUN_DIR"] = str(tmp_path / "run")
    result = subprocess.run(
        ["bash", str(DEPLOY / "local" / "start-local-gpu-cluster.sh"), "--dry-run"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    workers = [line for line in result.stdout.splitlines() if line.startswith("+ [worker-")]
    assert len(workers) == count
    for i, line in enumerate(workers):
        assert f"CUDA_VISIBLE_DEVICES={i} dask cuda worker" in line and "--resources GPU=1" in line
    assert any(line.startswith("+ [scheduler] dask scheduler") for line in result.stdout.splitlines())
    assert "export HEBATCH_SCHEDULER=tcp://127.0.0.1:8786" in result.stdout
    assert "dashboard: http://127.0.0.1:8787/status" in result.stdout
    assert not (tmp_path / "run").exists()


def test_local_cluster_without_gpu_fails_with_a_reason(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["PATH"] = f"{_fake_nvidia_smi(tmp_path, 0)}:/usr/bin:/bin"
    env["HEBATCH_RUN_DIR"] = str(tmp_path / "run")
    script = str(DEPLOY / "local" / "start-local-gpu-cluster.sh")
    result = subprocess.run(["bash", script], env=env, capture_output=True, text=True)
    assert result.returncode == 1 and "no GPU" in result.stderr
    # the dry run shows the plan (for one GPU) and succeeds, starting nothing
    dry = subprocess.run(["bash", script, "--dry-run"], env=env, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert "no GPU" in dry.stderr and "dry run: nothing started" in dry.stdout
    lines = dry.stdout.splitlines()
    assert any(line.startswith("+ [scheduler] dask scheduler") for line in lines)
    assert sum(line.startswith("+ [worker-") for line in lines) == 1
    assert not (tmp_path / "run").exists()


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_local_stop_script_stops_what_start_recorded(tmp_path):
    """stop-local-gpu-cluster.sh ends the processes named in the pid files (here stand-in sleeps)."""
    run = tmp_path / "run"
    run.mkdir()
    # Not children of this process (as with the start script's nohup'ed processes), so they are reaped.
    pids = [
        int(
            subprocess.run(
                ["bash", "-c", "sleep 60 > /dev/null 2>&1 & echo $!"], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(2)
    ]
    (run / "worker-0.pid").write_text(str(pids[0]))
    (run / "scheduler.pid").write_text(str(pids[1]))
    result = subprocess.run(
        ["bash", str(DEPLOY / "local" / "stop-local-gpu-cluster.sh")],
        env={**os.environ, "HEBATCH_RUN_DIR": str(run)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert not any(_running(pid) for pid in pids)
    assert not list(run.glob("*.pid"))


# --- Docker ----------------------------------------------------------------------------------------


def _dockerfile_instructions():
    text = (DEPLOY / "docker" / "Dockerfile").read_text().replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_dockerfile_copies_existing_files_and_installs_the_gpu_extra():
    instructions = _dockerfile_instructions()
    base = [line for line in instructions if line.startswith("ARG CUDA_IMAGE=")]
    assert base and re.fullmatch(r"ARG CUDA_IMAGE=nvidia/cuda:13\.\d+\.\d+-runtime-ubuntu\d+\.\d+", base[0])
    assert "FROM ${CUDA_IMAGE}" in instructions
    copies = [line.split()[1:-1] for line in instructions if line.startswith("COPY ")]
    assert copies
    for sources in copies:
        for source in sources:
            assert (ROOT / source).exists(), f"Dockerfile copies {source}, which does not exist"
    installs = [line for line in instructions if "pip install" in line and '".[gpu]"' in line]
    assert installs, "the image must install the package with its gpu extra"
    assert any("libnvrtc" in line for line in instructions), "the build must check NVRTC is present"
    assert instructions[-2].startswith("ENTRYPOINT") and '"hebatch"' in instructions[-2]


def test_dockerignore_keeps_what_the_image_is_built_from():
    rules = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert rules[0] == "*"
    kept = {line[1:].rstrip("/") for line in rules if line.startswith("!")}
    copied = {
        s.rstrip("/") for line in _dockerfile_instructions() if line.startswith("COPY ") for s in line.split()[1:-1]
    }
    assert copied <= kept, f"the Dockerfile copies {copied - kept}, which .dockerignore leaves out"
    # what the wheel build needs (pyproject's readme and the force-included kernels)
    assert {"pyproject.toml", "README.md", "hebatch", "kernels"} <= kept


def test_pods_writing_the_volume_use_the_image_users_group():
    uid = re.search(r"useradd [^\n]*--uid (\d+)", (DEPLOY / "docker" / "Dockerfile").read_text())
    assert uid, "the Dockerfile must create its user with a fixed uid"
    for name, doc in _documents():
        if not doc["kind"].startswith("Dask"):
            continue
        spec = doc["spec"]
        cluster = spec["cluster"]["spec"] if doc["kind"] == "DaskJob" else spec
        pods = [cluster["worker"]["spec"]] + ([spec["job"]["spec"]] if doc["kind"] == "DaskJob" else [])
        for pod in pods:
            assert pod["securityContext"]["fsGroup"] == int(uid.group(1)), name
