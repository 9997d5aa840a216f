"""Plots of benchmark results: time against size, beside the same-run references (cuFFT of the same
element count, and the time of a device-to-device copy of the same bytes at the measured bandwidth).

    python -m hebatch.benchmarks.plot RESULT.json OUT.png      (or `hebatch bench ntt --from-json ... --plot ...`)

Needs matplotlib (`pip install 'hebatch[plot]'`). Reads the JSON the ntt, zk and bfv benchmarks write.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from collections import defaultdict

KINDS = ("ntt", "zk", "bfv")


def kind_of(result: dict, path="results") -> str:
    """Which benchmark wrote a result: its `benchmark` field, else told apart by the fields of its rows."""
    name = result.get("benchmark")
    if name in KINDS:
        return name
    rows = [r for r in result.get("results", []) if isinstance(r, dict)]
    if any("preset" in r for r in rows):
        return "bfv"
    if any("field" in r for r in rows):
        return "zk"
    if any("modulus" in r for r in rows):
        return "ntt"
    raise ValueError(
        f"{path} is not a result of the ntt, zk or bfv benchmark (no 'results' rows with "
        "modulus, field or preset): plot a JSON file that `hebatch bench ntt|zk|bfv` wrote"
    )


def _timed(rows):
    return [
        r
        for r in rows
        if isinstance(r, dict) and ("ms" in r or "per_ciphertext_ms" in r) and "error" not in r and "skipped" not in r
    ]


def series(result: dict) -> tuple[str, str, dict, dict]:
    """(x label, title, {label: [(x, ms)]} of the measured cases, {label: [(x, ms)]} of the references)."""
    kind = kind_of(result)
    rows = _timed(result.get("results", []))
    measured: dict = defaultdict(dict)
    refs: dict = defaultdict(dict)

    def add_refs(x, row, nbytes, what="same elements"):
        if row.get("cufft_ms"):
            refs[f"cuFFT complex64, {what}"].setdefault(x, row["cufft_ms"])
        if row.get("copy_GBps"):  # GB/s counting read + write: a copy of nbytes moves 2 * nbytes
            refs[f"device copy, {what.replace('elements', 'bytes')}"].setdefault(
                x, 2 * nbytes / (row["copy_GBps"] * 1e6)
            )

    if kind == "ntt":
        xlabel, title = "elements per call (n x batch)", "Batched NTT (forward, auto algorithm)"
        for r in rows:
            if r.get("direction") != "forward" or r.get("algorithm", "auto") != "auto" or r.get("check"):
                continue  # (check rows time the entry range check beside a transform, not the transform)
            x = (1 << r["log_n"]) * r.get("batch", 1)
            label = f"{r['modulus']}" + (" negacyclic" if r.get("negacyclic") else "")
            measured[label].setdefault(x, r["ms"])
            add_refs(x, r, x * (4 if r.get("dtype") == "uint32" else 8))
    elif kind == "zk":
        xlabel, title = "elements per call (n x batch)", "256-bit field NTT (forward)"
        for r in rows:
            if r.get("direction") != "forward":
                continue
            x = (1 << r["log_n"]) * r.get("batch", 1)
            measured[r["field"]].setdefault(x, r["ms"])
            add_refs(x, r, x * 32)
    else:
        xlabel, title = "ring dimension n", "BFV operations, per ciphertext (batch of 64)"
        # the library's default path: CUDA graph replay where measured, else the fused kernels
        present = {r.get("variant") for r in rows}
        variant = next((v for v in ("graphs", "fused") if v in present), None)
        if variant:
            title += f", {variant}"
        for r in rows:
            if variant and r.get("variant") != variant:
                continue
            x = r["n"]
            digits = r.get("digit_limbs", 1)
            label = r["case"] if digits == 1 else f"{r['case']}, digits of {digits} limbs"
            measured[label].setdefault(x, r.get("per_ciphertext_ms", r.get("ms")))
            # one ciphertext: 2 x limbs rows of n words, timed as one call
            add_refs(x, r, 2 * r.get("limbs", 1) * x * 8, "one ciphertext's elements, one call")
    tidy = {k: sorted(v.items()) for k, v in measured.items() if v}
    if not tidy:
        raise ValueError(f"no timed {kind} cases to plot (every row was skipped or failed)")
    return xlabel, title, tidy, {k: sorted(v.items()) for k, v in refs.items() if v}


def plot(result_path, out_path) -> pathlib.Path:
    """Draw the result at result_path into out_path (PNG); the path written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'hebatch[plot]' (or pip install matplotlib)") from None
    result_path, out_path = pathlib.Path(result_path), pathlib.Path(out_path)
    if not result_path.is_file():
        raise FileNotFoundError(
            f"--from-json {result_path} does not exist: give a JSON file that "
            "`hebatch bench ntt|zk|bfv` wrote (e.g. in benchmarks/results/)"
        )
    try:
        result = json.loads(result_path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{result_path} is not JSON ({error}): give a file that `hebatch bench` wrote") from None
    if out_path.suffix.lower() != ".png":
        raise ValueError(f"--plot {out_path}: the file name must end in .png")
    xlabel, title, measured, refs = series(result)
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for label, points in measured.items():
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o", linewidth=1.8, label=label)
    for (label, points), style in zip(refs.items(), ("--", ":")):
        xs, ys = zip(*points)
        ax.plot(xs, ys, linestyle=style, color="black" if style == "--" else "grey", linewidth=1.5, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("time per call (ms, median)")
    device = result.get("device", "?")
    ax.set_title(f"{title}\n{device}, {result.get('date', '')}", fontsize=11)
    ax.grid(True, which="major", alpha=0.35)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path)
    plt.close(fig)
    return out_path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result", type=pathlib.Path, help="a JSON result of the ntt, zk or bfv benchmark")
    parser.add_argument("out", type=pathlib.Path, help="the PNG to write")
    args = parser.parse_args(argv)
    print(f"wrote {plot(args.result, args.out)}")


if __name__ == "__main__":
    main()
