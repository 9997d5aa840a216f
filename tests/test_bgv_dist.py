"""bgv_map on a CPU LocalCluster: BGV computations per batch chunk, keys shipped once per worker."""

import secrets

import numpy as np
import pytest

from hebatch import bgv, dist
from hebatch.distributed.bgv import bgv_map


def square_plus_rotated(ctx, keys, ct):
    sq = ctx.multiply(ct, ct, keys.relin)  # one level down
    return ctx.add(sq, ctx.rotate(ct, 1, keys.galois))


def multiply_pair(ctx, keys, a, b):
    return ctx.multiply(a, b)


@pytest.fixture(scope="module")
def setup():
    params = bgv.Params.preset("n8192")
    ctx = bgv.Context(params, backend="cpu")
    return params, ctx, ctx.keygen(rotations=[1], columns=False)


def values(params, batch):
    return np.random.default_rng(secrets.randbits(64)).integers(0, params.t, (batch, params.n))


def test_bgv_map(client, setup):
    params, ctx, keys = setup
    v = values(params, 4)
    ct = ctx.encrypt(keys.public, ctx.encode(v), level=2)
    X = dist.from_numpy(ct.data, chunks=2)
    Y = bgv_map(square_plus_rotated, X, keys, params, level=1, backend="cpu")
    assert Y.name.startswith("bgv_square_plus_rotated-") and Y.numblocks[0] == 2 and Y.shape[2] == 2
    out = bgv.Ciphertext(Y.compute(), params.fingerprint, keys.key_id)
    rotated = np.roll(v.reshape(4, 2, -1), -1, axis=-1).reshape(4, -1)
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, out)), (v * v + rotated) % params.t)


def test_bgv_map_two_inputs_at_two_levels(client, setup):
    params, ctx, keys = setup
    v, w = values(params, 4), values(params, 4)
    a = ctx.encrypt(keys.public, ctx.encode(v))
    b = ctx.encrypt(keys.public, ctx.encode(w), level=2)
    Y = bgv_map(
        multiply_pair, [dist.from_numpy(a.data, chunks=2), b], keys, params, components=3, level=1, backend="cpu"
    )
    out = bgv.Ciphertext(Y.compute(), params.fingerprint, keys.key_id)
    assert out.size == 3 and out.level == 1
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, out)), v * w % params.t)


def test_bgv_map_refuses_mixing(setup):
    params, ctx, keys = setup
    other = bgv.Params.preset("n16384")
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 1)))
    with pytest.raises(ValueError, match=other.fingerprint):
        bgv_map(multiply_pair, ct, keys, other)
    with pytest.raises(ValueError, match="key"):
        bgv_map(multiply_pair, ct, bgv.Context(params, backend="cpu").keygen(columns=False), params)
    with pytest.raises(TypeError, match="fn"):
        bgv_map(None, ct, keys, params)
    with pytest.raises(ValueError, match="level"):
        bgv_map(multiply_pair, ct, keys, params, level=len(params.q))


def test_bgv_map_checks_what_fn_returns(client, setup):
    """The result's (components, limbs) announced to bgv_map are checked against what fn returns, and a
    fn returning something else than a ciphertext is named."""
    params, ctx, keys = setup
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 2)), level=2)
    X = dist.from_numpy(ct.data, chunks=1)
    with pytest.raises(ValueError, match=r"returned 2 components of 2 limbs; the map was told 2 components of 3"):
        bgv_map(square_plus_rotated, X, keys, params, level=2, backend="cpu").compute()  # fn drops a level
    with pytest.raises(TypeError, match=r"fn must return a bgv\.Ciphertext"):
        bgv_map(lambda c, k, x: x.data, X, keys, params, backend="cpu").compute()
