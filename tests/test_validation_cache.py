"""check_transform_args remembers arguments that passed, without letting bad ones through."""

import numpy as np
import pytest

import hebatch as hb
from hebatch.ntt.validate import check_transform_args


def test_remembered_arguments_still_refuse_bad_ones():
    q = hb.ntt_primes(50, 16, 2)
    first = check_transform_args((3, 2, 16), np.uint64, q, negacyclic=True)
    assert check_transform_args((3, 2, 16), np.dtype(np.uint64), list(q), negacyclic=True) is first
    with pytest.raises(TypeError, match="int"):
        check_transform_args((3, 2, 16), np.uint64, [float(v) for v in q], negacyclic=True)
    with pytest.raises(ValueError, match="limbs"):
        check_transform_args((3, 3, 16), np.uint64, q, negacyclic=True)
    with pytest.raises(TypeError, match="dtype"):
        check_transform_args((3, 2, 16), np.int64, q, negacyclic=True)
    with pytest.raises(TypeError, match="negacyclic"):
        check_transform_args((3, 2, 16), np.uint64, q, negacyclic=1)
    with pytest.raises(ValueError, match="root"):
        check_transform_args((3, 2, 16), np.uint64, q, negacyclic=True, root=[2, 2])


def test_a_remembered_cyclic_modulus_is_still_refused_for_negacyclic():
    q = 17  # 1 mod 16, not 1 mod 32: a cyclic NTT of 16 points exists, a negacyclic one does not
    check_transform_args((16,), np.uint64, q)
    check_transform_args((16,), np.uint64, q)  # now remembered
    with pytest.raises(ValueError, match="mod"):
        check_transform_args((16,), np.uint64, q, negacyclic=True)
    with pytest.raises(ValueError, match="mod"):
        check_transform_args((16,), np.uint64, [q], negacyclic=True)


def test_entries_are_checked_on_every_call_with_remembered_arguments():
    q = hb.ntt_primes(50, 16, 1)[0]
    x = np.random.default_rng().integers(0, q, (4, 16), dtype=np.uint64)
    hb.ntt(x, q, negacyclic=True)
    hb.ntt(x, q, negacyclic=True)  # arguments remembered
    x[2, 5] = q
    with pytest.raises(ValueError, match="entries"):
        hb.ntt(x, q, negacyclic=True)
