"""BFV over datasets of records, keys in files: keygen, encrypt, evaluate, decrypt, and the demo pipeline.

A dataset is (records, features) ints mod t (.npy or Zarr); record i goes into the first slots of
ciphertext i. Ciphertexts live in a Zarr group written by dist.to_zarr (array "data", shape
(records, 2, L, n), chunk by chunk and resumable) whose record of what made it names the parameters
and the key from the first chunk on (a rerun under other keys or parameters is refused).
A key directory holds params.json and the serialized keys (secret.key readable by its owner only).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import pathlib

import dask.array as da
import numpy as np
from dask.delayed import delayed

from .. import bfv
from .. import distributed as dist
from ..distributed.provenance import describe
from .bfv_pipeline import Pipeline, parse_poly, rotation_steps
from .io import check_separate, kind_of, open_batch, peek, write_batch
from .report import Timer, console, status

PRESETS = ("n4096", "n8192", "n16384", "n32768", "n65536")
KEY_FILES = {"secret": "secret.key", "public": "public.key", "relin": "relin.key", "galois": "galois.key"}
ATTRS = "hebatch_bfv"


# -- keys on disk ----------------------------------------------------------------------------------------


def _claim_key_dir(directory: pathlib.Path, overwrite: bool) -> pathlib.Path | None:
    """Make `directory` an empty key directory of mode 0700; existing keys are moved aside (never deleted)
    to a timestamped sibling when `overwrite`, else refused. The sibling's path, or None."""
    aside = None
    if directory.exists():
        if not directory.is_dir():
            raise NotADirectoryError(f"--keys {os.fspath(directory)!r} is a file, not a key directory")
        if any(directory.iterdir()):
            if not overwrite:
                raise FileExistsError(
                    f"--keys {os.fspath(directory)!r} is not empty (it may hold keys that data is encrypted "
                    "under); choose another directory, or pass --overwrite to move it aside and generate new keys"
                )
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
            aside = directory.with_name(f"{directory.name}.old-{stamp}")
            suffix = 1
            while aside.exists():
                aside = directory.with_name(f"{directory.name}.old-{stamp}-{suffix}")
                suffix += 1
            directory.rename(aside)
        else:
            directory.chmod(0o700)  # empty: nothing written yet
    if not directory.exists():
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir(mode=0o700)  # private from the start (the umask can only narrow it)
    return aside


