"""Every bad-input rule of the contract raises before any work, naming the argument and the rule."""

import numpy as np
import pytest

import hebatch as hb

Q = hb.ntt_primes(60, 1024, 1)[0]
Q2 = hb.ntt_primes(60, 1024, 2)[1]  # a second limb modulus: RNS moduli must be distinct
Q_CYCLIC_ONLY = next(q for q in hb.ntt_primes(40, 8, 200) if (q - 1) % 32 == 16)  # 1 mod 16, not mod 32


def good(shape=(2, 16)):
    return np.random.default_rng().integers(0, Q, size=shape, dtype=np.uint64)


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: hb.ntt([1, 2, 3, 4], Q), TypeError, "NumPy or CuPy array"),
        (lambda: hb.ntt(np.arange(16, dtype=np.int64), Q), TypeError, "dtype uint64"),
        (lambda: hb.ntt(np.arange(16, dtype=np.float64), Q), TypeError, "dtype"),
        (lambda: hb.ntt(np.zeros(12, dtype=np.uint64), Q), ValueError, "power of two"),
        (lambda: hb.ntt(np.zeros(1, dtype=np.uint64), Q), ValueError, "power of two"),
        (lambda: hb.ntt(np.zeros((), dtype=np.uint64), Q), ValueError, "at least one axis"),
        (lambda: hb.ntt(good(), Q + 2), ValueError, "not prime"),
        (lambda: hb.ntt(good(), 2**62 + 135), ValueError, "too large"),
        (lambda: hb.ntt(good(), 1), ValueError, "prime"),
        (lambda: hb.ntt(good(), float(Q)), TypeError, "modulus"),
        (lambda: hb.ntt(good(), "97"), TypeError, "modulus"),
        (lambda: hb.ntt(good(), True), TypeError, "modulus"),
        (lambda: hb.ntt(good((2, 64)), 97), ValueError, "not 1 mod n"),
        (
            lambda: hb.ntt(good((2, 16)) % np.uint64(Q_CYCLIC_ONLY), Q_CYCLIC_ONLY, negacyclic=True),
            ValueError,
            "not 1 mod 2n",
        ),
        (lambda: hb.ntt(good((3, 16)), [Q, Q]), ValueError, "3 limbs"),
        (lambda: hb.ntt(good((16,)), [Q]), ValueError, r"\(\.\.\., limbs, n\)"),
        (lambda: hb.ntt(good((2, 16)), [Q, 15]), ValueError, r"modulus\[1\].*not prime"),
        (lambda: hb.ntt(good((2, 16)), []), ValueError, "limbs"),
        (lambda: hb.ntt(np.full(16, Q, dtype=np.uint64), Q), ValueError, "entries >= modulus"),
        (lambda: hb.ntt(np.full((2, 16), 2**64 - 1, dtype=np.uint64), [Q, Q2]), ValueError, "entries >="),
        (lambda: hb.ntt(good().astype(np.uint32) % np.uint32(97), Q), ValueError, "uint32"),
        (lambda: hb.ntt(good(), Q, algorithm="fft"), ValueError, "algorithm"),
        (lambda: hb.ntt(good(), Q, negacyclic=1), TypeError, "negacyclic"),
        (lambda: hb.ntt(good(), Q, inverse="yes"), TypeError, "inverse"),
        (lambda: hb.ntt(good(), Q, root=2), ValueError, "root=2"),
        (lambda: hb.ntt(good(), Q, root=1.5), TypeError, "root"),
        (lambda: hb.ntt(good((2, 16)), [Q, Q2], root=3), TypeError, "root"),
        (lambda: hb.ntt(good((2, 16)), [Q, Q2], root=[3]), ValueError, "root has 1"),
        (lambda: hb.intt(np.full(8, Q, dtype=np.uint64), Q), ValueError, "entries"),
        (lambda: hb.polymul(good(), [1, 2], Q), TypeError, "b must be a NumPy"),
        (
            lambda: hb.polymul(good() % np.uint64(97), (good() % np.uint64(97)).astype(np.uint32), 97),
            TypeError,
            "one dtype",
        ),
        (lambda: hb.polymul(good((2, 16)), good((2, 32)), Q), ValueError, "trailing"),
        (lambda: hb.polymul(good((2, 16)), good((3, 16)), Q), ValueError, "broadcast"),
        (lambda: hb.polymul(good(), np.full((2, 16), Q, dtype=np.uint64), Q), ValueError, "b has entries"),
        (lambda: hb.polymul(np.zeros(12, dtype=np.uint64), np.zeros(12, dtype=np.uint64), Q), ValueError, r"a\.shape"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_readonly_inplace_refused():
    x = good()
    x.setflags(write=False)
    with pytest.raises(ValueError, match="writeable"):
        hb.ntt(x, Q, inplace=True)
    hb.ntt(x, Q)  # a read-only input is fine otherwise


def test_nothing_modified_on_error():
    x = good()
    x[0, 0] = Q
    keep = x.copy()
    with pytest.raises(ValueError):
        hb.ntt(x, Q, inplace=True)
    assert (x == keep).all()
