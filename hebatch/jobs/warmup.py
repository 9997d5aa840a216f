"""`hebatch warmup`: compile the common GPU kernels once into CuPy's on-disk cache (or check the prebuilt
cubin), so that no later run, and no task on a worker, pays for a compile."""

from __future__ import annotations

from ..device import gpu_available, resolve_device
from .info import kernel_cache
from .report import progress_bar, status


def warmup(*, device="auto", log_ns=None) -> dict:
    """Warm the kernels of this machine's GPU (hebatch.ntt.warmup.warm_kernels) with a progress bar;
    a summary of the kernel cache before and after. Without a GPU it says so and does nothing."""
    where = resolve_device(device, "--device")
    before = kernel_cache()
    if where == "cpu" or not gpu_available():
        status(
            "no GPU here: the CPU backend compiles nothing, so there is nothing to warm up "
            "(run `hebatch warmup` on each GPU machine)"
        )
        return {
            "device": "cpu",
            "cases": 0,
            "kernel_cache": before["kernel_cache"],
            "prebuilt_cubin": before["prebuilt_cubin"],
        }
    from ..ntt.warmup import warm_kernels

    with progress_bar("warming kernels") as progress:
        task = progress.add_task("warmup", total=None)
        done = warm_kernels(log_ns=log_ns, progress=lambda k, total: progress.update(task, completed=k, total=total))
    after = kernel_cache()
    return {
        **done,
        "kernel_cache": after["kernel_cache"],
        "kernel_cache_files_before": before["kernel_cache_files"],
        "kernel_cache_files": after["kernel_cache_files"],
        "kernel_cache_MB": after["kernel_cache_MB"],
        "prebuilt_cubin": after["prebuilt_cubin"],
    }
