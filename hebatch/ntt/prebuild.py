"""Ahead-of-time compilation of the GPU kernels with nvcc, for clusters that should not compile on
every worker: `python -m hebatch.ntt.prebuild OUT.cubin [--arch sm_90] [--max-log-n 28]` writes
a cubin and OUT.cubin.json (name expression -> symbol). Point HEBATCH_KERNEL_CUBIN at the cubin and
the backend loads kernels from it; anything missing from it is compiled at run time by NVRTC.
"""

from __future__ import annotations

import argparse
import itertools
import json
import pathlib
import re
import subprocess
import tempfile

from ..backend import arith_name, define_options, kernel_dir, source_digest
from ..field import BABYBEAR, GOLDILOCKS, default_root, ntt_primes
from .launch import transform_launches
from .plan import make_plan
from .recipes import (
    SMALL_SPLIT_RADIX_LOG,
    few_blocks_lanes,
    paired_last_stage,
    post_one_table,
    small_batch_radix,
    small_batch_split,
)

ARITHS = ("Mod60", "Mod64", "Goldilocks", "Mod32")


def kernel_names(max_log_n: int = 28, batch_rows: tuple[int, ...] = (1, 4096)) -> list[str]:
    """Every kernel name expression the recipes launch, for 60-bit (Mod60), 62-bit (Mod64), Goldilocks and
    32-bit moduli."""
    names = {f"pointwise_mul<{a}>" for a in ARITHS}
    names |= {f"{k}<{a}>" for k in ("twiddle_grid", "merge_table") for a in ARITHS if a != "Mod32"}
    wide = tuple((ntt_primes(bits, 2**20, 1)[0], 64) for bits in (60, 62))
    for q, word in (*wide, (GOLDILOCKS, 64), (BABYBEAR, 32)):
        for log_n in range(1, max_log_n + 1):
            n = 1 << log_n
            for nega in (False, True):
                if (q - 1) % (2 * n if nega else n):
                    continue
                few_rows = small_batch_split(log_n, 1, word // 8)
                few_radix = SMALL_SPLIT_RADIX_LOG if small_batch_radix(log_n, 1, word // 8) else None
                choices = {("4step", None, None), ("radix2", None, None), ("radix2", few_rows, None)}
                choices.add(("radix2", few_rows, few_radix))
                # merges of 64-bit words may read their last pass's twiddles in its order (ordered_last_pass)
                orders = (False, True) if word == 64 else (False,)
                # batches of merge inverses may take their post factor from one table (post_one_table), and
                # merges of few rows fewer columns per block (few_blocks_lanes)
                posts = (False, True) if post_one_table(log_n, nega) else (False,)
                lanes = {few_blocks_lanes(log_n, rows, word // 8) for rows in batch_rows}
                # ordered last passes of one large row per limb read half of the last two stages (paired_last_stage)
                pairs = (False, True) if paired_last_stage(log_n, 1) else (False,)
                options = itertools.product(choices, orders, posts, lanes, pairs)
                for (algorithm, split, radix), ordered, post, lane, paired in options:
                    if ((ordered or post or lane is not None) and algorithm != "radix2") or (paired and not ordered):
                        continue
                    root = default_root(q, n, nega)
                    plan = make_plan(n, (q,), (root,), nega, algorithm, split, radix, ordered, post, lane, paired)
                    for inverse in (False, True):
                        modes = [dict(tw_mode=t, post_mode=p) for t, p in plan.gpu_pass_modes(inverse, word)]
                        for fuse in (False, True) if inverse else (False,):
                            for rows in batch_rows:
                                for ln in transform_launches(plan, modes, rows, word, arith_name([q], word), fuse):
                                    names.add(ln.name)
    return sorted(names)


def _instantiations(names: list[str]) -> str:
    """Source instantiating every kernel name expression: taking a kernel's address makes nvcc compile it,
    so no kernel's parameter list is written out here."""
    return "void* const hebatch_prebuilt_kernels[] = {\n" + "".join(f"    (void*)&{n},\n" for n in names) + "};\n"


def name_of_symbol(symbol: str) -> str | None:
    """The name expression of a mangled kernel symbol of ours (None for others)."""
    m = re.match(r"_Z(\d+)(ntt_pass|pointwise_mul|twiddle_grid|merge_table)I(\d+)", symbol)
    if not m:
        return None
    kernel, rest = m.group(2), symbol[m.end() :]
    arith, rest = rest[: int(m.group(3))], rest[int(m.group(3)) :]
    args = [arith]
    for kind, value in re.findall(r"L([ib])(\d+)E", rest.split("EEv")[0] + "E"):
        args.append(("true" if value == "1" else "false") if kind == "b" else value)
    return f"{kernel}<{','.join(args)}>"


def build(out: pathlib.Path, arch: str = "sm_90", max_log_n: int = 28, verbose: bool = False) -> dict:
    """Compile every kernel name expression into `out` and write its index; returns the index.
    verbose: print ptxas's register/spill report of each kernel."""
    names = kernel_names(max_log_n)
    source = '#include "ntt.cu"\n' + _instantiations(names)
    with tempfile.TemporaryDirectory() as tmp:
        cu = pathlib.Path(tmp) / "prebuilt.cu"
        cu.write_text(source)
        common = ["nvcc", "-std=c++17", f"-arch={arch}", "-I", str(kernel_dir()), *define_options("ntt.cu")]
        ptx = pathlib.Path(tmp) / "prebuilt.ptx"
        subprocess.run(common + ["-ptx", "-o", str(ptx), str(cu)], check=True)
        # the cubin assembled from that PTX, as `nvcc -cubin` would (its ptxas step, the same options), without
        # running the front end and optimizer a second time: they take longer than ptxas over these kernels
        cmd = ["ptxas", f"-arch={arch}", "-m64", "-o", str(out), str(ptx)] + (["-v"] if verbose else [])
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
        if verbose:
            _print_resources(proc.stderr)
        symbols = re.findall(r"\.entry\s+(\w+)\(", ptx.read_text())
    index = {name_of_symbol(s): s for s in symbols if name_of_symbol(s)}
    missing = sorted(set(names) - set(index))
    if missing:
        raise RuntimeError(f"symbols not found for {missing[:3]}")
    meta = {"arch": arch, "sources": source_digest(), "kernels": index}
    pathlib.Path(str(out) + ".json").write_text(json.dumps(meta, indent=0, sort_keys=True))
    return index


def _print_resources(report: str) -> None:
    name = None
    for line in report.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            name = name_of_symbol(m.group(1))
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)
        if m:
            stack, spill = int(m.group(1)), int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            flag = f"  stack {stack} B, spills {spill} B" if stack or spill else ""
            print(f"{int(m.group(1)):4d} regs  {name}{flag}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--max-log-n", type=int, default=28)
    parser.add_argument("--report", action="store_true", help="print registers and spills of every kernel")
    args = parser.parse_args(argv)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    index = build(args.out, args.arch, args.max_log_n, args.report)
    print(f"{args.out}: {len(index)} kernels for {args.arch}")


if __name__ == "__main__":
    main()
