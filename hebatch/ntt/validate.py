"""Input validation for the public transforms, shared by the array API and the Dask layer.

Every rule raises before any work starts, naming the argument and the rule it broke.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..field import (
    GENERIC_MAX_BITS,
    GOLDILOCKS,
    MAX_LOG_N,
    PrimeField,
    check_root,
    default_root,
    is_power_of_two,
    is_prime,
)
from .plan import ALGORITHMS

DTYPES = (np.dtype(np.uint64), np.dtype(np.uint32))


@dataclass(frozen=True)
class TransformArgs:
    """Validated arguments: n, per-limb moduli and roots, and whether x has a limb axis."""

    n: int
    moduli: tuple[int, ...]
    roots: tuple[int, ...]
    negacyclic: bool
    algorithm: str
    rns: bool  # modulus was a sequence: x.shape[-2] is the limb axis

    @property
    def limbs(self) -> int:
        return len(self.moduli)


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _as_int(value, name: str) -> int:
    if not _is_int(value):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def check_modulus(q, n: int, negacyclic: bool, name: str = "modulus") -> int:
    q = _as_int(q, name)
    if q < 2:
        raise ValueError(f"{name} must be a prime >= 2, got {q}")
    if q != GOLDILOCKS and q >= 2**GENERIC_MAX_BITS:
        raise ValueError(f"{name} {q} is too large: moduli must be < 2**62, or be hb.GOLDILOCKS")
    if not is_prime(q):
        raise ValueError(f"{name} {q} is not prime")
    order = 2 * n if negacyclic else n
    if (q - 1) % order:
        kind = "negacyclic" if negacyclic else "cyclic"
        raise ValueError(
            f"{name} {q} is not 1 mod {'2n' if negacyclic else 'n'} = {order}: it has no {kind} NTT of size n={n}"
        )
    return q


_ARGS_CACHE: dict = {}
_ARGS_CACHE_LIMIT = 4096


def check_transform_args(
    shape, dtype, modulus, *, negacyclic=False, algorithm="auto", root=None, name: str = "x"
) -> TransformArgs:
    """Validate everything that does not need to read the array's entries.

    Arguments that passed once (plain-int moduli, default roots) are remembered, so repeated calls of
    one shape (the steps of a BFV operation) cost a dictionary lookup instead of the number theory."""
    key = None
    if root is None and type(negacyclic) is bool and type(algorithm) is str:
        moduli_key = tuple(modulus) if type(modulus) in (list, tuple) else (modulus,)
        if all(type(q) is int for q in moduli_key):
            key = (
                tuple(shape),
                np.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype,
                moduli_key,
                type(modulus) is int,
                negacyclic,
                algorithm,
            )
            args = _ARGS_CACHE.get(key)
            if args is not None:
                return args
    args = _check_transform_args(
        shape, dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, root=root, name=name
    )
    if key is not None:
        if len(_ARGS_CACHE) >= _ARGS_CACHE_LIMIT:
            _ARGS_CACHE.clear()
        _ARGS_CACHE[key] = args
    return args


def _check_transform_args(shape, dtype, modulus, *, negacyclic, algorithm, root, name) -> TransformArgs:
    negacyclic = _check_flag(negacyclic, "negacyclic")
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(map(repr, ALGORITHMS))}, got {algorithm!r}")
    dtype = np.dtype(dtype)
    if dtype not in DTYPES:
        raise TypeError(f"{name} must have dtype uint64 (or uint32 when every modulus < 2**32), got {dtype}")
    if len(shape) < 1:
        raise ValueError(f"{name} must have at least one axis (the transform axis), got a 0-d array")
    n = shape[-1]
    if not is_power_of_two(n) or not 2 <= n <= 2**MAX_LOG_N:
        raise ValueError(
            f"{name}.shape[-1] (the transform size n) must be a power of two from 2 to 2**{MAX_LOG_N}, got {n}"
        )

    if isinstance(modulus, (bool, np.bool_, str, bytes, float)):
        raise TypeError(f"modulus must be an int or a sequence of ints, got {modulus!r}")
    rns = not _is_int(modulus)
    if rns:
        # Only ordered containers: a set or dict has no limb order, so it cannot name limbs of x.
        if isinstance(modulus, np.ndarray):
            if modulus.ndim != 1:
                raise TypeError(f"modulus as an array must be 1-D (one modulus per limb), got shape {modulus.shape}")
            moduli_in = modulus.tolist()
        elif isinstance(modulus, Sequence):
            moduli_in = list(modulus)
        else:
            raise TypeError(
                f"modulus must be an int or a sequence (list, tuple, 1-D NumPy array) of ints, "
                f"got {type(modulus).__name__}"
            )
        if len(shape) < 2:
            raise ValueError(
                f"modulus is a sequence (RNS limbs), so {name} needs shape (..., limbs, n); got shape {tuple(shape)}"
            )
        if len(moduli_in) != shape[-2]:
            raise ValueError(f"{name} has {shape[-2]} limbs along axis -2 but modulus has {len(moduli_in)} entries")
        if not moduli_in:
            raise ValueError("modulus must not be empty")
        moduli = tuple(check_modulus(q, n, negacyclic, f"modulus[{i}]") for i, q in enumerate(moduli_in))
        if len(set(moduli)) != len(moduli):
            dup = next(q for q in moduli if moduli.count(q) > 1)
            raise ValueError(
                f"modulus entries must be distinct (RNS limbs need coprime moduli); {dup} appears "
                f"{moduli.count(dup)} times"
            )
    else:
        moduli = (check_modulus(modulus, n, negacyclic),)

    if dtype == np.uint32 and any(q >= 2**32 for q in moduli):
        raise ValueError(f"{name} has dtype uint32, which needs every modulus < 2**32; got modulus {max(moduli)}")

    if root is None:
        roots = tuple(default_root(q, n, negacyclic) for q in moduli)
    else:
        if rns:
            if not hasattr(root, "__len__"):
                raise TypeError("root must be a sequence with one root per modulus when modulus is a sequence")
            roots_in = list(root)
            if len(roots_in) != len(moduli):
                raise ValueError(f"root has {len(roots_in)} entries but modulus has {len(moduli)}")
        else:
            roots_in = [root]
        roots = tuple(_as_int(r, "root") for r in roots_in)
        for r, q in zip(roots, moduli):
            check_root(r, q, n, negacyclic)
    return TransformArgs(n, moduli, roots, negacyclic, algorithm, rns)


def check_polymul_args(a_shape, a_dtype, b_shape, b_dtype, modulus, *, negacyclic=True, algorithm="auto"):
    """Validate polymul operands without reading entries: (args of a, args of b, broadcast batch shape)."""
    args = check_transform_args(a_shape, a_dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, name="a")
    if np.dtype(b_dtype) != np.dtype(a_dtype):
        raise TypeError(f"a and b must have one dtype, got {np.dtype(a_dtype)} and {np.dtype(b_dtype)}")
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    if b_shape[-1:] != a_shape[-1:] or (args.rns and b_shape[-2:] != a_shape[-2:]):
        raise ValueError(
            f"a and b must have the same trailing {'(limbs, n)' if args.rns else 'n'}, "
            f"got shapes {a_shape} and {b_shape}"
        )
    args_b = check_transform_args(b_shape, b_dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, name="b")
    tail = 2 if args.rns else 1
    try:
        lead = np.broadcast_shapes(a_shape[:-tail], b_shape[:-tail])
    except ValueError:
        raise ValueError(f"the batch axes of a {a_shape} and b {b_shape} do not broadcast") from None
    return args, args_b, tuple(lead)


def limb_column(args: TransformArgs, xp=np):
    """The moduli as an array broadcasting against x: (L, 1) for RNS input, a scalar otherwise."""
    if args.rns:
        return xp.asarray(np.array(args.moduli, dtype=np.uint64).reshape(-1, 1))
    return np.uint64(args.moduli[0])


def check_entries(x, args: TransformArgs, xp=np, name: str = "x") -> None:
    """Raise ValueError if any entry of x is >= its modulus (reads the whole array)."""
    if x.size == 0:
        return
    bound = limb_column(args, xp)
    bad = x >= bound
    if bool(bad.any()):
        worst = int(x[bad].max())
        where = "its limb's modulus" if args.rns else f"modulus {args.moduli[0]}"
        raise ValueError(f"{name} has entries >= {where} (e.g. {worst}): entries must be reduced mod q")


# -- prime fields of several limbs (hb.BN254_FR, ...) -----------------------------------------------

ORDERS = ("natural", "bitrev")


@dataclass(frozen=True)
class FieldArgs:
    """Validated arguments of a transform over a multi-limb PrimeField: x has shape (..., n, limbs)."""

    n: int
    field: PrimeField
    root: int  # psi when negacyclic, else w
    negacyclic: bool

    @property
    def cyclic_root(self) -> int:
        return self.root * self.root % self.field.p if self.negacyclic else self.root


def check_order(value, name: str) -> str:
    if not isinstance(value, str) or value not in ORDERS:
        raise ValueError(f"{name} must be 'natural' or 'bitrev', got {value!r}")
    return value


def check_field(field, name: str = "field") -> PrimeField:
    if not isinstance(field, PrimeField):
        raise TypeError(f"{name} must be a hb.PrimeField (e.g. hb.BN254_FR), got {type(field).__name__} {field!r}")
    return field


def check_field_size(field: PrimeField, n: int, negacyclic: bool, name: str = "x") -> None:
    """n must be a power of two from 2 to 2**28 whose (2n for negacyclic) divides p - 1."""
    if not is_power_of_two(n) or not 2 <= n <= 2**MAX_LOG_N:
        raise ValueError(f"{name}: the transform size n must be a power of two from 2 to 2**{MAX_LOG_N}, got {n}")
    order = 2 * n if negacyclic else n
    if order > 1 << field.two_adicity:
        kind = "negacyclic" if negacyclic else "cyclic"
        raise ValueError(
            f"{field.name} has two-adicity {field.two_adicity}: no {kind} NTT of size n={n} "
            f"({'2n' if negacyclic else 'n'} must be <= 2**{field.two_adicity})"
        )


def check_field_args(
    shape, dtype, field, *, negacyclic=False, algorithm="auto", root=None, name: str = "x"
) -> FieldArgs:
    """Validate a transform over a multi-limb field without reading x's entries."""
    field = check_field(field, "modulus")
    negacyclic = _check_flag(negacyclic, "negacyclic")
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(map(repr, ALGORITHMS))}, got {algorithm!r}")
    if np.dtype(dtype) != np.uint64:
        raise TypeError(f"{name} must have dtype uint64 (64-bit limbs of {field.name}), got {np.dtype(dtype)}")
    shape = tuple(shape)
    if len(shape) < 2 or shape[-1] != field.limbs:
        raise ValueError(
            f"{name} must have shape (..., n, {field.limbs}) ({field.limbs} little-endian 64-bit "
            f"limbs per element of {field.name}), got shape {shape}"
        )
    n = shape[-2]
    check_field_size(field, n, negacyclic, name)
    if root is None:
        root = field.root_of_unity(2 * n if negacyclic else n)
    else:
        root = _as_int(root, "root")
        check_root(root, field.p, n, negacyclic)
    return FieldArgs(n, field, root, negacyclic)


def field_entries_below_p(x, field: PrimeField, xp=np):
    """Boolean array (...): element < p, comparing limbs from the most significant one."""
    below = xp.zeros(x.shape[:-1], dtype=bool)
    equal = xp.ones(x.shape[:-1], dtype=bool)
    for k, limb in reversed(list(enumerate(field.p_limbs))):
        word = x[..., k]
        below |= equal & (word < np.uint64(limb))
        equal &= word == np.uint64(limb)
    return below


def check_field_entries(x, field: PrimeField, xp=np, name: str = "x") -> None:
    """Raise ValueError if any element of x (..., limbs) is >= p (reads the whole array)."""
    if x.size == 0:
        return
    bad = ~field_entries_below_p(x, field, xp)
    if bool(bad.any()):
        where = tuple(int(i) for i in np.argwhere(to_numpy(bad))[0])
        raise ValueError(
            f"{name} has elements >= p of {field.name} (first at index {where}): every element "
            f"(its {field.limbs} limbs, little-endian) must be reduced mod p"
        )


def to_numpy(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)
