import numpy as np
import pytest

from hebatch.backend import gpu_available

_HAS_GPU = gpu_available()


def pytest_collection_modifyitems(config, items):
    if _HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU with CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def xp(request):
    """The array module of each backend: NumPy always, CuPy where a GPU is present."""
    if request.param == "cpu":
        return np
    import cupy

    return cupy


def to_host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


@pytest.fixture(scope="module")
def client():
    """The Dask tests' client, one per module: two single-threaded workers inside this process."""
    from hebatch import dist

    with dist.cluster(
        device="cpu", n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", verbose=False
    ) as c:
        yield c
