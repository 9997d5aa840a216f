"""`hebatch bfv keygen|encrypt|eval|decrypt|demo`: BFV over datasets of records, keys in files.

A dataset is (records, features) ints mod t (.npy or Zarr); record i goes into the first slots of
ciphertext i. Ciphertexts live in a Zarr group written by dist.to_zarr (array "data", shape
(records, 2, L, n), chunk by chunk and resumable) whose attributes name the parameters and the key.
A key directory holds params.json and the serialized keys (secret.key readable by its owner only).
"""

from __future__ import annotations

import json
import os
import pathlib

import click
import dask.array as da
import numpy as np
from dask.delayed import delayed

from .app import main
from .bfv_pipeline import Pipeline, parse_poly, rotation_steps
from .clusteropts import cluster_options, job_cluster, worker_count
from .common import CONTEXT, CleanErrorGroup, Timer, console, json_option, report, status
from .io import kind_of, open_batch, write_batch

KEY_FILES = {"secret": "secret.key", "public": "public.key", "relin": "relin.key", "galois": "galois.key"}
ATTRS = "hebatch_bfv"


def bfv_module():
    """hebatch.bfv, or RuntimeError saying that it is needed."""
    try:
        from .. import bfv
    except ImportError:
        raise RuntimeError("this command needs hebatch.bfv, which this installation lacks") from None
    return bfv


# -- keys on disk ----------------------------------------------------------------------------------------

def write_keys(directory, preset: str, max_features: int, backend: str = "auto") -> dict:
    """Generate keys (rotations for dot products of up to max_features values) into `directory`."""
    bfv = bfv_module()
    params = bfv.Params.preset(preset)
    if not 1 <= max_features <= params.n // 2:
        raise ValueError(f"--max-features must be in 1..{params.n // 2} (a slot row) for {preset}, got {max_features}")
    ctx = bfv.Context(params, backend=backend)
    keys = ctx.keygen(rotations=rotation_steps(max_features))
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    meta = {"preset": preset, "n": params.n, "t": params.t, "q": [str(q) for q in params.q],
            "special": str(params.special), "fingerprint": params.fingerprint, "key_id": keys.key_id,
            "max_features": max_features}
    (directory / "params.json").write_text(json.dumps(meta, indent=2) + "\n")
    for part, name in KEY_FILES.items():
        path = directory / name
        path.write_bytes(getattr(keys, part).to_bytes())
        if part == "secret":
            os.chmod(path, 0o600)
    return meta


def read_params(directory):
    bfv = bfv_module()
    path = pathlib.Path(directory) / "params.json"
    if not path.is_file():
        raise FileNotFoundError(f"--keys {os.fspath(directory)!r} holds no params.json "
                                "(make one with `hebatch bfv keygen`)")
    meta = json.loads(path.read_text())
    params = bfv.Params(n=int(meta["n"]), t=int(meta["t"]), q=tuple(int(q) for q in meta["q"]),
                        special=int(meta["special"]))
    if params.fingerprint != meta["fingerprint"]:
        raise ValueError(f"{path}: the parameters do not match their recorded fingerprint")
    return params, meta


def read_keys(directory, *, secret: bool):
    """(params, meta, Keys) from a key directory; the secret key only if asked for."""
    bfv = bfv_module()
    params, meta = read_params(directory)
    parts = {}
    for part, cls in (("public", bfv.PublicKey), ("relin", bfv.RelinKey), ("galois", bfv.GaloisKeys),
                      ("secret", bfv.SecretKey)):
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
    slots[:, :values.shape[1]] = values
    return ctx.ops.to_host(ctx.encrypt(public, ctx.encode(slots)).data)


