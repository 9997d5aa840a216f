"""`hebatch zk-ntt`: one zk-sized transform (2^20 .. 2^28 points) on one device or spread over workers."""

from __future__ import annotations

import time
from dataclasses import dataclass

import click
import numpy as np

import hebatch as hb

from ..backend import gpu_available
from ..distributed.worker import to_host as host_array
from ..field import MAX_LOG_N, is_prime, primitive_root
from .app import main
from .common import NAMED_MODULI, json_option, report, status

FIELD_HELP = "goldilocks | babybear | bn254 | bls12-381 | bls12-377 | a prime below 2^64"


@dataclass(frozen=True)
class ZkField:
    """A field of `zk-ntt`: its name, prime, and the argument hb.ntt takes for it."""

    name: str
    modulus: int
    argument: object  # an int for 64-bit primes; the library's field object for 256-bit ones
    words: int  # 64-bit words per element: 1 (uint64/uint32 arrays) or 4 (256-bit fields)

    @property
    def dtype(self):
        return np.uint32 if self.words == 1 and self.modulus < 2**32 else np.uint64


def resolve_field(text: str) -> ZkField:
    """--field: a named field (hb.field_by_name) or a prime below 2^64; ValueError naming the option otherwise."""
    key = text.strip().lower().replace("_", "-")
    if key in NAMED_MODULI:
        return ZkField(key, NAMED_MODULI[key], NAMED_MODULI[key], 1)
    try:
        q = int(key, 0)
    except ValueError:
        try:
            field = hb.field_by_name(key)
        except ValueError:
            raise ValueError(f"--field must be one of {FIELD_HELP}, got {text!r}") from None
        return ZkField(field.name, int(field.p), field, int(field.limbs))
    if not 2 < q < 2**64 or not is_prime(q):
        raise ValueError(f"--field {q} must be a prime below 2^64")
    return ZkField(str(q), q, q, 1)


def random_elements(field: ZkField, n: int, rng) -> np.ndarray:
    """n uniformly random field elements as hb.ntt takes them: (n,) words, or (n, limbs) for wide fields."""
    if field.words == 1:
        return rng.integers(0, field.modulus, size=n, dtype=np.uint64).astype(field.dtype)
    # Uniform words below the top word's bit length, kept where below p (rejection sampling).
    top_bits = field.modulus.bit_length() - 64 * (field.words - 1)
    p_top = np.uint64(field.modulus >> (64 * (field.words - 1)))
    out = np.empty((n, field.words), dtype=np.uint64)
    filled = 0
    while filled < n:
        words = rng.integers(0, 2**64, size=(n - filled, field.words), dtype=np.uint64, endpoint=False)
        words[:, -1] >>= np.uint64(64 - top_bits)
        keep = words[:, -1] < p_top
        ties = np.nonzero(words[:, -1] == p_top)[0]  # rare: decide these with exact integers
        keep[ties] = [to_int(words[i]) < field.modulus for i in ties]
        kept = words[keep]
        out[filled:filled + len(kept)] = kept
        filled += len(kept)
    return out


def to_int(words) -> int:
    """One 256-bit element (4 little-endian uint64 words) as a Python int."""
    return sum(int(w) << (64 * i) for i, w in enumerate(words))


def as_ints(x: np.ndarray, field: ZkField) -> list[int]:
    """The elements of a transform input or output as Python ints."""
    if field.words == 1:
        return x.tolist()
    return [int(v) for v in field.argument.from_limbs(x).reshape(-1)]


def transform_root(field: ZkField, n: int) -> int:
    """w of order n (the library's definition: g^((q-1)/n), g the field's generator)."""
    generator = getattr(field.argument, "generator", None)
    g = int(generator) if generator is not None else primitive_root(field.modulus)
    return pow(g, (field.modulus - 1) // n, field.modulus)


def horner(coefficients: list[int], point: int, q: int) -> int:
    """sum_j c[j] * point^j mod q, exactly."""
    acc = 0
    for c in reversed(coefficients):
        acc = (acc * point + c) % q
    return acc


def coset_shift(field: ZkField) -> int:
    """The default coset shift of hb.coset_ntt: the field's generator (hb.primitive_root(q) for a prime)."""
    generator = getattr(field.argument, "generator", None)
    return int(generator) if generator is not None else primitive_root(field.modulus)


def check_points(x: np.ndarray, y: np.ndarray, field: ZkField, *, inverse: bool, points: int, rng,
                 coset: bool = False) -> list[int]:
    """Indices k where y differs from exact evaluation: forward, y[k] = x(s w^k) (s = 1, or the coset
    shift); inverse, y[k] = n^-1 s^-k x(w^-k)."""
    q, n = field.modulus, x.shape[0]
    w = transform_root(field, n)
    s = coset_shift(field) if coset else 1
    if inverse:
        w = pow(w, -1, q)
    scale = pow(n, -1, q) if inverse else 1
    coefficients = as_ints(x, field)
    wrong = []
    for k in sorted({int(v) for v in rng.integers(0, n, size=points)} | {0}):
        if inverse:
            expected = horner(coefficients, pow(w, k, q), q) * scale * pow(s, -k, q) % q
        else:
            expected = horner(coefficients, s * pow(w, k, q) % q, q)
        if as_ints(y[k:k + 1], field)[0] != expected:
            wrong.append(k)
    return wrong


def _sync(a):
    if not isinstance(a, np.ndarray):
        import cupy

        cupy.cuda.get_current_stream().synchronize()


def run_transform(x, field: ZkField, inverse: bool, coset: bool = False):
    """hb.ntt (or hb.coset_ntt) of x over the field, forward or inverse."""
    if coset:
        return hb.coset_ntt(x, field.argument, inverse=inverse)
    return hb.ntt(x, field.argument, inverse=inverse)


@main.command("zk-ntt")
@click.option("--log-n", type=click.IntRange(2, MAX_LOG_N), default=20, show_default=True,
              help="log2 of the transform size (zk sizes: 20..28)")
@click.option("--field", "field_name", default="goldilocks", show_default=True, metavar="FIELD", help=FIELD_HELP)
@click.option("--inverse", is_flag=True, help="inverse transform (scaled by n^-1)")
@click.option("--coset", is_flag=True, help="evaluate on the coset g*H (hb.coset_ntt; g the field's generator)")
@click.option("--verify", is_flag=True, help="check random points against exact Horner evaluation, and the round trip")
@click.option("--points", type=click.IntRange(1, 64), default=3, show_default=True, help="points checked by --verify")
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="spread the transform over K workers of a local cluster (4-step, dist.ntt_large)")
@click.option("--scheduler", metavar="ADDR", default=None, help="spread it over the workers of this scheduler")
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True)
@click.option("--repeats", type=click.IntRange(1, 100), default=1, show_default=True,
              help="timed runs (the median is reported); a warm-up run comes first on GPUs and when > 1")
