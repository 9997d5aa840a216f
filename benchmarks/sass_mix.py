"""Static instruction mix of the 256-bit field kernels: SASS for sm_90 counted by opcode class.

Builds kernels/ntt256.cu (or a small probe source that isolates one field operation) with
`nvcc -cubin -arch=sm_90`, disassembles it with `cuobjdump -sass`, and counts instructions per kernel by
class. The integer kernels are issue bound, so the figure of merit is the issue model

    cycles per warp ~ max(2 x IMAD-pipe ops, 2 x ALU-pipe ops, all ops)

(one warp instruction issued per clock per SM sub-partition; the IMAD/FMA pipe and the ALU pipe each
take 16 lanes per clock, so a warp instruction holds its pipe for 2 clocks).

    python benchmarks/sass_mix.py                 # every kernel of ntt256.cu, whole bodies and loops
    python benchmarks/sass_mix.py --probe         # per mont_mul / fadd / fsub / butterfly, per field
    python benchmarks/sass_mix.py --json out.json # also write the numbers

Static counts: a loop body is counted once, branches both ways. For the pass kernel the innermost
loops that touch shared memory are the stage loops (one butterfly per iteration).

Needs nvcc, and cuobjdump with nvdisasm on PATH (full CUDA toolkits have them; else the PyPI packages
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm carry the binaries).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"

CLASSES = (
    "IMAD",
    "IADD3",
    "LOP3",
    "ISETP",
    "SEL",
    "SHF",
    "LEA",
    "MOV",
    "ALU_OTHER",
    "LDS/STS",
    "LDG/STG",
    "BAR",
    "UNIFORM",
    "OTHER",
)
IMAD_PIPE = ("IMAD",)
ALU_PIPE = ("IADD3", "LOP3", "ISETP", "SEL", "SHF", "LEA", "MOV", "ALU_OTHER")
ALU_OTHER = {
    "PRMT",
    "IMNMX",
    "P2R",
    "R2P",
    "PLOP3",
    "IABS",
    "BMSK",
    "SGXT",
    "VIADD",
    "VIMNMX",
    "FLO",
    "BREV",
    "POPC",
    "CS2R",
}

FIELDS = ("BN254Fr", "BLS12_381Fr", "BLS12_377Fr")

PROBE = r"""
#include "field256.cuh"
#ifndef DIF_PRODUCT  // the DIF butterfly's product (-D to compare formulations)
#define DIF_PRODUCT mont_mul<F>(b[i], fsub_unreduced<F>(x, y))
#endif
// One operation per thread between a global load and a global store, so that the difference to `copy`
// is the operation alone.
extern "C" __global__ void copy(const Fe* __restrict__ a, const Fe* __restrict__ b, Fe* __restrict__ out) {
    const int i = threadIdx.x;
    out[i] = a[i];
    out[i + 256] = b[i];
}
template <class F>
__global__ void probe_mul(const Fe* __restrict__ a, const Fe* __restrict__ b, Fe* __restrict__ out) {
    const int i = threadIdx.x;
    out[i] = mont_mul<F>(a[i], b[i]);
    out[i + 256] = b[i];
}
template <class F>
__global__ void probe_add(const Fe* __restrict__ a, const Fe* __restrict__ b, Fe* __restrict__ out) {
    const int i = threadIdx.x;
    out[i] = fadd<F>(a[i], b[i]);
    out[i + 256] = b[i];
}
template <class F>
__global__ void probe_sub(const Fe* __restrict__ a, const Fe* __restrict__ b, Fe* __restrict__ out) {
    const int i = threadIdx.x;
    out[i] = fsub<F>(a[i], b[i]);
    out[i + 256] = b[i];
}
// a DIT butterfly (a + w y, a - w y) with w = b
template <class F>
__global__ void probe_dit(const Fe* __restrict__ a, const Fe* __restrict__ b, Fe* __restrict__ out) {
    const int i = threadIdx.x;
    const Fe x = a[i], y = a[i + 256], wy = mont_mul<F>(y, b[i]);
    out[i] = fadd<F>(x, wy);
    out[i + 256] = fsub<F>(x, wy);
}
// a DIF butterfly (a + y, (a - y) w) with w = b, as ntt256_pass computes it
template <class F>
__global__ void probe_dif(const Fe* __restrict__ a, const Fe* __restrict__ b, Fe* __restrict__ out) {
    const int i = threadIdx.x;
    const Fe x = a[i], y = a[i + 256];
    out[i] = fadd<F>(x, y);
    out[i + 256] = DIF_PRODUCT;
}
#define PROBE_INSTANTIATE(F)                                                         \
    template __global__ void probe_mul<F>(const Fe*, const Fe*, Fe*);                \
    template __global__ void probe_add<F>(const Fe*, const Fe*, Fe*);                \
    template __global__ void probe_sub<F>(const Fe*, const Fe*, Fe*);                \
    template __global__ void probe_dit<F>(const Fe*, const Fe*, Fe*);                \
    template __global__ void probe_dif<F>(const Fe*, const Fe*, Fe*);