def encrypt_dataset(in_path, ct_path, key_dir, *, chunk=None, backend="auto", overwrite=False) -> dict:
    """Encrypt a dataset (records, features) into a Zarr store of ciphertexts, chunk by chunk (resumable)."""
    params, meta, keys = read_keys(key_dir, secret=False)
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
    values = values.rechunk({1: -1})
    parts = [da.from_delayed(delayed(_encrypt_rows, pure=True)(block, params, public, backend),
                             shape=(rows, 2, limbs, params.n), dtype=np.uint64,
                             meta=np.empty((0, 0, 0, 0), dtype=np.uint64))
             for block, rows in zip(values.to_delayed().ravel(), values.chunks[0])] if values.shape[0] else []
    if not parts:
        raise ValueError("IN holds no records")
    cts = da.concatenate(parts, axis=0)
    with Timer() as timer:
        written = write_batch(cts, ct_path, overwrite=overwrite, console=console, name="CT")
    _tag(ct_path, params, keys.key_id, features=features, slots=features, steps=[])
    return {"input": os.fspath(in_path), "ciphertexts": os.fspath(ct_path), "records": int(values.shape[0]),
            "features": features, "n": params.n, "limbs": limbs, **written, "seconds": timer.seconds}


def _tag(ct_path, params, key_id, **extra):
    import zarr

    zarr.open_group(os.fspath(ct_path), mode="a").attrs[ATTRS] = {
        "kind": "ciphertext", "fingerprint": params.fingerprint, "key_id": key_id, **extra}


def store_attrs(ct_path, params, key_id) -> dict:
    """The attributes of a ciphertext store, checked against the keys' parameters and id."""
    import zarr

    if not os.path.exists(ct_path):
        raise FileNotFoundError(f"{os.fspath(ct_path)!r} does not exist")
    kind_of(ct_path, "CT")
    if pathlib.Path(ct_path).suffix != ".zarr":
        raise ValueError(f"ciphertexts live in Zarr stores, not {os.fspath(ct_path)!r}")
    attrs = zarr.open_group(os.fspath(ct_path), mode="r").attrs.get(ATTRS)
    if not attrs:
        raise ValueError(f"{os.fspath(ct_path)!r} holds no hebatch BFV ciphertexts")
    if attrs["fingerprint"] != params.fingerprint:
        raise ValueError(f"{os.fspath(ct_path)!r} was encrypted under other parameters ({attrs['fingerprint']}) "
                         f"than --keys ({params.fingerprint})")
    if attrs["key_id"] != key_id:
        raise ValueError(f"{os.fspath(ct_path)!r} was encrypted under key {attrs['key_id']}, not {key_id} of --keys")
    return dict(attrs)


def evaluate_store(ct_path, out_path, key_dir, pipeline_options: dict, *, chunk=None, backend="auto",
                   overwrite=False) -> dict:
    """Apply a pipeline to every ciphertext of a store on the cluster (dist.bfv_map); resumable."""
    from .. import distributed as dist

    params, meta, keys = read_keys(key_dir, secret=False)
    attrs = store_attrs(ct_path, params, keys.key_id)
    if attrs.get("slots") != attrs.get("features"):
        raise ValueError(f"{os.fspath(ct_path)!r} holds dot-product results; evaluate the encrypted records instead")
    pipeline = Pipeline(features=int(attrs["features"]), **pipeline_options)
    steps = rotation_steps(pipeline.features) if pipeline.dot_with is not None else []
    ctx = bfv_module().Context(params, backend="cpu")
    missing = [s for s in steps if ctx.galois_element(s) not in keys.galois.elements]
    if missing:
        raise ValueError(f"--keys has no Galois keys for rotations {missing}: regenerate with "
                         f"`hebatch bfv keygen --max-features {pipeline.features}`")
    cts = dist.from_zarr(os.fspath(ct_path), chunks=chunk or _store_chunk(ct_path))
    result = dist.bfv_map(pipeline, cts, keys, params, components=2, backend=backend, name="bfv_pipeline")
    with Timer() as timer:
        written = write_batch(result, out_path, overwrite=overwrite, console=console, name="OUT")
    _tag(out_path, params, keys.key_id, features=pipeline.features, slots=pipeline.result_slots,
         steps=list(attrs.get("steps", [])) + pipeline.describe())
    return {"ciphertexts": os.fspath(ct_path), "output": os.fspath(out_path), "records": int(cts.shape[0]),
            "steps": pipeline.describe(), **written, "seconds": timer.seconds}