@click.option("--seed", type=int, default=None, help="seed of the random input (default: fresh)")
@json_option
def zk_ntt(log_n, field_name, inverse, coset, verify, points, workers, scheduler, device, repeats, seed, as_json):
    """One NTT (or coset NTT) of 2^LOG_N random field elements, timed; on one device or over workers.

    \b
    Examples:
      hebatch zk-ntt --log-n 20 --field goldilocks --verify
      hebatch zk-ntt --log-n 24 --field babybear --inverse --device gpu --repeats 5
      hebatch zk-ntt --log-n 22 --field 18446744069414584321 --workers 2 --json
      hebatch zk-ntt --log-n 20 --field bn254 --verify
      hebatch zk-ntt --log-n 20 --field bls12-381 --coset --verify
    """
    field = resolve_field(field_name)
    use_gpu = device != "cpu" and gpu_available()
    if device == "gpu" and not use_gpu:
        raise RuntimeError("--device gpu: no CUDA GPU with CuPy found")
    spread = workers is not None or scheduler is not None
    n = 1 << log_n
    if (field.modulus - 1) % n:
        raise ValueError(f"--log-n {log_n}: the field {field.name} has no root of unity of order 2^{log_n}")
    if spread and coset:
        raise ValueError("--coset runs on one device; it cannot be combined with --workers or --scheduler")
    if spread and n < 16:
        raise ValueError(f"--log-n {log_n}: a transform spread over workers needs at least 2^4 points")
    rng = np.random.default_rng(seed)
    x = random_elements(field, n, rng)
    summary = {"field": field.name, "log_n": log_n, "n": n, "inverse": inverse, "coset": coset,
               "device": "gpu" if use_gpu else "cpu"}
    if spread:
        y, seconds, extra = _run_spread(x, field, inverse, workers, scheduler, device, repeats)
        summary.update(extra)
    else:
        y, seconds = time_transform(x, field, inverse, use_gpu, repeats, coset)
        summary["mode"] = "single device"
    summary["seconds"] = seconds
    summary["throughput_GBps"] = x.nbytes / seconds / 1e9 if seconds > 0 else 0.0
    if verify:
        start = time.perf_counter()
        status(f"verifying {points} points by exact Horner evaluation and the round trip ...")
        wrong = check_points(x, y, field, inverse=inverse, points=points, rng=rng, coset=coset)
        back = host_array(run_transform(y, field, not inverse, coset))
        round_trip = bool(np.array_equal(back, x))
        summary.update({"points_checked": points, "points_wrong": len(wrong), "round_trip_exact": round_trip,
                        "verify_seconds": time.perf_counter() - start})
        report(summary, as_json, "hebatch zk-ntt")
        if wrong or not round_trip:
            raise click.ClickException(f"verification failed: {len(wrong)} wrong points, round trip "
                                       f"{'exact' if round_trip else 'mismatch'}")
        return
    report(summary, as_json, "hebatch zk-ntt")


def time_transform(x, field, inverse, use_gpu, repeats, coset=False):
    """(host result, median seconds) of hb.ntt on this machine's CPU or GPU, after one warm-up."""
    if use_gpu:
        import cupy

        data = cupy.asarray(x)
    else:
        data = x
    if use_gpu or repeats > 1:  # warm-up: twiddle tables (and kernels) built once, outside the timing
        _sync(run_transform(data, field, inverse, coset))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        y = run_transform(data, field, inverse, coset)
        _sync(y)
        times.append(time.perf_counter() - start)
    return host_array(y), float(np.median(times))


def _run_spread(x, field, inverse, workers, scheduler, device, repeats):
    """(host result, median seconds, details) of dist.ntt_large over the workers of a cluster."""
    from .. import distributed as dist
    from .clusteropts import local_cluster

    options = {"address": scheduler} if scheduler else {"device": device, "n_workers": workers,
                                                         "dashboard_address": None}
    with local_cluster(**options) as client:
        count = workers or len(client.scheduler_info(n_workers=-1)["workers"])
        y = dist.ntt_large(x, field.argument, workers=count, inverse=inverse, device=device)  # warm-up
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            y = dist.ntt_large(x, field.argument, workers=count, inverse=inverse, device=device)
            times.append(time.perf_counter() - start)
    return host_array(y), float(np.median(times)), {"mode": "spread over workers (4-step)", "workers": count}
