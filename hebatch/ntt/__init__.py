"""Transforms layer: NTT plans, twiddle tables, algorithm choice, and the public array API."""

from .api import intt, ntt, plan_for, polymul
from .blocks import FourStepSpec, column_block, four_step_spec, row_block, twiddle_grid
from .fields import coset_ntt, lde
from .plan import NTTPlan, make_plan
from .validate import TransformArgs, check_entries, check_transform_args
from .word import intt_product, ntt_spread

__all__ = [
    "ntt",
    "intt",
    "ntt_spread",
    "intt_product",
    "polymul",
    "coset_ntt",
    "lde",
    "plan_for",
    "make_plan",
    "NTTPlan",
    "TransformArgs",
    "check_transform_args",
    "check_entries",
    "twiddle_grid",
    "FourStepSpec",
    "four_step_spec",
    "column_block",
    "row_block",
]
