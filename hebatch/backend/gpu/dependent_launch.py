"""Programmatic dependent launch in recorded CUDA graphs (Hopper and later GPUs).

A graph replays its kernels with ordinary edges: a kernel starts only once the one before it has finished,
and between the two the GPU sits idle while the next grid is launched and its blocks spread over the SMs.
One operation on one ciphertext is a dozen such kernels of a few microseconds each.

Every kernel of this package begins with `await_prerequisites()` (kernels/launch.cuh): it waits there until
the kernels it depends on have finished and their writes are visible, then lets its own dependents be
launched. So an edge into one of these kernels may be made programmatic: the dependent grid is launched
while its prerequisite still runs, its blocks wait resident, and they go on the moment it ends. Edges into
any other kernel (CuPy's own), and edges from copies or memsets, stay ordinary.

`overlapped(graph)` returns an executable copy of a captured graph so edited, or the graph itself where
this cannot be done (no driver entry points for it, a GPU older than sm_90, HEBATCH_DEPENDENT_LAUNCH=0).
Either has `launch(stream=...)`.
"""

from __future__ import annotations

import ctypes
import os
import threading
from functools import cache, lru_cache

ENV = "HEBATCH_DEPENDENT_LAUNCH"  # "0": graphs keep ordinary edges
_DRIVER_API_VERSION = 12030  # the graph-edge calls with edge data (CUDA 12.3)
_NODE_KERNEL = 0  # CU_GRAPH_NODE_TYPE_KERNEL
_PORT_PROGRAMMATIC = 1  # CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC: all blocks triggered or exited
_EDGE_PROGRAMMATIC = 1  # CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC

_LOCK = threading.Lock()
_AWAITING: set[int] = set()  # CUfunction handles of this package's kernels


def note_kernel(kernel) -> None:
    """Notes a CuPy RawKernel of kernels/*.cu (all of which start with await_prerequisites) so that
    edges into it may become programmatic."""
    function = getattr(kernel, "kernel", None)
    handle = getattr(function, "ptr", None)
    if handle:
        with _LOCK:
            _AWAITING.add(int(handle))


class _EdgeData(ctypes.Structure):  # CUgraphEdgeData
    _fields_ = [
        ("from_port", ctypes.c_ubyte),
        ("to_port", ctypes.c_ubyte),
        ("type", ctypes.c_ubyte),
        ("reserved", ctypes.c_ubyte * 5),
    ]


_SIGNATURES = {
    "cuGraphClone": (ctypes.c_void_p, ctypes.c_void_p),
    "cuGraphGetNodes": (ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)),
    "cuGraphNodeGetType": (ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)),
    "cuGraphKernelNodeGetParams": (ctypes.c_void_p, ctypes.c_void_p),
    "cuGraphGetEdges": (
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_size_t),
    ),
    "cuGraphRemoveDependencies": (ctypes.c_void_p,) * 4 + (ctypes.c_size_t,),
    "cuGraphAddDependencies": (ctypes.c_void_p,) * 4 + (ctypes.c_size_t,),
    "cuGraphInstantiateWithFlags": (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong),
    "cuGraphLaunch": (ctypes.c_void_p, ctypes.c_void_p),
    "cuGraphExecDestroy": (ctypes.c_void_p,),
    "cuGraphDestroy": (ctypes.c_void_p,),
}


