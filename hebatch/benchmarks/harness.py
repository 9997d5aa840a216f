"""The one harness of the benchmarks: a CUDA-event timer (and a wall-clock one for CPU runs), the
same-run references (device-to-device copy bandwidth, cuFFT complex64 of the same element count) and
the JSON writer of results.

Every time is the median of `repeats` samples taken after warm-up calls, rotating over several freshly
drawn inputs so that no cache holds the answer. Results go where --out points (a directory, or a
file ending in .json), else into the current directory; never into the package or a checkout.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import time

WARMUP = 3  # calls before timing: kernels compiled and loaded, tables built, pools warm
STREAMED = 8  # calls per sample for a throughput time (their host work overlaps the device's)


def cuda_time(fn, inputs, repeats: int, warmup: int = WARMUP, back_to_back: int = 1) -> float:
    """Median milliseconds per call of fn(input) from CUDA events around `back_to_back` consecutive
    calls (1: the latency of one call, host work included; more: the time per call of a stream of
    calls), `repeats` samples after `warmup` calls; inputs rotate."""
    import cupy as cp

    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    cp.cuda.Device().synchronize()
    times = []
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for i in range(repeats):
        start.record()
        for j in range(back_to_back):
            fn(inputs[(i * back_to_back + j) % len(inputs)])
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / back_to_back)
    return statistics.median(times)


def graph_time(fn, inputs, repeats: int, calls: int = STREAMED, warmup: int = WARMUP) -> float | None:
    """Median milliseconds per call of `calls` consecutive fn(input) calls recorded once as a CUDA graph
    (on a private stream, with a private memory pool) and replayed: the device's time alone, with no host
    work between the kernels. `repeats` replays after warm-up calls; inputs rotate. None where fn cannot be
    recorded (it waits for the device, say)."""
    import cupy as cp

    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    cp.cuda.Device().synchronize()
    pool = cp.cuda.MemoryPool()  # the graph's buffers: kept by this frame until its last replay
    stream = cp.cuda.Stream(non_blocking=True)
    try:
        with cp.cuda.using_allocator(pool.malloc), stream:
            stream.begin_capture()
            try:
                for i in range(calls):
                    fn(inputs[i % len(inputs)])
            finally:
                graph = stream.end_capture()
    except Exception:  # not recordable (it waits for the device, say): no device time
        return None
    times = []
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for i in range(repeats + 1):
        start.record(stream)
        graph.launch(stream=stream)
        end.record(stream)
        end.synchronize()
        if i:  # the first replay uploads the graph
            times.append(cp.cuda.get_elapsed_time(start, end) / calls)
    return statistics.median(times)


def host_time(fn, inputs, repeats: int, warmup: int = 1) -> float:
    """Median wall-clock milliseconds per call of fn(input) on the CPU, after `warmup` calls; inputs rotate."""
    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        fn(inputs[i % len(inputs)])
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


_REFERENCES: dict = {}


def references(elements: int, nbytes: int, repeats: int, *, rows: int = 1, back_to_back: int = STREAMED) -> dict:
    """The same-run references for a case of `elements` elements in `rows` rows and `nbytes` bytes:
    cupy.fft.fft of complex64 along the rows (cufft_ms; cufft_graph_ms: the same calls replayed as a CUDA
    graph, see graph_time) and a device-to-device copy of the same bytes (copy_ms, copy_GBps counting read +
    write), timed by cuda_time. Cached per arguments."""
    key = (elements, nbytes, rows, back_to_back)
    if key in _REFERENCES:
        return _REFERENCES[key]
    import cupy as cp

    shape = (rows, elements // rows) if rows > 1 else (elements,)
    z = [
        (cp.random.random(shape, dtype=cp.float32) + 1j * cp.random.random(shape, dtype=cp.float32)).astype(
            cp.complex64
        )
        for _ in range(2)
    ]
    fft_ms = cuda_time(lambda a: cp.fft.fft(a, axis=-1), z, repeats, back_to_back=back_to_back)
    fft_graph_ms = graph_time(lambda a: cp.fft.fft(a, axis=-1), z, repeats, calls=back_to_back)
    del z
    src = cp.random.randint(0, 2**31, size=(nbytes + 7) // 8, dtype=cp.int64).view(cp.uint64)
    dst = cp.empty_like(src)
    copy_ms = cuda_time(lambda a: dst.__setitem__(Ellipsis, a), [src], repeats, back_to_back=back_to_back)
    found = {
        "cufft_ms": fft_ms,
        "cufft_graph_ms": fft_graph_ms,
        "copy_ms": copy_ms,
        "copy_GBps": 2 * src.nbytes / copy_ms / 1e6,
    }
    src = dst = None  # the pool gets the buffers back before the case's own inputs are drawn
    cp.get_default_memory_pool().free_all_blocks()
    _REFERENCES[key] = found
    return found


def device_name() -> str:
    """The current CUDA device's name, or cpu-<machine> without CuPy or a GPU."""
    from hebatch.device import gpu_available

    if not gpu_available():
        return f"cpu-{platform.machine()}"
    import cupy as cp

    name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def versions() -> dict:
    """Versions of what the numbers depend on."""
    import importlib.metadata

    found = {"python": platform.python_version()}
    for name in ("hebatch", "numpy", "cupy"):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    if found["hebatch"] is None:
        import hebatch

        found["hebatch"] = hebatch.__version__
    if found["cupy"] is None:
        found.pop("cupy")
    return found


def add_common_args(parser: argparse.ArgumentParser, repeats: int = 25) -> None:
    """--quick, --repeats, --out: the options every benchmark takes."""
    parser.add_argument("--quick", action="store_true", help="fewer cases and repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, default=repeats, help="timed samples per case (the median is kept)")
    parser.add_argument(
        "--out",
        type=pathlib.Path,
        default=None,
        help="a directory for the JSON result, or a file ending in .json (default: the current directory)",
    )


def write_result(benchmark: str, result: dict, out=None, *, device: str | None = None) -> pathlib.Path:
    """Write one benchmark's result as JSON and print its path; the path (absolute).

    The file holds `benchmark`, `device`, `date`, `versions` (and `cupy`, as older results have it),
    then the caller's fields (sizes, repeats, timing, references, results with medians).
    Its name is <benchmark>-<device>-<date>.json inside `out` (a directory, created if needed) or
    `out` itself where it ends in .json; without `out`, the current directory.
    """
    device = device or result.get("device") or device_name()
    date = datetime.date.today().isoformat()
    found = versions()
    header = {"benchmark": benchmark, "device": device, "date": date, "versions": found}
    if "cupy" in found:
        header["cupy"] = found["cupy"]
    payload = {**header, **{k: v for k, v in result.items() if k not in header}}
    slug = device.replace("NVIDIA ", "").replace(" ", "-")
    target = pathlib.Path(out) if out is not None else pathlib.Path.cwd()
    if target.suffix != ".json":
        target = target / f"{benchmark}-{slug}-{date}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=1, default=str) + "\n")
    os.replace(tmp, target)
    target = target.resolve()
    print(f"wrote {target}", flush=True)
    return target
