"""Encrypted pipelines of `hebatch bfv eval`: BFV operations composed per chunk, and the same on plaintexts.

A record is one row of values mod t in the first slots of slot row 0 (the rest zero). The steps run
in this order: --poly, --square, --mul-const, --add-const, --dot-with (the last one sums the
products with the weights into slot 0 by rotate-and-add, so its result is one value per record).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_TERM = re.compile(r"^([+-]?)(\d*)(?:(\*?)x(?:\^(\d+))?)?$")


def parse_poly(text: str) -> tuple[int, ...]:
    """'3x^2+2x+1' -> coefficients (1, 2, 3), lowest degree first; ValueError naming --poly."""
    compact = str(text).replace(" ", "").lower()
    if not compact:
        raise ValueError("--poly must not be empty")
    terms = re.findall(r"[+-]?[^+-]+", compact)
    if "".join(terms) != compact:
        raise ValueError(f"--poly {text!r}: write it like 3x^2+2x+1")
    coefficients: dict[int, int] = {}
    for term in terms:
        match = _TERM.match(term)
        if not match or (not match.group(2) and "x" not in term):
            raise ValueError(f"--poly {text!r}: cannot read the term {term!r} (write it like 3x^2+2x+1)")
        sign, digits, _, power = match.groups()
        value = int(digits) if digits else 1
        degree = (int(power) if power else 1) if "x" in term else 0
        coefficients[degree] = coefficients.get(degree, 0) + (-value if sign == "-" else value)
    degree = max(coefficients)
    if degree > 16:
        raise ValueError(f"--poly {text!r}: degree {degree} is above 16")
    return tuple(coefficients.get(d, 0) for d in range(degree + 1))


def format_poly(coefficients) -> str:
    """(1, 2, 3) -> '3x^2 + 2x + 1'."""
    terms = []
    for degree in range(len(coefficients) - 1, -1, -1):
        c = coefficients[degree]
        if c == 0:
            continue
        power = "" if degree == 0 else "x" if degree == 1 else f"x^{degree}"
        terms.append(f"{c}{power}" if c != 1 or not power else power)
    return " + ".join(terms).replace("+ -", "- ") or "0"


def rotation_steps(features: int) -> list[int]:
    """Rotations that sum the first `features` slots of a row into slot 0: 1, 2, 4, ... below features."""
    steps, step = [], 1
    while step < features:
        steps.append(step)
        step *= 2
    return steps


@dataclass(frozen=True)
class Pipeline:
    """The steps of `bfv eval`; picklable, so that dist.bfv_map ships it to the workers."""

    features: int
    poly: tuple[int, ...] | None = None
    square: bool = False
    mul_const: int | None = None
    add_const: int | None = None
    dot_with: tuple[int, ...] | None = None

    def __post_init__(self):
        if self.dot_with is not None and len(self.dot_with) != self.features:
            raise ValueError(f"--dot-with: {len(self.dot_with)} weights for records of {self.features} values")
        if not any(
            [self.poly, self.square, self.mul_const is not None, self.add_const is not None, self.dot_with is not None]
        ):
            raise ValueError("give at least one step: --poly, --square, --mul-const, --add-const or --dot-with")

    @property
    def result_slots(self) -> int:
        """Values per record in the result: 1 after a dot product, else `features`."""
        return 1 if self.dot_with is not None else self.features

    def describe(self) -> list[str]:
        steps = []
        if self.poly:
            steps.append("poly " + format_poly(self.poly))
        if self.square:
            steps.append("square")
        if self.mul_const is not None:
            steps.append(f"mul-const {self.mul_const}")
        if self.add_const is not None:
            steps.append(f"add-const {self.add_const}")
        if self.dot_with is not None:
            steps.append(f"dot-with {len(self.dot_with)} weights")
        return steps

    # -- encrypted ---------------------------------------------------------------------------------
    def __call__(self, ctx, keys, ct):
        """The steps on a batch of ciphertexts (runs per chunk on a worker)."""
        constant = lambda c: ctx.encode(np.full(ctx.n, int(c) % ctx.t, dtype=np.uint64))  # noqa: E731
        if self.poly:
            ct = _poly(ctx, keys, ct, self.poly, constant)
        if self.square:
            ct = ctx.multiply(ct, ct, keys.relin)
        if self.mul_const is not None:
            ct = ctx.multiply_plain(ct, constant(self.mul_const))
        if self.add_const is not None:
            ct = ctx.add_plain(ct, constant(self.add_const))
        if self.dot_with is not None:
            weights = np.zeros(ctx.n, dtype=np.uint64)
            weights[: self.features] = np.asarray(self.dot_with, dtype=np.uint64) % np.uint64(ctx.t)
            ct = ctx.multiply_plain(ct, ctx.encode(weights))
            for step in rotation_steps(self.features):
                ct = ctx.add(ct, ctx.rotate(ct, step, keys.galois))
        return ct

    # -- plaintext reference -----------------------------------------------------------------------
    def plain(self, values: np.ndarray, t: int) -> np.ndarray:
        """The same steps on plaintext values (records, features) mod t, with Python ints (exact)."""
        x = np.asarray(values).astype(object) % t
        if self.poly:
            x = sum((int(c) % t) * x**d for d, c in enumerate(self.poly)) % t
        if self.square:
            x = x * x % t
        if self.mul_const is not None:
            x = x * (self.mul_const % t) % t
        if self.add_const is not None:
            x = (x + self.add_const) % t
        if self.dot_with is not None:
            w = np.asarray([int(v) % t for v in self.dot_with], dtype=object)
            x = (x * w).sum(axis=1, keepdims=True) % t
        return x.astype(np.uint64)


def _poly(ctx, keys, ct, coefficients, constant):
    """sum_d c_d x^d with the powers x^d built by halving (multiplicative depth ceil(log2 degree))."""
    powers = {1: ct}

    def power(d):
        if d not in powers:
            half = power((d + 1) // 2)
            other = power(d // 2)
            powers[d] = ctx.multiply(half, other, keys.relin)
        return powers[d]

    total = None
    for degree, c in enumerate(coefficients):
        if degree == 0 or c % ctx.t == 0:
            continue
        term = power(degree) if c % ctx.t == 1 else ctx.multiply_plain(power(degree), constant(c))
        total = term if total is None else ctx.add(total, term)
    if total is None:  # only a constant term: c0 + 0 * x
        total = ctx.multiply_plain(ct, constant(0))
    if coefficients[0] % ctx.t:
        total = ctx.add_plain(total, constant(coefficients[0]))
    return total
