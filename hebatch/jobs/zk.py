"""zk-sized transforms (2^20 .. 2^28 points) over hebatch.field's prime fields: one timed transform on
this machine's device or spread over Dask workers, its exact checks, and sweeps over sizes."""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

import hebatch as hb

from ..device import array_module, gpu_available, resolve_device, to_host
from ..field import MAX_LOG_N, NAMED_FIELDS, PrimeField, is_prime, primitive_root, two_adicity
from .report import progress_bar, status

EVALUATE_BLOCK = 1 << 24  # elements per step of `evaluate`

FIELD_HELP = "goldilocks | babybear | bn254 | bls12-381 | bls12-377 | a prime below 2^64"


def resolve_field(text: str, name: str = "--field") -> PrimeField:
    """A named field (hb.field_by_name) or a prime below 2^64 as a one-word PrimeField; ValueError naming
    the option otherwise."""
    key = str(text).strip().lower().replace("_", "-")
    try:
        q = int(key, 0)
    except ValueError:
        try:
            return hb.field_by_name(key)
        except ValueError:
            raise ValueError(f"{name} must be one of {FIELD_HELP}, got {text!r}") from None
    if not 2 < q < 2**64 or not is_prime(q):
        raise ValueError(f"{name} {q} must be an odd prime below 2^64")
    for known in NAMED_FIELDS.values():  # a named field given by its prime keeps its name and generator
        if known.p == q:
            return known
    return PrimeField(str(q), q, primitive_root(q), two_adicity(q), limbs=1)


def argument(field: PrimeField):
    """What hb.ntt takes for the field: the prime for one-word fields, the field itself for wide ones."""
    return field.p if field.limbs == 1 else field


def element_dtype(field: PrimeField):
    return np.uint32 if field.limbs == 1 and field.p < 2**32 else np.uint64


def random_elements(field: PrimeField, n: int, rng) -> np.ndarray:
    """n uniformly random field elements as hb.ntt takes them: (n,) words, or (n, limbs) for wide fields."""
    if field.limbs == 1:
        return rng.integers(0, field.p, size=n, dtype=np.uint64).astype(element_dtype(field))
    # Uniform words below the top word's bit length, kept where below p (rejection sampling).
    top_bits = field.p.bit_length() - 64 * (field.limbs - 1)
    p_top = np.uint64(field.p >> (64 * (field.limbs - 1)))
    out = np.empty((n, field.limbs), dtype=np.uint64)
    filled = 0
    while filled < n:
        words = rng.integers(0, 2**64, size=(n - filled, field.limbs), dtype=np.uint64, endpoint=False)
        words[:, -1] >>= np.uint64(64 - top_bits)
        keep = words[:, -1] < p_top
        ties = np.nonzero(words[:, -1] == p_top)[0]  # rare: decide these with exact integers
        keep[ties] = [field.from_limbs(words[i]) < field.p for i in ties]
        kept = words[keep]
        out[filled : filled + len(kept)] = kept
        filled += len(kept)
    return out


def as_ints(x: np.ndarray, field: PrimeField) -> list[int]:
    """The elements of a transform input or output as Python ints."""
    if field.limbs == 1:
        return [int(v) for v in np.asarray(x).reshape(-1)]
    return [int(v) for v in np.asarray(field.from_limbs(x), dtype=object).reshape(-1)]


def horner(coefficients: list[int], point: int, q: int) -> int:
    """sum_j c[j] * point^j mod q, exactly."""
    acc = 0
    for c in reversed(coefficients):
        acc = (acc * point + c) % q
    return acc


