"""hebatch: batched Number Theoretic Transforms, polynomial arithmetic and BFV on CPUs and GPUs."""

from .field import (
    BABYBEAR,
    BLS12_377_FR,
    BLS12_381_FR,
    BN254_FR,
    GOLDILOCKS,
    PrimeField,
    field_by_name,
    ntt_primes,
    primitive_root,
)
from .ntt import coset_ntt, intt, lde, ntt, polymul

__version__ = "0.1.0"

__all__ = [
    "ntt",
    "intt",
    "polymul",
    "coset_ntt",
    "lde",
    "ntt_primes",
    "primitive_root",
    "GOLDILOCKS",
    "BABYBEAR",
    "PrimeField",
    "BN254_FR",
    "BLS12_381_FR",
    "BLS12_377_FR",
    "field_by_name",
    "__version__",
]
