"""The public transforms: hb.ntt, hb.intt, hb.polymul, dispatching on the array type."""

from __future__ import annotations

import math

import numpy as np

from ..backend import get
from ..device import device_of
from .fields import field_ntt, multi_limb, ordered_int_ntt
from .validate import _check_flag, check_entries, check_transform_args
from .word import _as_batch, _lead_shape, _on_stream, _validated, plan_for


def ntt(
    x,
    modulus,
    *,
    negacyclic=False,
    inverse=False,
    algorithm="auto",
    root=None,
    inplace=False,
    check=True,
    stream=None,
    input_order="natural",
    output_order="natural",
):
    """Number Theoretic Transform of the last axis of x (natural order unless asked otherwise).

    x: NumPy or CuPy array of uint64 (uint32 when every modulus < 2**32), shape (..., n), n a power
    of two from 2 to 2**28, entries < modulus. modulus: a prime (< 2**62, or hb.GOLDILOCKS), or a
    sequence of primes, one per row of axis -2 (RNS limbs). Cyclic: X[k] = sum_j x[j] w^(jk) with
    w = g^((q-1)/n), g = hb.primitive_root(q). Negacyclic: X[k] = sum_j x[j] psi^(j(2k+1)) with
    psi = g^((q-1)/(2n)). `root` overrides w or psi (one per limb for RNS). `inverse=True` gives
    the exact inverse (scaled by n^-1). algorithm: "auto", "radix2" or "4step".
    Returns a new array of x's type, dtype, shape and device; with inplace=True, x is overwritten
    and returned. check=False skips the entry range check (on a GPU it reads x once and waits for
    the answer); stream= runs a CuPy transform on that CUDA stream instead of the current one.

    input_order / output_order: "natural" or "bitrev" (the transform axis indexed with its bits
    reversed), independently, for forward and inverse transforms.

    modulus may also be a hb.PrimeField. Multi-limb fields (hb.BN254_FR, hb.BLS12_381_FR,
    hb.BLS12_377_FR) take x of shape (..., n, limbs) uint64: little-endian 64-bit limbs in standard
    form, every element < p; w = field.root_of_unity(n) (generator^((p-1)/n)), psi of order 2n for
    negacyclic transforms where the two-adicity allows. One-word fields (Goldilocks, BabyBear)
    take (..., n) as for an int modulus, with the field's generator.
    """
    if multi_limb(modulus):
        if stream is not None:
            raise TypeError("stream= applies to integer moduli only; run a field transform under `with stream:`")
        return field_ntt(
            x,
            modulus,
            negacyclic=negacyclic,
            inverse=inverse,
            algorithm=algorithm,
            root=root,
            inplace=inplace,
            check=check,
            input_order=input_order,
            output_order=output_order,
        )
    return ordered_int_ntt(
        x,
        modulus,
        negacyclic=negacyclic,
        inverse=inverse,
        algorithm=algorithm,
        root=root,
        inplace=inplace,
        check=check,
        stream=stream,
        input_order=input_order,
        output_order=output_order,
    )


def intt(
    y,
    modulus,
    *,
    negacyclic=False,
    algorithm="auto",
    root=None,
    inplace=False,
    check=True,
    stream=None,
    input_order="natural",
    output_order="natural",
):
    """Exact inverse of `ntt` with the same arguments (scaled by n^-1): intt(ntt(x)) == x.
    input_order is the order of y, output_order the order of the result."""
    return ntt(
        y,
        modulus,
        negacyclic=negacyclic,
        inverse=True,
        algorithm=algorithm,
        root=root,
        inplace=inplace,
        check=check,
        stream=stream,
        input_order=input_order,
        output_order=output_order,
    )


def polymul(a, b, modulus, *, negacyclic=True, algorithm="auto", check=True, stream=None):
    """Product of polynomials a and b in Z_q[x]/(x^n + 1) (negacyclic) or Z_q[x]/(x^n - 1).

    a, b: arrays as for `ntt`, of one type, device and dtype, same n (and limbs); their leading
    (batch) axes broadcast. Returns an array of the broadcast shape.
    """
    negacyclic = _check_flag(negacyclic, "negacyclic")
    backend, args = _validated(a, modulus, negacyclic, algorithm, None, check, "a")
    backend_b = get(device_of(b, "b")).ntt
    if backend_b is not backend:
        raise TypeError(f"a and b must both be {backend.name} arrays, got {type(a).__name__} and {type(b).__name__}")
    backend.check_same_device(a, b)
    if b.dtype != a.dtype:
        raise TypeError(f"a and b must have one dtype, got {a.dtype} and {b.dtype}")
    if b.shape[-1] != a.shape[-1] or (args.rns and b.shape[-2:] != a.shape[-2:]):
        raise ValueError(
            f"a and b must have the same trailing {'(limbs, n)' if args.rns else 'n'}, "
            f"got shapes {a.shape} and {b.shape}"
        )
    args_b = check_transform_args(b.shape, b.dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, name="b")
    if check:
        check_entries(b, args_b, backend.xp, "b")
    try:
        lead = np.broadcast_shapes(_lead_shape(a.shape, args), _lead_shape(b.shape, args))
    except ValueError:
        raise ValueError(f"the batch axes of a {a.shape} and b {b.shape} do not broadcast") from None

    with _on_stream(stream, backend):
        a3 = _as_batch(a, args, backend)
        plan = plan_for(args, backend, max(a3.shape[0], math.prod(lead)), a3.dtype)
        tail = (args.limbs, args.n) if args.rns else (args.n,)

        def spectrum(x, x3):
            s = backend.forward(x3, plan, natural=False).reshape(_lead_shape(x.shape, args) + tail)
            return backend.broadcast_to(s, lead + tail).reshape(-1, args.limbs, args.n)

        fa = spectrum(a, a3)
        fb = fa if b is a else spectrum(b, _as_batch(b, args, backend))
        c3 = backend.inverse_product(fa, fb, plan)
    return c3.reshape(lead + tail).astype(a.dtype, copy=False)