def evaluate(a, field: PrimeField, z: int) -> int:
    """a(z) = sum_j a[j] z^j mod p, computed where a lives (GPU or CPU) at the cost of about one pass
    over a: the powers z^j come from the backend's twiddle-grid kernels (never a table of n powers),
    and the sums are exact in uint64 by splitting each word into 32-bit halves (2^24 terms per block)."""
    from ..ntt.blocks import field_twiddle_grid, twiddle_grid

    xp = array_module(a)
    n = a.shape[0]
    limbs = field.limbs
    low = high = 0
    for start in range(0, n, EVALUATE_BLOCK):  # blocks bound the temporaries (2^28 wide elements: 8 GiB)
        block = a[start : start + EVALUATE_BLOCK]
        m = block.shape[0]
        if limbs == 1:  # block[j] * z^(start + j)
            scaled = twiddle_grid(block.reshape(1, m).astype(np.uint64, copy=False), field.p, z, 1, start)
        else:
            scaled = field_twiddle_grid(xp.ascontiguousarray(block).reshape(1, m, limbs), field, z, 1, start)
        scaled = scaled.reshape(m, limbs)
        low += to_host(xp.sum(scaled & np.uint64(0xFFFFFFFF), axis=0, dtype=np.uint64)).astype(object)
        high += to_host(xp.sum(scaled >> np.uint64(32), axis=0, dtype=np.uint64)).astype(object)
    total = sum((int(lo) + (int(hi) << 32)) << (64 * limb) for limb, (lo, hi) in enumerate(zip(low, high)))
    return total % field.p


def element(y, k: int, field: PrimeField) -> int:
    return as_ints(to_host(y[k : k + 1]), field)[0]


def check_points(
    x, y, field: PrimeField, *, inverse: bool, points: int, rng, coset: bool = False, advance=None
) -> list[int]:
    """Indices k where y differs from exact evaluation: forward, y[k] = x(s w^k) (s = 1, or the coset
    shift, the field's generator); inverse, x[k] = y(s w^k) (x is the forward transform of y).
    k = 0 is always checked. Each point is one evaluation on the arrays' device (see `evaluate`).
    advance: called after each point (progress)."""
    q, n = field.p, x.shape[0]
    w = field.root_of_unity(n)
    s = field.generator if coset else 1
    coefficients, values = (y, x) if inverse else (x, y)
    if array_module(coefficients) is not array_module(values):
        coefficients = array_module(values).asarray(coefficients)
    wrong = []
    for k in sorted({int(v) for v in rng.integers(0, n, size=points)} | {0}):
        if element(values, k, field) != evaluate(coefficients, field, s * pow(w, k, q) % q):
            wrong.append(k)
        if advance is not None:
            advance()
    return wrong


def run_transform(x, field: PrimeField, inverse: bool, coset: bool = False):
    """hb.ntt (or hb.coset_ntt) of x over the field, forward or inverse."""
    if coset:
        return hb.coset_ntt(x, argument(field), inverse=inverse)
    return hb.ntt(x, argument(field), inverse=inverse)


def _sync(a) -> None:
    if not isinstance(a, np.ndarray):
        import cupy

        cupy.cuda.get_current_stream().synchronize()


def _no_steps(description: str) -> None:
    """The `step` of work that shows no progress (on a worker)."""


@contextmanager
def stepper(total: int):
    """A progress bar (stderr, gone when done) over the `total` stages of one long job: yields
    step(description), called as each stage starts; the elapsed time keeps running within a stage."""
    with progress_bar("{task.description}", spinner=True) as progress:
        task = progress.add_task("", total=total)
        started = [False]

        def step(description: str) -> None:
            progress.update(task, advance=1 if started[0] else 0, description=description)
            started[0] = True

        yield step
        progress.update(task, completed=total)


def transform_steps(use_gpu: bool, repeats: int) -> int:
    """How many stages time_transform reports: the copy to the GPU, the warm-up, each timed run."""
    return int(use_gpu) + int(use_gpu or repeats > 1) + repeats


def time_transform(
    x, field: PrimeField, inverse: bool, use_gpu: bool, repeats: int, coset: bool = False, step=_no_steps
):
    """(result, median seconds) of the transform on this machine's CPU or GPU (wall clock around a
    synchronised call: the time a caller waits), after one warm-up on GPUs and when repeats > 1. The
    result stays on the device it was computed on (verification runs there too).
    step(description): called as each stage starts (progress; see `stepper`, `transform_steps`)."""
    data = x
    if use_gpu:
        import cupy

        step(f"copy {x.nbytes / 2**20:.0f} MiB to the GPU")
        data = cupy.asarray(x)
        _sync(data)
    if use_gpu or repeats > 1:  # warm-up: twiddle tables (and kernels) built once, outside the timing
        step("warm-up transform (tables, kernels)")
        _sync(run_transform(data, field, inverse, coset))
    times = []
    for i in range(repeats):
        step(f"transform {i + 1}/{repeats}")
        start = time.perf_counter()
        y = run_transform(data, field, inverse, coset)
        _sync(y)
        times.append(time.perf_counter() - start)
    return y, float(np.median(times))


