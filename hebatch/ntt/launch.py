"""GPU launch plans of the 64-bit/32-bit word transforms: the `ntt_pass` launches (kernels/ntt.cu) of
one transform, as pure functions of the plan, the row count and the word size. Free of CuPy, so they
are checked on a CPU (tests/gpu_emulator.py) and enumerated by the prebuild tool."""

from __future__ import annotations

from dataclasses import dataclass

from ..backend import LANE_MODES


@dataclass(frozen=True)
class Launch:
    """One ntt_pass launch: template arguments, shape, buffers by role and scalar arguments."""

    template: tuple  # (arith, log_np, log_lanes, log_r, lane_mode, last, tw_mode, post_mode, fuse)
    grid: int
    block: int
    smem: int
    src: str  # "x", "tmp" or "out"
    dst: str
    pass_index: int  # which entry of the plan's gpu_pass_tables
    scalars: dict

    @property
    def name(self) -> str:
        a, log_np, log_lanes, log_r, mode, last, tw, post, fuse = self.template
        flag = {True: "true", False: "false"}
        return f"ntt_pass<{a},{log_np},{log_lanes},{log_r},{mode},{flag[last]},{tw},{post},{flag[fuse]}>"


def transform_launches(
    plan, pass_tables: list[dict], rows: int, word_bits: int, arith: str, fuse: bool = False
) -> list[Launch]:
    """The launches of one transform of `rows` rows. Free of CuPy, so it can be checked on a CPU."""
    n = plan.n
    passes = plan.gpu_passes(word_bits // 8)
    launches = []
    src = "x"
    d_before = 1  # product of the earlier passes' sizes
    for index, p in enumerate(passes):
        last = index == len(passes) - 1
        n_p, lanes = 1 << p.log_np, 1 << p.log_lanes
        geom = dict(d_i=1, d_o=1, digit_d=1, digit_m=1, log_do=0, s0=0, use_h=0, keep_positions=0)
        grid = rows * (n // (n_p * lanes))
        if len(passes) == 1:
            mode, grid = "row", -(-rows // lanes)
        elif plan.algorithm == "radix2":
            geom.update(
                d_o=d_before, d_i=n // (d_before * n_p), s0=p.s0, use_h=1, log_do=p.s0, keep_positions=0 if last else 1
            )
            mode = "bitrev" if last else "i"
        elif last:  # output base of o = k1 n2 + k2 is k1 + n1 k2 (three passes); o (two passes)
            first = 1 << passes[0].log_np
            geom.update(d_o=d_before, digit_d=d_before // first if len(passes) == 3 else 1, digit_m=first)
            mode = "o"
        else:
            geom.update(d_o=d_before, d_i=n // (d_before * n_p))
            mode = "i"
        t = pass_tables[index]
        dst = "out" if last else ("tmp" if src == "x" else src)
        template = (
            arith,
            p.log_np,
            p.log_lanes,
            p.log_r,
            LANE_MODES[mode],
            last,
            t["tw_mode"],
            t["post_mode"] if last else 0,
            fuse and index == 0,
        )
        launches.append(Launch(template, grid, p.threads, p.smem_bytes(word_bits // 8), src, dst, index, geom))
        src = dst
        d_before *= n_p
    return launches
