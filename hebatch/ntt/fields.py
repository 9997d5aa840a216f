"""Transforms over named prime fields (hb.PrimeField): NTTs in either order, coset NTTs and
low-degree extensions, as zk provers use them.

Multi-limb fields (BN254, BLS12-381, BLS12-377 scalar fields) take arrays (..., n, limbs) of uint64
limbs in standard form and run on the field engine of the array's backend
(`backend.get(x).ntt256`). One-word fields (Goldilocks, BabyBear) and plain int moduli take arrays
(..., n) and run on the integer transforms of `hebatch.ntt.word`.
"""

from __future__ import annotations

import math

import numpy as np

from ..arith import bitrev_indices
from ..backend import get
from ..device import device_of, device_properties
from ..field import MAX_LOG_N, PrimeField, is_power_of_two, primitive_root
from .launch import field_plan
from .validate import (
    FieldArgs,
    _as_int,
    _check_flag,
    check_entries,
    check_field_args,
    check_field_entries,
    check_order,
    check_transform_args,
)
from .word import ntt_natural


def _bitrev(x, axis_from_end: int):
    """x with its transform axis (-1 or -2) permuted by bit reversal."""
    n = x.shape[-axis_from_end]
    perm = bitrev_indices(n.bit_length() - 1)
    xp = get(x).ntt.xp
    index = xp.asarray(perm)
    return x[..., index, :] if axis_from_end == 2 else x[..., index]


def multi_limb(field) -> bool:
    return isinstance(field, PrimeField) and field.limbs > 1


# -- multi-limb fields ---------------------------------------------------------------------------


def field_ntt(
    x,
    field: PrimeField,
    *,
    negacyclic=False,
    inverse=False,
    algorithm="auto",
    root=None,
    inplace=False,
    check=True,
    input_order="natural",
    output_order="natural",
):
    """hb.ntt for a multi-limb PrimeField (arguments as hb.ntt; x of shape (..., n, limbs)).
    `algorithm` is validated but the field engine of the backend picks its own."""
    inverse = _check_flag(inverse, "inverse")
    inplace = _check_flag(inplace, "inplace")
    check_order(input_order, "input_order")
    check_order(output_order, "output_order")
    engine = get(device_of(x, "x")).ntt256
    args = check_field_args(x.shape, x.dtype, field, negacyclic=negacyclic, algorithm=algorithm, root=root)
    if _check_flag(check, "check"):
        check_field_entries(x, field, engine.xp, "x")
    if inplace and not (x.flags.writeable and x.flags.c_contiguous):
        raise ValueError("inplace=True needs a writeable, C-contiguous x")
    batch = math.prod(x.shape[:-2])
    x3 = x.reshape(batch, args.n, field.limbs)
    y3 = _run(engine, x3, args, inverse, input_order, output_order)
    y = y3.reshape(x.shape)
    if inplace:
        x[...] = y
        return x
    return y


def _launch_plan(x3):
    """The field engine's launch plan for x3 (batch, n, limbs) on its GPU; None for host arrays."""
    if device_of(x3, "x") != "gpu":
        return None
    return field_plan(x3.shape[1], x3.shape[0], device_properties(x3.device.id))


def _run(engine, x3, args: FieldArgs, inverse: bool, input_order: str, output_order: str):
    field, w = args.field, args.cyclic_root
    plan = _launch_plan(x3)
    if not args.negacyclic:
        run = engine.inverse if inverse else engine.forward
        return run(x3, field, w, input_order, output_order, plan=plan)
    psi = args.root
    if not inverse:  # X = NTT_w(x_j psi^j): the psi scaling needs x in natural order
        if input_order == "bitrev":
            x3 = _bitrev(x3, 2)
        return engine.forward(engine.scale_by_powers(x3, field, psi), field, w, "natural", output_order, plan=plan)
    y = engine.inverse(x3, field, w, input_order, "natural", plan=plan)
    y = engine.scale_by_powers(y, field, pow(psi, -1, field.p))
    return _bitrev(y, 2) if output_order == "bitrev" else y


# -- orders for the integer transforms ---------------------------------------------------------------


def ordered_int_ntt(
    x, modulus, *, negacyclic, inverse, algorithm, root, inplace, check, stream, input_order, output_order
):
    """hb.ntt over int moduli (and one-word fields) with bit-reversed input or output orders."""
    check_order(input_order, "input_order")
    check_order(output_order, "output_order")
    if isinstance(modulus, PrimeField):
        device_of(x, "x")
        args = check_transform_args(x.shape, x.dtype, modulus.p, negacyclic=negacyclic, algorithm=algorithm)
        if root is None:
            root = modulus.root_of_unity(2 * args.n if _check_flag(negacyclic, "negacyclic") else args.n)
        modulus = modulus.p
    if input_order == output_order == "natural":
        return ntt_natural(
            x,
            modulus,
            negacyclic=negacyclic,
            inverse=inverse,
            algorithm=algorithm,
            root=root,
            inplace=inplace,
            check=check,
            stream=stream,
        )
    _check_flag(inplace, "inplace")
    device_of(x, "x")
    check_transform_args(x.shape, x.dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, root=root)
    src = _bitrev(x, 1) if input_order == "bitrev" else x
    y = ntt_natural(
        src,
        modulus,
        negacyclic=negacyclic,
        inverse=inverse,
        algorithm=algorithm,
        root=root,
        inplace=False,
        check=check,
        stream=stream,
    )
    if output_order == "bitrev":
        y = _bitrev(y, 1)
    if inplace:
        x[...] = y
        return x
    return y