@lru_cache(maxsize=1)
def _driver() -> dict | None:
    """The driver's graph calls in their CUDA 12.3 versions, by name; None where the driver lacks them."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        lookup = lib.cuGetProcAddress_v2
    except (OSError, AttributeError):
        return None
    lookup.restype = ctypes.c_int
    pointer = ctypes.POINTER(ctypes.c_void_p)
    lookup.argtypes = (ctypes.c_char_p, pointer, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_void_p)
    calls = {}
    for name, args in _SIGNATURES.items():
        address = ctypes.c_void_p()
        if lookup(name.encode(), ctypes.byref(address), _DRIVER_API_VERSION, 0, None) != 0 or not address.value:
            return None
        calls[name] = ctypes.CFUNCTYPE(ctypes.c_int, *args)(address.value)
    return calls


def _check(result: int, call: str) -> None:
    if result != 0:
        raise RuntimeError(f"{call} failed with CUresult {result}")


@cache
def _supported(device: int) -> bool:
    import cupy

    return int(cupy.cuda.Device(device).compute_capability) >= 90


class OverlappedGraph:
    """An executable graph whose edges into this package's kernels are programmatic (see the module
    docstring). Keeps the captured graph it was made from."""

    def __init__(self, graph, calls: dict):
        self.source = graph  # owns the captured graph; the executable is a copy
        self._calls = calls
        self.programmatic_edges = 0
        self._exec = ctypes.c_void_p()
        clone = ctypes.c_void_p()
        _check(calls["cuGraphClone"](ctypes.byref(clone), ctypes.c_void_p(graph.graph)), "cuGraphClone")
        try:
            self.programmatic_edges = self._make_programmatic(clone)
            _check(calls["cuGraphInstantiateWithFlags"](ctypes.byref(self._exec), clone, 0), "cuGraphInstantiate")
        finally:
            calls["cuGraphDestroy"](clone)

    def _make_programmatic(self, graph) -> int:
        calls = self._calls
        count = ctypes.c_size_t(0)
        _check(calls["cuGraphGetNodes"](graph, None, ctypes.byref(count)), "cuGraphGetNodes")
        nodes = (ctypes.c_void_p * count.value)()
        _check(calls["cuGraphGetNodes"](graph, nodes, ctypes.byref(count)), "cuGraphGetNodes")
        kernels, awaiting = set(), set()
        params = (ctypes.c_void_p * 16)()  # CUDA_KERNEL_NODE_PARAMS_v2: the function handle first
        kind = ctypes.c_int()
        with _LOCK:
            ours = set(_AWAITING)
        for node in nodes:
            _check(calls["cuGraphNodeGetType"](node, ctypes.byref(kind)), "cuGraphNodeGetType")
            if kind.value != _NODE_KERNEL:
                continue
            kernels.add(node)
            _check(calls["cuGraphKernelNodeGetParams"](node, params), "cuGraphKernelNodeGetParams")
            if params[0] in ours:
                awaiting.add(node)
        edges = ctypes.c_size_t(0)
        _check(calls["cuGraphGetEdges"](graph, None, None, None, ctypes.byref(edges)), "cuGraphGetEdges")
        n = edges.value
        sources, targets, data = (ctypes.c_void_p * n)(), (ctypes.c_void_p * n)(), (_EdgeData * n)()
        _check(calls["cuGraphGetEdges"](graph, sources, targets, data, ctypes.byref(edges)), "cuGraphGetEdges")
        chosen = [
            i
            for i in range(n)
            if sources[i] in kernels and targets[i] in awaiting and data[i].type == 0 and data[i].from_port == 0
        ]
        if not chosen:
            return 0
        k = len(chosen)
        src = (ctypes.c_void_p * k)(*(sources[i] for i in chosen))
        dst = (ctypes.c_void_p * k)(*(targets[i] for i in chosen))
        old = (_EdgeData * k)(*(data[i] for i in chosen))
        new = (_EdgeData * k)()
        for edge in new:
            edge.from_port, edge.type = _PORT_PROGRAMMATIC, _EDGE_PROGRAMMATIC
        _check(calls["cuGraphRemoveDependencies"](graph, src, dst, old, k), "cuGraphRemoveDependencies")
        _check(calls["cuGraphAddDependencies"](graph, src, dst, new, k), "cuGraphAddDependencies")
        return k

    def launch(self, stream=None) -> None:
        import cupy

        handle = (stream or cupy.cuda.get_current_stream()).ptr
        _check(self._calls["cuGraphLaunch"](self._exec, ctypes.c_void_p(handle)), "cuGraphLaunch")

    def __del__(self):
        if self._exec.value:
            try:
                self._calls["cuGraphExecDestroy"](self._exec)
            except Exception:  # interpreter shutdown
                pass


def overlapped(graph):
    """An executable copy of the captured CuPy graph with programmatic edges into this package's kernels,
    or the graph itself where that cannot be made."""
    if os.environ.get(ENV) == "0" or not getattr(graph, "graph", 0):  # switched off, or a stand-in for CuPy
        return graph
    import cupy

    calls = _driver()
    if calls is None or not _supported(cupy.cuda.Device().id):
        return graph
    return OverlappedGraph(graph, calls)