PROBE_INSTANTIATE(BN254Fr)
PROBE_INSTANTIATE(BLS12_381Fr)
PROBE_INSTANTIATE(BLS12_377Fr)
"""


def opcode_class(op: str) -> str:
    base = op.split(".")[0]
    if base.startswith("IMAD") or base == "IMUL":
        return "IMAD"
    if base in ("IADD3", "LOP3", "ISETP", "SEL", "SHF", "LEA", "MOV"):
        return base
    if base in ALU_OTHER:
        return "ALU_OTHER"
    if base in ("LDS", "STS", "LDSM"):
        return "LDS/STS"
    if base in ("LDG", "STG", "LD", "ST"):
        return "LDG/STG"
    if base in ("BAR", "WARPSYNC", "MEMBAR"):
        return "BAR"
    if base.startswith("U") or base == "S2UR" or base == "R2UR":
        return "UNIFORM"
    return "OTHER"


LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")


def disassemble(source: pathlib.Path, defines=()) -> dict[str, list[tuple[int, str, str]]]:
    """{kernel name: [(address, opcode, operands)]} of the sm_90 cubin of source."""
    nvcc = shutil.which("nvcc")
    cuobjdump = shutil.which("cuobjdump")
    if not nvcc or not cuobjdump:
        sys.exit("sass_mix needs nvcc and cuobjdump (with nvdisasm) on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = pathlib.Path(tmp) / "k.cubin"
        subprocess.run(
            [
                nvcc,
                "-std=c++17",
                "-arch=sm_90",
                "-cubin",
                f"-I{KERNELS}",
                *[f"-D{d}" for d in defines],
                "-o",
                str(cubin),
                str(source),
            ],
            check=True,
        )
        text = subprocess.run([cuobjdump, "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    kernels: dict[str, list] = {}
    current = None
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            current = kernels.setdefault(m.group(1), [])
            continue
        m = LINE.search(line)
        if m and current is not None:
            current.append((int(m.group(1), 16), m.group(3), m.group(4)))
    return kernels


def mix(instructions) -> dict[str, int]:
    counts = dict.fromkeys(CLASSES, 0)
    for _, op, _ in instructions:
        if op == "NOP":
            continue
        counts[opcode_class(op)] += 1
    counts["imad_pipe"] = sum(counts[c] for c in IMAD_PIPE)
    counts["alu_pipe"] = sum(counts[c] for c in ALU_PIPE)
    counts["total"] = sum(counts[c] for c in CLASSES)
    counts["model_cycles"] = max(2 * counts["imad_pipe"], 2 * counts["alu_pipe"], counts["total"])
    return counts


def innermost_loops(instructions):
    """[(start, end)] address ranges of backward branches that contain no other backward branch."""
    loops = []
    for addr, op, args in instructions:
        if op.startswith("BRA"):
            m = re.search(r"0x([0-9a-f]+)", args)
            if m and int(m.group(1), 16) <= addr:
                loops.append((int(m.group(1), 16), addr))
    return [(s, e) for s, e in loops if not any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2 in loops)]


def demangle(name: str) -> str:
    out = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()
    return re.sub(r"\(.*\)$", "", out) or name


def fmt_row(label: str, c: dict) -> str:
    cells = " ".join(f"{c[k]:>6}" for k in CLASSES)
    return f"{label:<44} {cells} | {c['imad_pipe']:>6} {c['alu_pipe']:>6} {c['total']:>6} {c['model_cycles']:>6}"


def header() -> str:
    names = " ".join(f"{k[:6]:>6}" for k in CLASSES)
    return f"{'kernel':<44} {names} | {'IMADp':>6} {'ALUp':>6} {'total':>6} {'cycles':>6}"


def diff(a: dict, b: dict) -> dict:
    d = {k: a[k] - b[k] for k in CLASSES}
    d["imad_pipe"] = sum(d[c] for c in IMAD_PIPE)
    d["alu_pipe"] = sum(d[c] for c in ALU_PIPE)
    d["total"] = sum(d[c] for c in CLASSES)
    d["model_cycles"] = max(2 * d["imad_pipe"], 2 * d["alu_pipe"], d["total"])
    return d


def probe_report(defines) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "probe.cu"
        src.write_text(PROBE)
        kernels = disassemble(src, defines)
    base = mix(kernels["copy"])
    results = {}
    print(header())
    for name, instrs in sorted(kernels.items()):
        if name == "copy":
            continue
        label = demangle(name)
        results[label] = diff(mix(instrs), base)
        print(fmt_row(label, results[label]))
    return results


def kernel_report(defines) -> dict:
    kernels = disassemble(KERNELS / "ntt256.cu", defines)
    results = {}
    print(header())
    for name, instrs in sorted(kernels.items()):
        label = demangle(name)
        results[label] = {"whole": mix(instrs)}
        print(fmt_row(label, results[label]["whole"]))
        if "ntt256_pass" in name:
            for k, (s, e) in enumerate(innermost_loops(instrs)):
                body = [i for i in instrs if s <= i[0] <= e]
                m = mix(body)
                if m["LDS/STS"]:
                    results[label][f"loop{k}"] = m
                    print(fmt_row(f"  loop {s:#x}-{e:#x}", m))
    return results


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", action="store_true", help="per operation (probe kernels minus a copy kernel)")
    ap.add_argument("-D", dest="defines", action="append", default=[], help="extra -D for nvcc (e.g. FIELD256_U128)")
    ap.add_argument("--json", help="write the counts to this file")
    args = ap.parse_args(argv)
    results = probe_report(args.defines) if args.probe else kernel_report(args.defines)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
