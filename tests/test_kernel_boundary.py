"""The Python side of the kernel boundary checked against the CUDA sources with a host C++ build:
struct layouts field by field (offsetof/sizeof) and enum values, so a field or mode out of order
fails to compile instead of giving wrong numbers."""

import re
import subprocess

import numpy as np
import pytest

from hebatch.backend.gpu.loader import kernel_dir
from hebatch.backend.kernels import LANE_MODES, MODCONST_DTYPE

from .host_kernels import compiler, host_library

pytestmark = pytest.mark.skipif(compiler() is None, reason="needs a C++ compiler")

LANE_ENUM = {"i": "LANES_ALONG_I", "o": "LANES_ALONG_O", "row": "LANES_ALONG_ROW", "bitrev": "LANES_BITREV"}


def layout_asserts(struct: str, dtype: np.dtype) -> str:
    lines = [f'static_assert(sizeof({struct}) == {dtype.itemsize}, "size of {struct}");']
    for name in dtype.names:
        lines.append(f'static_assert(offsetof({struct}, {name}) == {dtype.fields[name][1]}, "{struct}.{name}");')
        lines.append(
            f"static_assert(sizeof((({struct}*)0)->{name}) == {dtype.fields[name][0].itemsize}, "
            f'"size of {struct}.{name}");'
        )
    return "\n".join(lines)


def enum_asserts(modes) -> str:
    source = (kernel_dir() / "ntt.cu").read_text()
    enum = re.search(r"enum LaneMode \{.*?\};", source, re.S).group(0)
    checks = [f'static_assert({LANE_ENUM[k]} == {v}, "LaneMode {k}");' for k, v in modes.items()]
    return enum + "\n" + "\n".join(checks)


def build(dtype=MODCONST_DTYPE, modes=LANE_MODES):
    source = '#include <cstddef>\n#include "modarith.cuh"\n' + layout_asserts("ModConst", dtype) + "\n"
    source += enum_asserts(modes)
    source += '\nextern "C" int boundary_ok() { return 1; }\n'
    return host_library(source)


def test_python_definitions_match_the_kernels():
    assert build().boundary_ok() == 1


def test_a_field_out_of_order_fails():
    swapped = np.dtype([("mu", "<u8"), ("q", "<u8"), ("m", "<u4"), ("pad", "<u4")])
    with pytest.raises(subprocess.CalledProcessError) as err:
        build(swapped)
    assert "ModConst.mu" in err.value.stderr


def test_a_mode_out_of_order_fails():
    modes = dict(LANE_MODES, o=LANE_MODES["row"], row=LANE_MODES["o"])
    with pytest.raises(subprocess.CalledProcessError) as err:
        build(modes=modes)
    assert "LaneMode" in err.value.stderr