# -- coset NTT and low-degree extension ------------------------------------------------------------


def _field_parts(x, field, name="field"):
    """(prime p, PrimeField or None, default shift) for a PrimeField or an int modulus."""
    if isinstance(field, PrimeField):
        return field.p, field, field.generator
    if isinstance(field, (bool, np.bool_)) or not isinstance(field, (int, np.integer)):
        raise TypeError(
            f"{name} must be a hb.PrimeField or a prime modulus (int), got {type(field).__name__} {field!r}"
        )
    q = int(field)
    check_transform_args(x.shape, x.dtype, q)  # names any rule q or x breaks
    return q, None, primitive_root(q)


def _check_shift(shift, p, default, name="shift") -> int:
    if shift is None:
        return default
    shift = _as_int(shift, name)
    if not 0 < shift < p:
        raise ValueError(f"{name} must be a nonzero element of the field (0 < shift < p), got {shift}")
    return shift


def _scale_int(x, q: int, base: int):
    """x[..., j] * base^j mod q for an int modulus (one word per element), on x's backend."""
    backend = get(x).ntt
    n = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    x2 = x.reshape(rows, n).astype(np.uint64, copy=False)
    out = backend.twiddle_grid_mul(x2, q, base, 1, 0, 0, 1)
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def coset_ntt(x, field, shift=None, inverse=False, *, check=True):
    """Evaluations on the coset shift*H of the polynomial with coefficients x (natural order):
    X[k] = sum_j x[j] (shift w^k)^j, w = field.root_of_unity(n), shift = field.generator by default.
    inverse=True maps such evaluations back to coefficients. field: a hb.PrimeField (x of shape
    (..., n, limbs), or (..., n) for one-word fields) or a prime int modulus (x (..., n), default
    shift hb.primitive_root(q)). Natural order in and out."""
    inverse = _check_flag(inverse, "inverse")
    device_of(x, "x")
    p, pf, default = _field_parts(x, field)
    shift = _check_shift(shift, p, default)
    if multi_limb(pf):
        engine = get(device_of(x, "x")).ntt256
        args = check_field_args(x.shape, x.dtype, pf)
        if _check_flag(check, "check"):
            check_field_entries(x, pf, engine.xp, "x")
        x3 = x.reshape(math.prod(x.shape[:-2]), args.n, pf.limbs)
        plan = _launch_plan(x3)
        if inverse:
            y = engine.inverse(x3, pf, args.root, "natural", "natural", plan=plan)
            y = engine.scale_by_powers(y, pf, pow(shift, -1, p))
        else:
            y = engine.forward(engine.scale_by_powers(x3, pf, shift), pf, args.root, "natural", "natural", plan=plan)
        return y.reshape(x.shape)
    args = check_transform_args(x.shape, x.dtype, p)  # names any rule x or p breaks
    root = None if pf is None else pf.root_of_unity(args.n)
    if _check_flag(check, "check"):
        check_entries(x, args, get(x).ntt.xp, "x")
    if inverse:
        y = ntt_natural(x, p, inverse=True, root=root, check=False)
        return _scale_int(y, p, pow(shift, -1, p))
    return ntt_natural(_scale_int(x, p, shift), p, root=root, check=False)


def lde(x, field, blowup, shift=None, *, check=True):
    """Low-degree extension: x holds evaluations on H (size n, natural order) of a polynomial of
    degree < n; returns its evaluations on shift*H' with |H'| = blowup*n (natural order), i.e.
    coset_ntt(zero-padded intt(x), shift). blowup: a power of two >= 1; shift: default
    field.generator (hb.primitive_root(q) for an int modulus). Shapes as coset_ntt, with n -> blowup*n."""
    blowup = _as_int(blowup, "blowup")
    if not is_power_of_two(blowup):
        raise ValueError(f"blowup must be a power of two >= 1, got {blowup}")
    xp = get(device_of(x, "x")).ntt.xp
    p, pf, default = _field_parts(x, field)
    shift = _check_shift(shift, p, default)
    if multi_limb(pf):
        args = check_field_args(x.shape, x.dtype, pf)
        big = args.n * blowup
        if big > 2**MAX_LOG_N or big > 1 << pf.two_adicity:
            raise ValueError(
                f"blowup * n = {big} is too large: at most 2**{min(MAX_LOG_N, pf.two_adicity)} for {pf.name}"
            )
        coeffs = field_ntt(x, pf, inverse=True, check=check)
        padded = xp.zeros(x.shape[:-2] + (big, pf.limbs), dtype=np.uint64)
        padded[..., : args.n, :] = coeffs
        return coset_ntt(padded, pf, shift, check=False)
    args = check_transform_args(x.shape, x.dtype, p)
    root = None if pf is None else pf.root_of_unity(args.n)
    n = args.n
    big = n * blowup
    check_transform_args(x.shape[:-1] + (big,), x.dtype, p, name="the extension (blowup * n)")
    coeffs = ntt_natural(x, p, inverse=True, root=root, check=check)
    padded = xp.zeros(x.shape[:-1] + (big,), dtype=x.dtype)
    padded[..., :n] = coeffs
    return coset_ntt(padded, field, shift, check=False)
