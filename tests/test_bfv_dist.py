"""dist.bfv_map on a CPU LocalCluster: BFV computations per batch chunk, keys shipped once per worker."""

import secrets

import numpy as np
import pytest

from hebatch import bfv, dist


def square_plus_rotated(ctx, keys, ct):
    sq = ctx.multiply(ct, ct, keys.relin)
    return ctx.add(sq, ctx.rotate(ct, 1, keys.galois))


def multiply_pair(ctx, keys, a, b):
    return ctx.multiply(a, b)


@pytest.fixture(scope="module")
def setup():
    params = bfv.Params.preset("n4096")
    ctx = bfv.Context(params, backend="cpu")
    return params, ctx, ctx.keygen(rotations=[1])


def values(params, batch):
    return np.random.default_rng(secrets.randbits(64)).integers(0, params.t, (batch, params.n))


def test_bfv_map(client, setup):
    params, ctx, keys = setup
    v = values(params, 6)
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    X = dist.from_numpy(ct.data, chunks=2)
    Y = dist.bfv_map(square_plus_rotated, X, keys, params, backend="cpu")
    assert Y.name.startswith("bfv_square_plus_rotated-") and Y.numblocks[0] == 3
    out = bfv.Ciphertext(Y.compute(), params.fingerprint, keys.key_id)
    rotated = np.roll(v.reshape(6, 2, -1), -1, axis=-1).reshape(6, -1)
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, out)), (v * v + rotated) % params.t)


def test_bfv_map_two_inputs(client, setup):
    params, ctx, keys = setup
    v, w = values(params, 4), values(params, 4)
    a, b = (ctx.encrypt(keys.public, ctx.encode(x)) for x in (v, w))
    Y = dist.bfv_map(multiply_pair, [dist.from_numpy(a.data, chunks=2), b], keys, params, components=3, backend="cpu")
    out = bfv.Ciphertext(Y.compute(), params.fingerprint, keys.key_id)
    assert out.size == 3
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, out)), v * w % params.t)


def test_bfv_map_refuses_mixing(setup):
    params, ctx, keys = setup
    other = bfv.Params(n=4096, t=40961, q_bits=[36, 36], special_bits=37)
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 1)))
    with pytest.raises(ValueError, match=other.fingerprint):
        dist.bfv_map(multiply_pair, ct, keys, other)
    with pytest.raises(ValueError, match="key"):
        dist.bfv_map(multiply_pair, ct, ctx.keygen(), params)
    with pytest.raises(TypeError, match="fn"):
        dist.bfv_map(None, ct, keys, params)


def test_bfv_map_from_zarr(client, setup, tmp_path):
    params, ctx, keys = setup
    v = values(params, 4)
    bfv.save_zarr(ctx.encrypt(keys.public, ctx.encode(v)), tmp_path / "ct.zarr", chunk=2)
    X = dist.from_zarr(tmp_path / "ct.zarr")
    Y = dist.bfv_map(square_plus_rotated, X, keys, params, backend="cpu")
    out = bfv.Ciphertext(Y.compute(), params.fingerprint, keys.key_id)
    rotated = np.roll(v.reshape(4, 2, -1), -1, axis=-1).reshape(4, -1)
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, out)), (v * v + rotated) % params.t)
