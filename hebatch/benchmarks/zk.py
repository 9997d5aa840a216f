"""GPU benchmark of NTTs over the 256-bit scalar fields (BN254, BLS12-381, BLS12-377).

Cases: single transforms of 2^20 .. 2^28 points and a batch (2^20 x 16), forward (natural -> bitrev,
and natural -> natural) and inverse (bitrev -> natural), each field. Every time is the median of CUDA-event
timings of one call after warm-up (>= 15 repeats; --repeats-large for n >= 2^27, 5 by default, and said
so in the JSON), beside same-run references of the same element count:
  * copy: a device-to-device copy of the same bytes (32 per element): the memory floor is
    bytes moved / copy bandwidth, bytes moved = 2 x 32 bytes x elements x passes over memory (reads of the
    direct 4-step twiddle tables, up to 32 bytes per element of a pass that uses one, not counted);
  * cuFFT: cupy.fft.fft on complex64 of the same element count (hebatch.benchmarks.harness.references);
  * the integer-multiply floor: Montgomery multiplications (hebatch.ntt.launch.mont_mul_count: one per butterfly,
    one or two per element per 4-step twiddle, one per element for n^-1) x IMADS_PER_MONT IMAD-pipe
    instructions / (SMs x 64 IMAD per clock x SM clock), with IMADS_PER_MONT = 136: the kernels' product
    on 8 digits of 32 bits is 8 rounds of four chains (even/odd digits of a b_i and of m p) of 4 wide
    multiply-adds (IMAD.WIDE.U32.X, counted as one IMAD each), plus one multiplication for m per round:
    8 x (16 + 1) = 136. (The 2026-11-23 results in benchmarks/results used 264: 8 x (2 x 16 + 1) 32-bit
    multiply-adds of the former row-wise product.)

    python -m hebatch.benchmarks.zk [--quick] [--repeats 15] [--max-log-n 28] [--out DIR]
"""

from __future__ import annotations

import argparse
import traceback

from hebatch.backend.gpu.ntt256 import CupyFieldNTT
from hebatch.benchmarks.harness import add_common_args, cuda_time, device_name, references, write_result
from hebatch.device import device_properties
from hebatch.field import BLS12_377_FR, BLS12_381_FR, BN254_FR
from hebatch.ntt.launch import field_pass_sizes, field_plan, mont_mul_count

FIELDS = [BLS12_377_FR, BN254_FR, BLS12_381_FR]
CASES = [(20, 1), (22, 1), (24, 1), (26, 1), (28, 1), (20, 16)]
# IMAD-pipe instructions per 256-bit Montgomery product (kernels/field256.cuh, 32-bit digits): 8 rounds of
# 8 wide multiply-adds (a b_i) + 8 (m p) + 1 (m = t_0 p' mod 2^32); benchmarks/sass_mix.py --probe shows it.
IMADS_PER_MONT = 8 * (8 + 8 + 1)
IMAD_PER_CLOCK_PER_SM = 64
DIRECTIONS = [("forward", "natural", "bitrev"), ("forward", "natural", "natural"), ("inverse", "bitrev", "natural")]


def case_references(elements, repeats):
    """(cuFFT complex64 ms, copy GB/s counting read + write) for this element count: one call per
    sample, the copy of the same 32 bytes per element the field data holds."""
    found = references(elements, 32 * elements, repeats, back_to_back=1)
    return found["cufft_ms"], found["copy_GBps"]


def sm_clock_khz(cp, props) -> int:
    """The SM clock (kHz): the device property where the runtime still reports it, else the attribute."""
    if props.get("clockRate"):
        return int(props["clockRate"])
    cuda_dev_attr_clock_rate = 13
    return int(cp.cuda.runtime.deviceGetAttribute(cuda_dev_attr_clock_rate, cp.cuda.Device().id))