def _write_new(path: pathlib.Path, data: bytes, mode: int) -> None:
    """Write a file that must not exist yet, created with `mode` before any byte is in it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


def write_keys(
    directory, preset: str, max_features: int, backend: str = "auto", *, overwrite: bool = False, digit_limbs: int = 1
) -> dict:
    """Generate keys (rotations for dot products of up to max_features values) into `directory`, with key-switching
    digits of `digit_limbs` limbs (bfv.Params; recorded in params.json where it is not 1).

    A non-empty directory is refused unless `overwrite`, which moves it aside (meta["moved_aside"]).
    params.json is written last: it marks a complete key set.
    """
    params = bfv.Params.preset(preset, digit_limbs=digit_limbs)
    if not 1 <= max_features <= params.n // 2:
        raise ValueError(f"--max-features must be in 1..{params.n // 2} (a slot row) for {preset}, got {max_features}")
    directory = pathlib.Path(directory)
    if directory.exists() and not overwrite:
        _claim_key_dir(directory, overwrite=False)  # refuse before the (slow) key generation
    ctx = bfv.Context(params, backend=backend)
    keys = ctx.keygen(rotations=rotation_steps(max_features))
    aside = _claim_key_dir(directory, overwrite)
    meta = {
        "preset": preset,
        "n": params.n,
        "t": params.t,
        "q": [str(q) for q in params.q],
        "special": str(params.special),
        **({"digit_limbs": params.digit_limbs} if params.digit_limbs != 1 else {}),
        "fingerprint": params.fingerprint,
        "key_id": keys.key_id,
        "max_features": max_features,
    }
    for part, name in KEY_FILES.items():
        _write_new(directory / name, getattr(keys, part).to_bytes(), 0o600 if part == "secret" else 0o644)
    _write_new(directory / "params.json", (json.dumps(meta, indent=2) + "\n").encode(), 0o644)
    if aside is not None:
        meta["moved_aside"] = os.fspath(aside)
    return meta


def read_params(directory):
    path = pathlib.Path(directory) / "params.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"--keys {os.fspath(directory)!r} holds no params.json (make one with `hebatch bfv keygen`)"
        )
    meta = json.loads(path.read_text())
    params = bfv.Params(
        n=int(meta["n"]),
        t=int(meta["t"]),
        q=tuple(int(q) for q in meta["q"]),
        special=int(meta["special"]),
        digit_limbs=int(meta.get("digit_limbs", 1)),
    )
    if params.fingerprint != meta["fingerprint"]:
        raise ValueError(f"{path}: the parameters do not match their recorded fingerprint")
    return params, meta


def read_keys(directory, *, secret: bool):
    """(params, meta, Keys) from a key directory; the secret key only if asked for."""
    params, meta = read_params(directory)
    parts = {}
    for part, cls in (
        ("public", bfv.PublicKey),
        ("relin", bfv.RelinKey),
        ("galois", bfv.GaloisKeys),
        ("secret", bfv.SecretKey),
    ):
        if part == "secret" and not secret:
            parts[part] = None
            continue
        path = pathlib.Path(directory) / KEY_FILES[part]
        if not path.is_file():
            raise FileNotFoundError(f"--keys {os.fspath(directory)!r} has no {KEY_FILES[part]}")
        parts[part] = cls.from_bytes(path.read_bytes(), params)
    keys = bfv.Keys(parts["secret"], parts["public"], parts["relin"], parts["galois"])
    return params, meta, keys


# -- datasets and ciphertext stores ----------------------------------------------------------------------


def _encrypt_rows(values, params, public, backend):
    """Encrypt rows of values (records, features) on a worker: slot row 0 holds each record."""
    from ..distributed.bfv import worker_context

    ctx = worker_context(params, backend)
    slots = np.zeros((values.shape[0], params.n), dtype=np.uint64)
    values = np.asarray(values)
    if values.size and (values.min() < 0 or values.max() >= params.t):
        raise ValueError(f"values must lie in [0, t) = [0, {params.t}), got {values.min()} .. {values.max()}")
    slots[:, : values.shape[1]] = values
    return ctx.ops.to_host(ctx.encrypt(public, ctx.encode(slots)).data)


def encrypt_dataset(
    in_path, ct_path, key_dir, *, chunk=None, backend="auto", overwrite=False, overwrite_hint="--overwrite"
) -> dict:
    """Encrypt a dataset (records, features) into a Zarr store of ciphertexts, chunk by chunk; a rerun
    with the same input and keys resumes, one with other keys, parameters or input is refused (naming
    both) unless overwrite. The store records the key id and parameters before its first chunk."""
    params, _meta, keys = read_keys(key_dir, secret=False)
    values = open_batch(in_path, chunks=chunk or 16, name="IN")
    if values.ndim != 2:
        raise ValueError(f"IN must hold (records, features) values, got shape {values.shape}")
    if values.dtype.kind not in "iu":
        raise TypeError(f"IN must hold integers mod t = {params.t}, got dtype {values.dtype}")
    features = int(values.shape[1])
    if not 1 <= features <= params.n // 2:
        raise ValueError(f"IN has {features} values per record; at most n/2 = {params.n // 2} fit a slot row")
    public = delayed(keys.public, traverse=False)  # one copy in the graph, shared by every task
    limbs = len(params.q)
    # What the store holds, recorded before its first chunk: a rerun under other keys is refused
    made_by = {
        "operation": "bfv-encrypt",
        "input": describe(values),
        ATTRS: _bfv_tag(params, keys.key_id, features=features, slots=features, steps=[]),
    }
    values = values.rechunk({1: -1})
    parts = (
        [
            da.from_delayed(
                delayed(_encrypt_rows, pure=True)(block, params, public, backend),
                shape=(rows, 2, limbs, params.n),
                dtype=np.uint64,
                meta=np.empty((0, 0, 0, 0), dtype=np.uint64),
            )
            for block, rows in zip(values.to_delayed().ravel(), values.chunks[0])
        ]
        if values.shape[0]
        else []
    )
    if not parts:
        raise ValueError("IN holds no records")
    cts = da.concatenate(parts, axis=0)
    with Timer() as timer:
        written = write_batch(
            cts,
            ct_path,
            overwrite=overwrite,
            console=console,
            name="CT",
            provenance=made_by,
            overwrite_hint=overwrite_hint,
        )
    return {
        "input": os.fspath(in_path),
        "ciphertexts": os.fspath(ct_path),
        "records": int(values.shape[0]),
        "features": features,
        "n": params.n,
        "limbs": limbs,
        **written,
        "seconds": timer.seconds,
    }


def _bfv_tag(params, key_id, **extra) -> dict:
    """The part of a ciphertext store's record that names its parameters and key."""
    return {"kind": "ciphertext", "fingerprint": params.fingerprint, "key_id": key_id, **extra}


