"""`hebatch bfv keygen|encrypt|eval|decrypt|demo`: BFV over datasets of records, keys in files.

The jobs themselves are hebatch.jobs.bfv; these commands parse options, run one and print its summary.
"""

from __future__ import annotations

import click

from ..jobs import bfv as jobs
from ..jobs.bfv import PRESETS
from .app import main
from .clusteropts import cluster_options, cluster_spec, device_option
from .common import CONTEXT, CleanErrorGroup, json_option, report, report_checked

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
    return click.option(
        "--keys",
        "key_dir",
        required=True,
        type=click.Path(file_okay=False),
        help="key directory (from `hebatch bfv keygen`)",
    )(f)


def pipeline_flags(f):
    options = [
        click.option("--poly", default=None, metavar="P", help='elementwise polynomial, e.g. "3x^2+2x+1"'),
        click.option("--square", is_flag=True, help="square every value (ciphertext x ciphertext)"),
        click.option("--mul-const", type=int, default=None, metavar="C", help="multiply every value by C"),
        click.option("--add-const", type=int, default=None, metavar="C", help="add C to every value"),
        click.option(
            "--dot-with",
            type=click.Path(exists=True, dir_okay=False),
            default=None,
            metavar="FILE",
            help="dot product of each record with these weights (.npy or text), by rotations",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@bfv_group.command("keygen")
@keys_option
@click.option(
    "--preset",
    type=click.Choice(PRESETS),
    default="n8192",
    show_default=True,
    help="parameters (ring degree n; t = 65537; 128-bit security)",
)
@click.option(
    "--max-features",
    type=click.IntRange(1),
    default=64,
    show_default=True,
    help="longest record whose dot product the Galois keys allow",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="if --keys is not empty, move it aside (to KEYS.old-<UTC time>, never deleted) and generate new keys",
)
@click.option(
    "--digit-limbs",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="limbs of q per key-switching digit: fewer digits (smaller keys, faster relinearization and rotation) "
    "for more key-switching noise (bfv.Params)",
)
@device_option("where keys are generated: the GPU where one is visible (auto), the GPU, or the CPU")
@json_option
def keygen(key_dir, preset, max_features, overwrite, digit_limbs, device, as_json):
    """Generate BFV keys into a new or empty directory (mode 700): params.json, secret.key (mode 600),
    public, relin and galois keys. An existing key set is never replaced without --overwrite.

    \b
    Examples:
      hebatch bfv keygen --keys keys/
      hebatch bfv keygen --keys keys4k/ --preset n4096 --max-features 8 --json
    """
    summary = jobs.keygen(key_dir, preset, max_features, device, overwrite=overwrite, digit_limbs=digit_limbs)
    report(summary, as_json, "hebatch bfv keygen")


@bfv_group.command("encrypt")
@click.argument("in_path", metavar="IN", type=click.Path())
@click.argument("ct_path", metavar="CT", type=click.Path())
@keys_option
@click.option("--chunk", type=click.IntRange(1), default=None, help="records per chunk (default 16)")
@click.option("--overwrite", is_flag=True, help="replace CT instead of resuming it")
@cluster_options
@json_option
def encrypt(in_path, ct_path, key_dir, chunk, overwrite, as_json, **options):
    """Encrypt a dataset IN (.npy or .zarr, (records, features) ints mod t) into a Zarr store CT.

    Each record becomes one ciphertext (its values in the first slots). Runs on the cluster chunk by
    chunk; rerunning an interrupted command resumes it.

    \b
    Examples:
      hebatch bfv encrypt records.npy records.ct.zarr --keys keys/
      hebatch bfv encrypt records.zarr records.ct.zarr --keys keys/ --chunk 64 --scheduler tcp://10.0.0.5:8786
    """
    summary = jobs.encrypt(in_path, ct_path, key_dir, chunk=chunk, overwrite=overwrite, cluster=cluster_spec(options))
    report(summary, as_json, "hebatch bfv encrypt")


@bfv_group.command("eval")
@click.argument("ct_path", metavar="CT", type=click.Path())
@click.argument("out_path", metavar="OUT", type=click.Path())
@keys_option
@pipeline_flags
@click.option("--chunk", type=click.IntRange(1), default=None, help="ciphertexts per task (default: the store's)")
@click.option("--overwrite", is_flag=True, help="replace OUT instead of resuming it")
@cluster_options
@json_option
def evaluate(
    ct_path, out_path, key_dir, poly, square, mul_const, add_const, dot_with, chunk, overwrite, as_json, **options
):
    """Evaluate a pipeline on the encrypted records of CT into OUT (a Zarr store), on the cluster.

    Steps run in this order: --poly, --square, --mul-const, --add-const, --dot-with. Only the public
    keys go to the workers. Rerunning an interrupted command resumes it.

    \b
    Examples:
      hebatch bfv eval records.ct.zarr squares.ct.zarr --keys keys/ --square --add-const 1
      hebatch bfv eval records.ct.zarr poly.ct.zarr --keys keys/ --poly "3x^2+2x+1"
      hebatch bfv eval records.ct.zarr dots.ct.zarr --keys keys/ --dot-with weights.txt
    """
    steps = jobs.pipeline_options(poly, square, mul_const, add_const, dot_with)
    summary = jobs.evaluate(
        ct_path, out_path, key_dir, steps, chunk=chunk, overwrite=overwrite, cluster=cluster_spec(options)
    )
    report(summary, as_json, "hebatch bfv eval")


@bfv_group.command("decrypt")
@click.argument("ct_path", metavar="CT", type=click.Path())
@click.argument("out_path", metavar="OUT", type=click.Path())
@keys_option
@click.option("--overwrite", is_flag=True, help="replace OUT")
@device_option("where decryption runs: the GPU where one is visible (auto), the GPU, or the CPU")
@json_option
def decrypt(ct_path, out_path, key_dir, overwrite, device, as_json):
    """Decrypt the ciphertexts of CT into plaintext values OUT (.npy or .zarr), here with the secret key.

    \b
    Examples:
      hebatch bfv decrypt result.ct.zarr result.npy --keys keys/
      hebatch bfv decrypt dots.ct.zarr dots.zarr --keys keys/ --json
    """
    summary = jobs.decrypt(ct_path, out_path, key_dir, overwrite=overwrite, device=device)
    report(summary, as_json, "hebatch bfv decrypt")


@bfv_group.command("demo")
@click.option("--preset", type=click.Choice(PRESETS), default="n4096", show_default=True)
@click.option("--records", type=click.IntRange(1, 1 << 20), default=32, show_default=True)
@click.option("--features", type=click.IntRange(1, 1 << 14), default=8, show_default=True, help="values per record")
@click.option("--max-value", type=click.IntRange(0), default=15, show_default=True, help="records hold 0..max-value")
@pipeline_flags
@click.option("--chunk", type=click.IntRange(1), default=8, show_default=True, help="records per chunk")
@click.option(
    "--work-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="where keys, stores and results go (default: a temporary directory)",
)
@click.option("--seed", type=int, default=None)
@cluster_options
@json_option
def demo(
    preset,
    records,
    features,
    max_value,
    poly,
    square,
    mul_const,
    add_const,
    dot_with,
    chunk,
    work_dir,
    seed,
    as_json,
    **options,
):
    """Encrypt random records, evaluate a pipeline on the cluster, decrypt, and check every value
    against the same computation on plaintexts (default pipeline: --poly "3x^2+2x+1").

    \b
    Examples:
      hebatch bfv demo
      hebatch bfv demo --records 64 --features 16 --dot-with weights.txt --preset n8192
      hebatch bfv demo --square --add-const 7 --work-dir bfv-demo/ --json
    """
    if not any([poly, square, mul_const is not None, add_const is not None, dot_with]):
        poly = "3x^2+2x+1"
    steps = jobs.pipeline_options(poly, square, mul_const, add_const, dot_with)
    report_checked(
        jobs.demo,
        "hebatch bfv demo",
        as_json,
        preset=preset,
        records=records,
        features=features,
        max_value=max_value,
        options=steps,
        chunk=chunk,
        work_dir=work_dir,
        seed=seed,
        cluster=cluster_spec(options),
    )
