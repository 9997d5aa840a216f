"""hebatch: batched Number Theoretic Transforms, polynomial arithmetic and BFV on CPUs and GPUs."""

from .field import BABYBEAR, GOLDILOCKS, ntt_primes, primitive_root
from .ntt import intt, ntt, polymul

__version__ = "0.1.0"

__all__ = ["ntt", "intt", "polymul", "ntt_primes", "primitive_root", "GOLDILOCKS", "BABYBEAR", "__version__"]