def store_attrs(ct_path, params, key_id) -> dict:
    """The attributes of a ciphertext store, checked against the keys' parameters and id."""

    if not os.path.exists(ct_path):
        raise FileNotFoundError(f"{os.fspath(ct_path)!r} does not exist")
    kind_of(ct_path, "CT")
    if pathlib.Path(ct_path).suffix != ".zarr":
        raise ValueError(f"ciphertexts live in Zarr stores, not {os.fspath(ct_path)!r}")
    try:
        record = dist.zarr_provenance(os.fspath(ct_path))
    except ValueError:  # no array "data": not a ciphertext store
        record = None
    job = record.get("job") if record else None
    attrs = job.get(ATTRS) if isinstance(job, dict) else None
    if not attrs:
        raise ValueError(f"{os.fspath(ct_path)!r} holds no hebatch BFV ciphertexts")
    if attrs["fingerprint"] != params.fingerprint:
        raise ValueError(
            f"{os.fspath(ct_path)!r} was encrypted under other parameters ({attrs['fingerprint']}) "
            f"than --keys ({params.fingerprint})"
        )
    if attrs["key_id"] != key_id:
        raise ValueError(f"{os.fspath(ct_path)!r} was encrypted under key {attrs['key_id']}, not {key_id} of --keys")
    return dict(attrs)


def evaluate_store(
    ct_path,
    out_path,
    key_dir,
    pipeline_options: dict,
    *,
    chunk=None,
    backend="auto",
    overwrite=False,
    overwrite_hint="--overwrite",
) -> dict:
    """Apply a pipeline to every ciphertext of a store on the cluster (dist.bfv_map); resumable (the
    same pipeline on the same ciphertexts and keys only: anything else is refused unless overwrite)."""
    params, _meta, keys = read_keys(key_dir, secret=False)
    _attrs, pipeline, all_steps, recorded = _plan_eval(
        ct_path, out_path, params, keys.key_id, pipeline_options, overwrite
    )
    steps = rotation_steps(pipeline.features) if pipeline.dot_with is not None else []
    ctx = bfv.Context(params, backend="cpu")
    missing = [s for s in steps if ctx.galois_element(s) not in keys.galois.elements]
    if missing:
        raise ValueError(
            f"--keys has no Galois keys for rotations {missing}: regenerate with "
            f"`hebatch bfv keygen --max-features {pipeline.features}`"
        )
    cts = dist.from_zarr(os.fspath(ct_path), chunks=chunk or _store_chunk(ct_path))
    made_by = {
        "operation": "bfv-eval",
        "input": describe(cts),
        "pipeline": pipeline.describe(),
        "dot_with": None if pipeline.dot_with is None else [int(w) for w in pipeline.dot_with],
        ATTRS: _bfv_tag(
            params,
            keys.key_id,
            features=pipeline.features,
            slots=pipeline.result_slots,
            steps=all_steps,
            pipeline=recorded,
        ),
    }
    result = dist.bfv_map(pipeline, cts, keys, params, components=2, backend=backend, name="bfv_pipeline")
    with Timer() as timer:
        written = write_batch(
            result,
            out_path,
            overwrite=overwrite,
            console=console,
            name="OUT",
            provenance=made_by,
            overwrite_hint=overwrite_hint,
        )
    return {
        "ciphertexts": os.fspath(ct_path),
        "output": os.fspath(out_path),
        "records": int(cts.shape[0]),
        "steps": pipeline.describe(),
        **written,
        "seconds": timer.seconds,
    }