def check_zk_args(field: PrimeField, log_n: int, *, coset=False, spread=False, name="--log-n") -> None:
    """The checks of one zk transform that need no data (run before any cluster starts)."""
    if not isinstance(log_n, int) or isinstance(log_n, bool) or not 1 <= log_n <= MAX_LOG_N:
        raise ValueError(f"{name} must be an int in 1..{MAX_LOG_N}, got {log_n!r}")
    if log_n > field.two_adicity:
        raise ValueError(
            f"{name} {log_n}: the field {field.name} has no root of unity of order 2^{log_n} "
            f"(at most 2^{field.two_adicity}): use {name} {field.two_adicity} or less, or a field "
            "of larger two-adicity (goldilocks: 2^32, bn254: 2^28)"
        )
    if spread and coset:
        raise ValueError(
            "--coset runs on one device; it cannot be combined with --workers or --scheduler: drop "
            "--coset, or drop --workers/--scheduler"
        )
    if spread and log_n < 4:
        raise ValueError(
            f"{name} {log_n}: a transform spread over workers needs at least 2^4 points: use {name} 4 "
            "or more, or run it on one device"
        )


def verify(x, y, field: PrimeField, *, inverse: bool, points: int, rng, coset: bool = False) -> dict:
    """Exact checks of y = transform(x), on y's device, at the cost of about `points` + 2 transforms:

    - `points` random indices (and k = 0) against the polynomial's evaluation there (`check_points`):
      these pin down the map itself (root, scaling, order, coset shift);
    - the round trip: the inverse transform of y equals x element for element. The inverse is a
      bijection, so any wrong element of y (one is enough) changes the round trip's result: a wrong
      output never passes.
    """
    start = time.perf_counter()
    xp = array_module(y)
    x_here = xp.asarray(x)
    with progress_bar("verify", unit="checks") as progress:
        task = progress.add_task("verify", total=points + 2)
        wrong = check_points(
            x_here,
            y,
            field,
            inverse=inverse,
            points=points,
            rng=rng,
            coset=coset,
            advance=lambda: progress.advance(task),
        )
        back = run_transform(y, field, not inverse, coset)
        exact = bool(xp.array_equal(back, x_here))
        progress.advance(task)
    return {
        "points_checked": points,
        "points_wrong": len(wrong),
        "round_trip_exact": exact,
        "verify_seconds": time.perf_counter() - start,
    }


def zk_ntt(
    field_name="goldilocks",
    log_n=20,
    *,
    inverse=False,
    coset=False,
    verify_points=0,
    workers=None,
    scheduler=None,
    device="auto",
    repeats=1,
    seed=None,
) -> dict:
    """One timed NTT (or coset NTT) of 2^log_n random elements, on this machine's device or spread over
    the workers of a cluster (4-step, dist.ntt_large); with verify_points > 0, checked exactly.

    Raises ArithmeticError when the verification finds a wrong value (the summary is in its args[1]).
    """
    field = resolve_field(field_name)
    spread = workers is not None or scheduler is not None
    check_zk_args(field, log_n, coset=coset, spread=spread)
    where = resolve_device(device, "--device")
    n = 1 << log_n
    rng = np.random.default_rng(seed)
    summary = {"field": field.name, "log_n": log_n, "n": n, "inverse": inverse, "coset": coset, "device": where}
    status(
        f"transform of 2^{log_n} over {field.name} on the {where.upper()}"
        + (" spread over workers" if spread else "")
        + " ..."
    )
    stages = 1 + (2 + repeats if spread else transform_steps(where == "gpu", repeats))
    with stepper(stages) as step:
        step(f"random input: 2^{log_n} elements")
        x = random_elements(field, n, rng)
        if spread:
            y, seconds, extra = _time_spread(x, field, inverse, workers, scheduler, device, repeats, step)
            summary.update(extra)
        else:
            y, seconds = time_transform(x, field, inverse, where == "gpu", repeats, coset, step)
            summary["mode"] = "single device"
    summary["seconds"] = seconds
    summary["throughput_GBps"] = x.nbytes / seconds / 1e9 if seconds > 0 else 0.0
    if verify_points:
        if where == "gpu" and isinstance(y, np.ndarray):  # the spread result came back to the host
            import cupy

            y = cupy.asarray(y)
        status(
            f"verifying on the {summary['device'].upper()}: {verify_points} random points by exact "
            "evaluation, and the round trip ..."
        )
        summary.update(verify(x, y, field, inverse=inverse, points=verify_points, rng=rng, coset=coset))
        if summary["points_wrong"] or not summary["round_trip_exact"]:
            raise ArithmeticError(
                f"verification failed: {summary['points_wrong']} wrong points, round trip "
                f"{'exact' if summary['round_trip_exact'] else 'mismatch'}; rerun with --device cpu "
                "to compare, and report it with the summary above",
                summary,
            )
    return summary