def _store_chunk(ct_path) -> int:
    import zarr

    return int(zarr.open_group(os.fspath(ct_path), mode="r")["data"].chunks[0])


def decrypt_store(ct_path, out_path, key_dir, *, overwrite=False, backend="auto") -> tuple[dict, np.ndarray]:
    """Decrypt a ciphertext store here (the secret key never goes to workers); values (records, slots)."""
    import zarr

    bfv = bfv_module()
    params, meta, keys = read_keys(key_dir, secret=True)
    attrs = store_attrs(ct_path, params, keys.key_id)
    kind_of(out_path, "OUT")
    if os.path.exists(out_path) and not overwrite:
        raise FileExistsError(f"OUT {os.fspath(out_path)!r} exists; pass --overwrite to replace it")
    data = zarr.open_group(os.fspath(ct_path), mode="r")["data"]
    from ..distributed import zarr_status

    finished, total = zarr_status(os.fspath(ct_path))
    if finished < total:
        raise ValueError(f"{os.fspath(ct_path)!r} is incomplete ({finished} of {total} chunks): rerun the command "
                         "that writes it")
    ctx = bfv.Context(params, backend=backend)
    slots = int(attrs["slots"])
    rows, out, budget = int(data.chunks[0]), [], None
    with Timer() as timer:
        for start in range(0, data.shape[0], rows):
            ct = bfv.Ciphertext(np.asarray(data[start:start + rows]), params.fingerprint, keys.key_id)
            out.append(np.asarray(ctx.ops.to_host(ctx.decode(ctx.decrypt(keys.secret, ct))))[:, :slots])
            # the budget is exact but costly (Python ints per coefficient): one record per chunk samples it
            first = bfv.Ciphertext(ct.data[:1], params.fingerprint, keys.key_id)
            left = int(np.min(np.asarray(ctx.noise_budget(keys.secret, first))))
            budget = left if budget is None else min(budget, left)
    values = np.concatenate(out, axis=0) if out else np.zeros((0, slots), dtype=np.uint64)
    if budget is not None and budget <= 0:
        raise RuntimeError(f"the ciphertexts have no noise budget left: the pipeline was too deep for n = {params.n} "
                           "(use a larger --preset at keygen)")
    if kind_of(out_path, "OUT") == "npy":
        np.save(out_path, values)
    else:
        from .. import distributed as dist

        dist.to_zarr(values, os.fspath(out_path), overwrite=True)
    return {"ciphertexts": os.fspath(ct_path), "output": os.fspath(out_path), "records": int(values.shape[0]),
            "values_per_record": slots, "steps": attrs.get("steps", []), "min_noise_budget_bits": budget,
            "noise_budget_sampled": "first record of each chunk",
            "seconds": timer.seconds}, values


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
            raise ValueError(f"--dot-with {dot_with}: expected one row of integer weights, got {weights.dtype} "
                             f"{weights.shape}")
        weights = tuple(int(w) for w in weights)
    options = {"poly": parse_poly(poly) if poly else None, "square": bool(square), "mul_const": mul_const,
               "add_const": add_const, "dot_with": weights}
    if not any(v not in (None, False) for v in options.values()):
        raise ValueError("give at least one step: --poly, --square, --mul-const, --add-const or --dot-with")
    return options


# -- commands --------------------------------------------------------------------------------------------

@main.group("bfv", cls=CleanErrorGroup, context_settings=CONTEXT)
def bfv_group():
    """Homomorphic encryption (BFV) of datasets: keys in files, ciphertexts in Zarr stores.

    \b
    Examples:
      hebatch bfv demo --records 32 --features 8
      hebatch bfv keygen --keys keys/ --preset n8192 --max-features 16
      hebatch bfv encrypt records.npy records.ct.zarr --keys keys/
      hebatch bfv eval records.ct.zarr result.ct.zarr --keys keys/ --poly "3x^2+2x+1"
      hebatch bfv decrypt result.ct.zarr result.npy --keys keys/
    """