def random_field_array(cp, field, shape):
    x = cp.random.randint(0, 2**63 - 1, size=tuple(shape) + (4,), dtype=cp.int64).view(cp.uint64)
    x[..., 3] %= cp.uint64(field.p_limbs[3])  # below p's top limb: every element < p
    return x


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser, repeats=15)
    parser.add_argument("--repeats-large", type=int, default=5, help="repeats for n >= 2^27")
    parser.add_argument("--max-log-n", type=int, default=28)
    args = parser.parse_args(argv)
    import cupy as cp

    engine = CupyFieldNTT()
    device = device_name()
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    sms, clock_khz = props["multiProcessorCount"], sm_clock_khz(cp, props)
    imad_per_s = sms * IMAD_PER_CLOCK_PER_SM * clock_khz * 1e3
    fields = FIELDS[:1] if args.quick else FIELDS
    cases = [(20, 1), (24, 1)] if args.quick else [c for c in CASES if c[0] <= args.max_log_n]
    repeats = max(15, args.repeats)
    rows, refs = [], {}
    print(f"device: {device}, {sms} SMs at {clock_khz / 1e6:.2f} GHz: integer floor from {imad_per_s:.3g} IMAD/s")
    print(
        f"{'case':>9} {'field':>10} {'dir':>16} {'ms':>9} {'cuFFT':>8} {'copy ms':>8} {'mem floor':>9} "
        f"{'of mem':>6} {'int floor':>9} {'of int':>6}"
    )
    for log_n, batch in cases:
        n = 1 << log_n
        reps = args.repeats_large if log_n >= 27 else repeats
        if (log_n, batch) not in refs:
            refs[(log_n, batch)] = case_references(batch * n, reps)
        fft_ms, copy_gbps = refs[(log_n, batch)]
        nbytes = batch * n * 32
        for field in fields:
            try:
                inputs = [random_field_array(cp, field, (batch, n)) for _ in range(1 if log_n >= 26 else 2)]
            except Exception as exc:
                rows.append(dict(log_n=log_n, batch=batch, field=field.name, error=repr(exc)))
                continue
            w = field.root_of_unity(n)
            plan = field_plan(n, batch, device_properties(cp.cuda.Device().id))
            for direction, inp, outp in DIRECTIONS:
                run = engine.forward if direction == "forward" else engine.inverse
                entry = dict(
                    log_n=log_n,
                    batch=batch,
                    field=field.name,
                    direction=direction,
                    input_order=inp,
                    output_order=outp,
                    repeats=reps,
                    cufft_ms=fft_ms,
                    copy_GBps=copy_gbps,
                )
                try:
                    ms = cuda_time(lambda a: run(a, field, w, inp, outp, plan=plan), inputs, reps)
                    passes = len(field_pass_sizes(log_n, plan.log_block))
                    mem_floor = passes * 2 * nbytes / (copy_gbps * 1e6)
                    imads = mont_mul_count(log_n, batch, direction == "inverse") * IMADS_PER_MONT
                    int_floor = imads / imad_per_s * 1e3
                    entry.update(
                        ms=ms,
                        passes_over_memory=passes,
                        memory_floor_ms=mem_floor,
                        fraction_of_memory_floor=mem_floor / ms,
                        mont_muls=imads // IMADS_PER_MONT,
                        integer_floor_ms=int_floor,
                        fraction_of_integer_floor=int_floor / ms,
                        ratio_to_cufft=ms / fft_ms,
                    )
                    case = f"{direction[:3]} {inp[:3]}->{outp[:3]}"
                    print(
                        f"{f'2^{log_n}x{batch}':>9} {field.name:>10} {case:>16} "
                        f"{ms:9.3f} {fft_ms:8.3f} {2 * nbytes / (copy_gbps * 1e6):8.3f} {mem_floor:9.3f} "
                        f"{mem_floor / ms:6.2f} {int_floor:9.3f} {int_floor / ms:6.2f}",
                        flush=True,
                    )
                except Exception as exc:
                    entry["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                    print(
                        f"{f'2^{log_n}x{batch}':>9} {field.name:>10} {direction:>16} ERROR {entry['error']}", flush=True
                    )
                rows.append(entry)
            del inputs
            cp.get_default_memory_pool().free_all_blocks()

    result = dict(
        device=device,
        sms=sms,
        clock_kHz=clock_khz,
        timing=f"median of CUDA-event times of one call, 3 warm-up calls; {repeats} repeats "
        f"({args.repeats_large} for n >= 2^27); inputs random field elements",
        floors=dict(
            memory="passes over memory x 2 x 32 bytes x elements / device-to-device copy bandwidth (same run)",
            integer=f"Montgomery products x {IMADS_PER_MONT} IMAD-pipe instructions / "
            f"(SMs x {IMAD_PER_CLOCK_PER_SM} IMAD per clock x clockRate)",
        ),
        references="cuFFT: cupy.fft.fft on complex64 of the same element count; copy: device-to-device copy of "
        "the same bytes, GB/s counting read + write",
        results=rows,
    )
    return write_result("zk", result, args.out, device=device)


if __name__ == "__main__":
    main()