def _time_spread(x, field, inverse, workers, scheduler, device, repeats, step=_no_steps):
    """(host result, median seconds, details) of dist.ntt_large over the workers of a cluster;
    step(description) as each of its 2 + repeats stages starts."""
    from .. import distributed as dist
    from .cluster import connected, local_cluster

    step(f"connect to {scheduler}" if scheduler else "start a local cluster")
    if scheduler:
        cluster = connected(scheduler)
    else:
        cluster = local_cluster(device=device, n_workers=workers, dashboard_address=None)
    with cluster as client:
        count = workers or len(client.scheduler_info(n_workers=-1)["workers"])
        step(f"send {x.nbytes / 2**20:.0f} MiB to {count} workers and warm up")
        y = dist.ntt_large(x, argument(field), workers=count, inverse=inverse, device=device)  # warm-up
        times = []
        for i in range(repeats):
            step(f"transform {i + 1}/{repeats} over {count} worker{'s' if count > 1 else ''}")
            start = time.perf_counter()
            y = dist.ntt_large(x, argument(field), workers=count, inverse=inverse, device=device)
            times.append(time.perf_counter() - start)
    return to_host(y), float(np.median(times)), {"mode": "spread over workers (4-step)", "workers": count}


# -- sweeps over sizes (the zk-ntt workflow) -------------------------------------------------------------


def zk_case(field_name: str, log_n: int, inverse: bool, points: int, seed, device: str, coset: bool = False) -> dict:
    """One timed transform of 2^log_n random elements with its exact checks (runs on a worker)."""
    field = resolve_field(field_name)
    rng = np.random.default_rng(seed)
    x = random_elements(field, 1 << log_n, rng)
    use_gpu = device != "cpu" and gpu_available()
    if device == "gpu" and not use_gpu:
        raise RuntimeError("cluster.device = 'gpu' but the worker sees no CUDA GPU with CuPy")
    y, seconds = time_transform(x, field, inverse, use_gpu, 1, coset)  # the same timing as `hebatch zk-ntt`
    return case_record(x, y, field, log_n, inverse, points, rng, seconds, "gpu" if use_gpu else "cpu", coset)


def case_record(x, y, field, log_n, inverse, points, rng, seconds, where, coset=False) -> dict:
    """One size's result record (results.json of the zk-ntt workflow)."""
    checks = verify(x, y, field, inverse=inverse, points=points, rng=rng, coset=coset) if points else {}
    return {
        "log_n": log_n,
        "field": field.name,
        "inverse": inverse,
        "coset": coset,
        "seconds": seconds,
        "device": where,
        "GBps": x.nbytes / seconds / 1e9 if seconds > 0 else 0.0,
        "points_checked": points,
        "points_wrong": checks.get("points_wrong", 0),
        "round_trip_exact": checks.get("round_trip_exact"),
    }


def spread_case(field, log_n, inverse, points, seed, device, workers) -> dict:
    """One size spread over `workers` workers of the active cluster (dist.ntt_large), checked here."""
    from .. import distributed as dist

    rng = np.random.default_rng(seed)
    x = random_elements(field, 1 << log_n, rng)
    start = time.perf_counter()
    y = to_host(dist.ntt_large(x, argument(field), workers=workers, inverse=inverse, device=device))
    seconds = time.perf_counter() - start
    if points and device != "cpu" and gpu_available():  # the checks run on this machine's GPU, not its CPU
        import cupy

        y = cupy.asarray(y)
    return case_record(x, y, field, log_n, inverse, points, rng, seconds, f"{workers} workers")