def keys_option(f):
    return click.option("--keys", "key_dir", required=True, type=click.Path(file_okay=False),
                        help="key directory (from `hebatch bfv keygen`)")(f)


def backend_option(f):
    return click.option("--backend", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True,
                        help="BFV backend (GPU where CuPy and a GPU are present)")(f)


def pipeline_flags(f):
    options = [
        click.option("--poly", default=None, metavar="P", help='elementwise polynomial, e.g. "3x^2+2x+1"'),
        click.option("--square", is_flag=True, help="square every value (ciphertext x ciphertext)"),
        click.option("--mul-const", type=int, default=None, metavar="C", help="multiply every value by C"),
        click.option("--add-const", type=int, default=None, metavar="C", help="add C to every value"),
        click.option("--dot-with", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
                     help="dot product of each record with these weights (.npy or text), by rotations"),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@bfv_group.command("keygen")
@keys_option
@click.option("--preset", type=click.Choice(["n4096", "n8192", "n16384", "n32768"]), default="n8192",
              show_default=True, help="parameters (ring degree n; t = 65537; 128-bit security)")
@click.option("--max-features", type=click.IntRange(1), default=64, show_default=True,
              help="longest record whose dot product the Galois keys allow")
@backend_option
@json_option
def keygen(key_dir, preset, max_features, backend, as_json):
    """Generate BFV keys into a directory: params.json, secret.key (mode 600), public, relin, galois keys.

    \b
    Examples:
      hebatch bfv keygen --keys keys/
      hebatch bfv keygen --keys keys4k/ --preset n4096 --max-features 8 --json
    """
    meta = write_keys(key_dir, preset, max_features, backend)
    files = {name: (pathlib.Path(key_dir) / name).stat().st_size for name in ["params.json", *KEY_FILES.values()]}
    report({"keys": os.fspath(key_dir), "preset": preset, "n": meta["n"], "t": meta["t"], "limbs": len(meta["q"]),
            "fingerprint": meta["fingerprint"], "key_id": meta["key_id"], "bytes": sum(files.values())},
           as_json, "hebatch bfv keygen")


@bfv_group.command("encrypt")
@click.argument("in_path", metavar="IN", type=click.Path())
@click.argument("ct_path", metavar="CT", type=click.Path())
@keys_option
@click.option("--chunk", type=click.IntRange(1), default=None, help="records per chunk (default 16)")
@click.option("--overwrite", is_flag=True, help="replace CT instead of resuming it")
@backend_option
@cluster_options
@json_option
def encrypt(in_path, ct_path, key_dir, chunk, overwrite, backend, scheduler, workers, device, threads_only, dashboard,
            report_path, as_json):
    """Encrypt a dataset IN (.npy or .zarr, (records, features) ints mod t) into a Zarr store CT.

    Each record becomes one ciphertext (its values in the first slots). Runs on the cluster chunk by
    chunk; rerunning an interrupted command resumes it.

    \b
    Examples:
      hebatch bfv encrypt records.npy records.ct.zarr --keys keys/
      hebatch bfv encrypt records.zarr records.ct.zarr --keys keys/ --chunk 64 --scheduler tcp://10.0.0.5:8786
    """
    kind_of(in_path, "IN")
    kind_of(ct_path, "CT")
    read_params(key_dir)
    with job_cluster(scheduler, workers, device, threads_only, dashboard, report_path) as client:
        summary = encrypt_dataset(in_path, ct_path, key_dir, chunk=chunk, backend=backend, overwrite=overwrite)
        summary["workers"] = worker_count(client)
    report(summary, as_json, "hebatch bfv encrypt")


@bfv_group.command("eval")
@click.argument("ct_path", metavar="CT", type=click.Path())
@click.argument("out_path", metavar="OUT", type=click.Path())
@keys_option
@pipeline_flags
@click.option("--chunk", type=click.IntRange(1), default=None, help="ciphertexts per task (default: the store's)")
@click.option("--overwrite", is_flag=True, help="replace OUT instead of resuming it")
@backend_option
@cluster_options
@json_option
def evaluate(ct_path, out_path, key_dir, poly, square, mul_const, add_const, dot_with, chunk, overwrite, backend,
             scheduler, workers, device, threads_only, dashboard, report_path, as_json):
    """Evaluate a pipeline on the encrypted records of CT into OUT (a Zarr store), on the cluster.

    Steps run in this order: --poly, --square, --mul-const, --add-const, --dot-with. Only the public
    keys go to the workers. Rerunning an interrupted command resumes it.

    \b
    Examples:
      hebatch bfv eval records.ct.zarr squares.ct.zarr --keys keys/ --square --add-const 1
      hebatch bfv eval records.ct.zarr poly.ct.zarr --keys keys/ --poly "3x^2+2x+1"
      hebatch bfv eval records.ct.zarr dots.ct.zarr --keys keys/ --dot-with weights.txt
    """
    options = pipeline_options(poly, square, mul_const, add_const, dot_with)
    kind_of(out_path, "OUT")
    read_params(key_dir)
    with job_cluster(scheduler, workers, device, threads_only, dashboard, report_path) as client:
        summary = evaluate_store(ct_path, out_path, key_dir, options, chunk=chunk, backend=backend,
                                 overwrite=overwrite)
        summary["workers"] = worker_count(client)
    report(summary, as_json, "hebatch bfv eval")


@bfv_group.command("decrypt")
@click.argument("ct_path", metavar="CT", type=click.Path())
@click.argument("out_path", metavar="OUT", type=click.Path())
@keys_option
@click.option("--overwrite", is_flag=True, help="replace OUT")
@backend_option
@json_option
def decrypt(ct_path, out_path, key_dir, overwrite, backend, as_json):
    """Decrypt the ciphertexts of CT into plaintext values OUT (.npy or .zarr), here with the secret key.

    \b
    Examples:
      hebatch bfv decrypt result.ct.zarr result.npy --keys keys/
      hebatch bfv decrypt dots.ct.zarr dots.zarr --keys keys/ --json
    """
    summary, _ = decrypt_store(ct_path, out_path, key_dir, overwrite=overwrite, backend=backend)
    report(summary, as_json, "hebatch bfv decrypt")


def run_pipeline_demo(work: pathlib.Path, *, preset, records, features, max_value, options: dict, chunk, backend,
                      seed=None, key_dir=None, records_path=None) -> dict:
    """keygen (unless keys exist) -> encrypt -> eval -> decrypt in `work`, checked against plaintexts.

    Every stage is resumable: keys, the encrypted records and the result stores are kept by a rerun.
    """
    work.mkdir(parents=True, exist_ok=True)
    key_dir = pathlib.Path(key_dir or work / "keys")
    stages = {}
    if not (key_dir / "params.json").is_file():
        status(f"keygen ({preset}) -> {key_dir}")
        with Timer() as timer:
            write_keys(key_dir, preset, max(features, 1), backend)
        stages["keygen_seconds"] = timer.seconds
    params, meta = read_params(key_dir)
    if records_path is None:
        records_path = work / "records.npy"
        if not records_path.exists():
            rng = np.random.default_rng(seed)
            np.save(records_path, rng.integers(0, max_value + 1, size=(records, features), dtype=np.int64))
    values = np.load(records_path) if str(records_path).endswith(".npy") else open_batch(records_path).compute()
    status(f"encrypt {values.shape[0]} records of {values.shape[1]} values")
    enc = encrypt_dataset(records_path, work / "records.ct.zarr", key_dir, chunk=chunk, backend=backend)
    status(f"eval {', '.join(Pipeline(features=values.shape[1], **options).describe())} on the cluster")
    ev = evaluate_store(work / "records.ct.zarr", work / "result.ct.zarr", key_dir, options, backend=backend)
    status("decrypt")
    dec, got = decrypt_store(work / "result.ct.zarr", work / "result.npy", key_dir, overwrite=True, backend=backend)
    expected = Pipeline(features=values.shape[1], **options).plain(values, params.t)
    mismatches = int(np.count_nonzero(np.any(got != expected, axis=1)))
    return {"preset": meta["preset"], "n": params.n, "t": params.t, "records": int(values.shape[0]),
            "features": int(values.shape[1]), "steps": ev["steps"], "encrypt_seconds": enc["seconds"],
            "eval_seconds": ev["seconds"], "decrypt_seconds": dec["seconds"],
            "chunks_encrypted": enc["chunks_written"], "chunks_evaluated": ev["chunks_written"],
            "min_noise_budget_bits": dec["min_noise_budget_bits"], "records_wrong": mismatches,
            "result": os.fspath(work / "result.npy"), **stages}


@bfv_group.command("demo")
@click.option("--preset", type=click.Choice(["n4096", "n8192", "n16384", "n32768"]), default="n4096",
              show_default=True)
@click.option("--records", type=click.IntRange(1, 1 << 20), default=32, show_default=True)
@click.option("--features", type=click.IntRange(1, 1 << 14), default=8, show_default=True, help="values per record")
@click.option("--max-value", type=click.IntRange(0), default=15, show_default=True, help="records hold 0..max-value")
@pipeline_flags
@click.option("--chunk", type=click.IntRange(1), default=8, show_default=True, help="records per chunk")
@click.option("--work-dir", type=click.Path(file_okay=False), default=None,
              help="where keys, stores and results go (default: a temporary directory)")
@click.option("--seed", type=int, default=None)
@backend_option
@cluster_options
@json_option
def demo(preset, records, features, max_value, poly, square, mul_const, add_const, dot_with, chunk, work_dir, seed,
         backend, scheduler, workers, device, threads_only, dashboard, report_path, as_json):
    """Encrypt random records, evaluate a pipeline on the cluster, decrypt, and check every value
    against the same computation on plaintexts (default pipeline: --poly "3x^2+2x+1").

    \b
    Examples:
      hebatch bfv demo
      hebatch bfv demo --records 64 --features 16 --dot-with weights.txt --preset n8192
      hebatch bfv demo --square --add-const 7 --work-dir bfv-demo/ --json
    """
    import tempfile

    if not any([poly, square, mul_const is not None, add_const is not None, dot_with]):
        poly = "3x^2+2x+1"
    options = pipeline_options(poly, square, mul_const, add_const, dot_with)
    bfv_module().Params.preset(preset)
    with tempfile.TemporaryDirectory() as scratch:
        work = pathlib.Path(work_dir or scratch)
        with job_cluster(scheduler, workers, device, threads_only, dashboard, report_path) as client:
            summary = run_pipeline_demo(work, preset=preset, records=records, features=features,
                                        max_value=max_value, options=options, chunk=chunk, backend=backend,
                                        seed=seed)
            summary["workers"] = worker_count(client)
        if not work_dir:
            summary["result"] = "(temporary directory, removed)"
    report(summary, as_json, "hebatch bfv demo")
    if summary["records_wrong"]:
        raise click.ClickException(f"{summary['records_wrong']} records decrypted to values other than the "
                                   "plaintext computation")


def analytics_job(settings: dict, out_dir, device: str) -> dict:
    """The bfv-analytics workflow: a batch of records through keygen, encrypt, eval, decrypt, checked."""
    options = pipeline_options(settings["poly"], bool(settings["square"]), settings["mul_const"],
                               settings["add_const"], settings["dot_with"])
    backend = {"cpu": "cpu", "gpu": "gpu"}.get(device, "auto")
    summary = run_pipeline_demo(pathlib.Path(out_dir), preset=settings["preset"], records=int(settings["records"]),
                                features=int(settings["features"]), max_value=int(settings["max_value"]),
                                options=options, chunk=int(settings["chunk"]), backend=backend, seed=settings["seed"],
                                records_path=settings["records_path"])
    if summary["records_wrong"]:
        raise RuntimeError(f"{summary['records_wrong']} records decrypted to values other than the plaintext "
                           "computation")
    return summary