def _plan_eval(ct_path, out_path, params, key_id, pipeline_options: dict, overwrite: bool):
    """(source attributes, Pipeline, all steps, the recorded pipeline) of `bfv eval`, every check that
    needs no cluster made (run before one starts, and again by evaluate_store)."""
    attrs = store_attrs(ct_path, params, key_id)
    if attrs.get("slots") != attrs.get("features"):
        raise ValueError(f"{os.fspath(ct_path)!r} holds dot-product results; evaluate the encrypted records instead")
    pipeline = Pipeline(features=int(attrs["features"]), **pipeline_options)
    all_steps = list(attrs.get("steps", [])) + pipeline.describe()
    # what the steps' words leave out (the weights themselves), so a rerun can be matched exactly
    recorded = {"source": attrs.get("pipeline"), **dataclasses.asdict(pipeline)}
    recorded = json.loads(json.dumps(recorded))  # as the attributes store it (tuples as lists)
    _check_same_pipeline(out_path, all_steps, recorded, overwrite)
    return attrs, pipeline, all_steps, recorded


def check_records(in_path, params) -> None:
    """The checks of a records dataset that its encryption would otherwise make on the workers (shape,
    dtype, every value in [0, t)), made here before any cluster starts: one pass over the records,
    small beside their ciphertexts."""
    shape, dtype = peek(in_path, name="IN")
    if len(shape) != 2:
        raise ValueError(f"IN must hold (records, features) values, got shape {shape}")
    if dtype.kind not in "iu":
        raise TypeError(f"IN must hold integers mod t = {params.t}, got dtype {dtype}")
    if not shape[0]:
        raise ValueError("IN holds no records")
    rows = max(1, (64 << 20) // max(1, dtype.itemsize * shape[1]))  # blocks of 64 MiB
    values = open_batch(in_path, chunks=rows, name="IN")
    low, high = da.compute(values.min(), values.max(), scheduler="threads")  # no cluster yet
    if low < 0 or high >= params.t:
        raise ValueError(f"IN values must lie in [0, t) = [0, {params.t}), got {low} .. {high}")


def _check_same_pipeline(out_path, steps: list, pipeline: dict, overwrite: bool) -> None:
    """A rerun into an existing output must apply the same pipeline to the same source: its chunks
    hold that pipeline's results, and another one would only relabel them."""

    if overwrite or not os.path.exists(out_path):
        return
    try:
        record = dist.zarr_provenance(os.fspath(out_path)) or {}
    except (FileNotFoundError, ValueError, TypeError, OSError):
        return  # not a store this job wrote: write_batch refuses it
    job = record.get("job")
    attrs = (job.get(ATTRS) if isinstance(job, dict) else None) or {}
    found = attrs.get("pipeline"), attrs.get("steps")
    if "steps" in attrs and found != (pipeline if "pipeline" in attrs else None, steps):
        raise ValueError(
            f"OUT {os.fspath(out_path)!r} holds the results of {'; '.join(attrs['steps']) or 'no steps'}, not of "
            f"{'; '.join(steps)}: choose another OUT, or pass --overwrite to replace it"
        )


def _store_chunk(ct_path) -> int:
    import zarr

    return int(zarr.open_group(os.fspath(ct_path), mode="r")["data"].chunks[0])


def decrypt_store(ct_path, out_path, key_dir, *, overwrite=False, backend="auto") -> tuple[dict, np.ndarray]:
    """Decrypt a ciphertext store here (the secret key never goes to workers); values (records, slots)."""
    import zarr

    params, _meta, keys = read_keys(key_dir, secret=True)
    attrs = store_attrs(ct_path, params, keys.key_id)
    kind_of(out_path, "OUT")
    check_separate(ct_path, out_path, "CT", "OUT")
    if os.path.exists(out_path) and not overwrite:
        raise FileExistsError(f"OUT {os.fspath(out_path)!r} exists; pass --overwrite to replace it")
    data = zarr.open_group(os.fspath(ct_path), mode="r")["data"]
    finished, total = dist.zarr_status(os.fspath(ct_path))
    if finished < total:
        raise ValueError(
            f"{os.fspath(ct_path)!r} is incomplete ({finished} of {total} chunks): rerun the command that writes it"
        )
    ctx = bfv.Context(params, backend=backend)
    slots = int(attrs["slots"])
    rows, out, budget = int(data.chunks[0]), [], None
    from rich.progress import track

    starts = range(0, data.shape[0], rows)
    with Timer() as timer:
        for start in track(starts, description="decrypt", console=console, transient=True, total=len(starts)):
            ct = bfv.Ciphertext(np.asarray(data[start : start + rows]), params.fingerprint, keys.key_id)
            out.append(np.asarray(ctx.ops.to_host(ctx.decode(ctx.decrypt(keys.secret, ct))))[:, :slots])
            # the budget is exact but costly (Python ints per coefficient): one record per chunk samples it
            first = bfv.Ciphertext(ct.data[:1], params.fingerprint, keys.key_id)
            left = int(np.min(np.asarray(ctx.noise_budget(keys.secret, first))))
            budget = left if budget is None else min(budget, left)
    values = np.concatenate(out, axis=0) if out else np.zeros((0, slots), dtype=np.uint64)
    if budget is not None and budget <= 0:
        raise RuntimeError(
            f"the ciphertexts have no noise budget left: the pipeline was too deep for n = {params.n} "
            "(use a larger --preset at keygen)"
        )
    if kind_of(out_path, "OUT") == "npy":
        np.save(out_path, values)
    else:
        dist.to_zarr(values, os.fspath(out_path), overwrite=True)
    return {
        "ciphertexts": os.fspath(ct_path),
        "output": os.fspath(out_path),
        "records": int(values.shape[0]),
        "values_per_record": slots,
        "steps": attrs.get("steps", []),
        "min_noise_budget_bits": budget,
        "noise_budget_sampled": "first record of each chunk",
        "seconds": timer.seconds,
    }, values


def pipeline_options(poly, square, mul_const, add_const, dot_with) -> dict:
    weights = None
    if isinstance(dot_with, (list, tuple)):
        dot_with = np.asarray(dot_with)
        if dot_with.dtype.kind not in "iu":
            raise ValueError("dot_with: expected a list of integer weights")
        weights = tuple(int(w) for w in dot_with)
    elif dot_with is not None:
        weights = np.load(dot_with) if str(dot_with).endswith(".npy") else np.loadtxt(dot_with, dtype=np.int64, ndmin=1)
        if weights.ndim != 1 or weights.dtype.kind not in "iu":
            raise ValueError(
                f"--dot-with {dot_with}: expected one row of integer weights, got {weights.dtype} {weights.shape}"
            )
        weights = tuple(int(w) for w in weights)
    options = {
        "poly": parse_poly(poly) if poly else None,
        "square": bool(square),
        "mul_const": mul_const,
        "add_const": add_const,
        "dot_with": weights,
    }
    if not any(v not in (None, False) for v in options.values()):
        raise ValueError("give at least one step: --poly, --square, --mul-const, --add-const or --dot-with")
    return options


def run_pipeline_demo(
    work: pathlib.Path,
    *,
    preset,
    records,
    features,
    max_value,
    options: dict,
    chunk,
    backend,
    seed=None,
    key_dir=None,
    records_path=None,
    overwrite_hint="--overwrite",
) -> dict:
    """keygen (unless keys exist) -> encrypt -> eval -> decrypt in `work`, checked against plaintexts.

    Every stage is resumable: keys, the encrypted records and the result stores are kept by a rerun.
    """
    work.mkdir(parents=True, exist_ok=True)
    key_dir = pathlib.Path(key_dir or work / "keys")
    stages = {}
    if not (key_dir / "params.json").is_file():
        status(f"keygen ({preset}) -> {key_dir}")
        with Timer() as timer:
            # an interrupted keygen (no params.json) is moved aside, not reused
            write_keys(key_dir, preset, max(features, 1), backend, overwrite=True)
        stages["keygen_seconds"] = timer.seconds
    params, meta = read_params(key_dir)
    if records_path is None:
        records_path = work / "records.npy"
        if not records_path.exists():
            rng = np.random.default_rng(seed)
            np.save(records_path, rng.integers(0, max_value + 1, size=(records, features), dtype=np.int64))
    values = np.load(records_path) if str(records_path).endswith(".npy") else open_batch(records_path).compute()
    status(f"encrypt {values.shape[0]} records of {values.shape[1]} values")
    enc = encrypt_dataset(
        records_path, work / "records.ct.zarr", key_dir, chunk=chunk, backend=backend, overwrite_hint=overwrite_hint
    )
    status(f"eval {', '.join(Pipeline(features=values.shape[1], **options).describe())} on the cluster")
    ev = evaluate_store(
        work / "records.ct.zarr",
        work / "result.ct.zarr",
        key_dir,
        options,
        backend=backend,
        overwrite_hint=overwrite_hint,
    )
    status("decrypt")
    dec, got = decrypt_store(work / "result.ct.zarr", work / "result.npy", key_dir, overwrite=True, backend=backend)
    expected = Pipeline(features=values.shape[1], **options).plain(values, params.t)
    mismatches = int(np.count_nonzero(np.any(got != expected, axis=1)))
    return {
        "preset": meta["preset"],
        "n": params.n,
        "t": params.t,
        "records": int(values.shape[0]),
        "features": int(values.shape[1]),
        "steps": ev["steps"],
        "encrypt_seconds": enc["seconds"],
        "eval_seconds": ev["seconds"],
        "decrypt_seconds": dec["seconds"],
        "chunks_encrypted": enc["chunks_written"],
        "chunks_evaluated": ev["chunks_written"],
        "min_noise_budget_bits": dec["min_noise_budget_bits"],
        "records_wrong": mismatches,
        "result": os.fspath(work / "result.npy"),
        **stages,
    }


def analytics_job(settings: dict, out_dir, device: str) -> dict:
    """The bfv-analytics workflow: a batch of records through keygen, encrypt, eval, decrypt, checked."""
    options = pipeline_options(
        settings["poly"], bool(settings["square"]), settings["mul_const"], settings["add_const"], settings["dot_with"]
    )
    backend = {"cpu": "cpu", "gpu": "gpu"}.get(device, "auto")
    summary = run_pipeline_demo(
        pathlib.Path(out_dir),
        preset=settings["preset"],
        records=int(settings["records"]),
        features=int(settings["features"]),
        max_value=int(settings["max_value"]),
        options=options,
        chunk=int(settings["chunk"]),
        backend=backend,
        seed=settings["seed"],
        records_path=settings["records_path"],
        overwrite_hint="--fresh (or another output_dir)",
    )
    if summary["records_wrong"]:
        raise RuntimeError(
            f"{summary['records_wrong']} records decrypted to values other than the plaintext computation"
        )
    return summary


# -- whole jobs (what the `hebatch bfv` commands run) ------------------------------------------------------


def keygen(key_dir, preset="n8192", max_features=64, device="auto", *, overwrite=False, digit_limbs=1) -> dict:
    """Generate keys into key_dir (an existing key set is moved aside only if `overwrite`); a summary with
    the total bytes written."""
    meta = write_keys(key_dir, preset, max_features, device, overwrite=overwrite, digit_limbs=digit_limbs)
    files = {name: (pathlib.Path(key_dir) / name).stat().st_size for name in ["params.json", *KEY_FILES.values()]}
    return {
        "keys": os.fspath(key_dir),
        "preset": preset,
        "n": meta["n"],
        "t": meta["t"],
        "limbs": len(meta["q"]),
        "digit_limbs": meta.get("digit_limbs", 1),
        "fingerprint": meta["fingerprint"],
        "key_id": meta["key_id"],
        "bytes": sum(files.values()),
        **({"moved_aside": meta["moved_aside"]} if "moved_aside" in meta else {}),
    }


def encrypt(in_path, ct_path, key_dir, *, chunk=None, overwrite=False, cluster: dict | None = None) -> dict:
    """encrypt_dataset on the cluster `cluster` describes (job_cluster's options), checked before it starts."""
    from .cluster import job_cluster, worker_count

    cluster = dict(cluster or {})
    kind_of(in_path, "IN")
    kind_of(ct_path, "CT")
    check_separate(in_path, ct_path, "IN", "CT")
    check_records(in_path, read_params(key_dir)[0])
    with job_cluster(**cluster) as client:
        summary = encrypt_dataset(
            in_path, ct_path, key_dir, chunk=chunk, backend=cluster.get("device", "auto"), overwrite=overwrite
        )
        summary["workers"] = worker_count(client)
    return summary


def evaluate(
    ct_path, out_path, key_dir, options: dict, *, chunk=None, overwrite=False, cluster: dict | None = None
) -> dict:
    """evaluate_store on the cluster `cluster` describes, checked before it starts."""
    from .cluster import job_cluster, worker_count

    cluster = dict(cluster or {})
    kind_of(out_path, "OUT")
    check_separate(ct_path, out_path, "CT", "OUT")
    params, meta = read_params(key_dir)
    _plan_eval(ct_path, out_path, params, meta["key_id"], options, overwrite)
    with job_cluster(**cluster) as client:
        summary = evaluate_store(
            ct_path, out_path, key_dir, options, chunk=chunk, backend=cluster.get("device", "auto"), overwrite=overwrite
        )
        summary["workers"] = worker_count(client)
    return summary


def decrypt(ct_path, out_path, key_dir, *, overwrite=False, device="auto") -> dict:
    """decrypt_store's summary (the values are in OUT)."""
    return decrypt_store(ct_path, out_path, key_dir, overwrite=overwrite, backend=device)[0]


def demo(
    *,
    preset="n4096",
    records=32,
    features=8,
    max_value=15,
    options: dict | None = None,
    chunk=8,
    work_dir=None,
    seed=None,
    cluster: dict | None = None,
) -> dict:
    """run_pipeline_demo on a cluster, in work_dir or a temporary directory (removed afterwards).

    Raises ArithmeticError when a decrypted record differs from the plaintext computation.
    """
    import tempfile

    cluster = dict(cluster or {})
    options = options or pipeline_options("3x^2+2x+1", False, None, None, None)
    if preset not in PRESETS:
        raise ValueError(f"--preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    from .cluster import job_cluster, worker_count

    with tempfile.TemporaryDirectory() as scratch:
        work = pathlib.Path(work_dir or scratch)
        with job_cluster(**cluster) as client:
            summary = run_pipeline_demo(
                work,
                preset=preset,
                records=records,
                features=features,
                max_value=max_value,
                options=options,
                chunk=chunk,
                backend=cluster.get("device", "auto"),
                seed=seed,
            )
            summary["workers"] = worker_count(client)
        if not work_dir:
            summary["result"] = "(temporary directory, removed)"
    if summary["records_wrong"]:
        raise ArithmeticError(
            f"{summary['records_wrong']} records decrypted to values other than the plaintext computation", summary
        )
    return summary
