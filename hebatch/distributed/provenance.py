"""What made a batch: JSON descriptions of the Dask arrays hebatch builds, recorded with every output.

Sources (`from_numpy`, `from_zarr`, readers of files) and the batched transforms (`ntt`, `intt`,
`polymul`, `map_chunks`) register a description of the array they return under its Dask name;
`describe` gives it back, seeing through rechunks (they do not change values). An array built
otherwise is described by its Dask name: a token of its graph, equal for the same computation in any
process when its inputs are deterministic. `to_zarr` records the description in the store and
compares it when a rerun resumes, so that results of different jobs never mix in one store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import OrderedDict

import numpy as np
from dask.base import tokenize

_MAX_RECORDS = 4096  # descriptions kept (oldest dropped first); each is a small dict
_records: OrderedDict[str, dict] = OrderedDict()
_later: dict[str, dict] = {}  # fields of records computed on first use
# Dask layers that only regroup values: a rechunked array is described by what it rechunks.
_VALUE_PRESERVING = ("rechunk-",)


def jsonable(value):
    """value as JSON (ints beyond 2^53 as strings, so that every JSON reader keeps them exact)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        value = int(value)
        return value if abs(value) < 2**53 else str(value)
    if value is None or isinstance(value, (str, float)):
        return value
    if isinstance(value, np.dtype):
        return str(value)
    raise TypeError(f"a provenance value must be JSON data, got {type(value).__name__}")


def record(x, description: dict, later: dict | None = None):
    """Register description (JSON data) as what the Dask array x computes; returns x.

    later: fields of the description computed only when it is first asked for (costly ones, such as
    a digest of the data), as {field: function of no arguments}."""
    _records[x.name] = jsonable(description)
    _records.move_to_end(x.name)
    if later:
        _later[x.name] = dict(later)
    while len(_records) > _MAX_RECORDS:
        _later.pop(_records.popitem(last=False)[0], None)
    return x


def describe(x) -> dict:
    """The registered description of Dask array x (through rechunks), else {"graph": its Dask name}."""
    name = x.name
    graph = x.__dask_graph__()
    while name not in _records and name.startswith(_VALUE_PRESERVING):
        below = graph.dependencies.get(name, set()) if hasattr(graph, "dependencies") else set()
        if len(below) != 1:
            break
        name = next(iter(below))
    if name not in _records:
        return {"graph": x.name}
    pending = _later.get(name, {})
    for field, compute in list(pending.items()):
        try:
            value = compute()
        except LookupError:  # its data is gone: a value no other array's description can equal
            value = f"unknown ({name})"
        _records[name][field] = jsonable(value)
        del pending[field]
    _later.pop(name, None)
    return json.loads(json.dumps(_records[name]))  # a copy the caller may change


def piece_digest(piece) -> str:
    """A token of the values of one host array."""
    return tokenize(piece.shape, str(piece.dtype), piece)


def content_digest(digests) -> str:
    """The digest of a batch from the digests of its pieces, in order."""
    total = hashlib.sha256()
    for digest in digests:
        total.update(digest.encode())
    return total.hexdigest()


def digest(description: dict) -> str:
    """SHA-256 of a description (of its canonical JSON)."""
    text = json.dumps(jsonable(description), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def step(operation) -> dict:
    """The description of one step of a fused chunk task (a dataclass of batch.py): what it computes.

    Fields that do not change the values (the algorithm, whether entries are checked) are left out."""
    fields = {f.name: getattr(operation, f.name) for f in dataclasses.fields(operation)}
    kind = type(operation).__name__.lstrip("_").lower()
    out: dict = {}
    if kind == "transform":
        out["operation"] = "intt" if fields["inverse"] else "ntt"
        out["input_order"] = out["output_order"] = "natural"
    else:
        out["operation"] = kind
    for key, value in fields.items():
        if key in ("algorithm", "check", "names"):
            continue
        if key == "modulus":
            key = "moduli"
        if callable(value):
            value = f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', type(value).__name__)}"
            out["function_token"] = tokenize(operation)
        out[key] = value
    return out


def chain(y, steps, operands):
    """Register the description of a fused chain (its steps, then what each operand is); returns y."""
    return record(y, {"steps": [step(s) for s in steps], "inputs": [describe(a) for a in operands]})


def differences(old, new, path: str = "") -> list[str]:
    """'field: old vs new' for every leaf that differs between two descriptions (dotted paths)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in old:
                out.append(f"{where}: (absent) vs {_show(new[key])}")
            elif key not in new:
                out.append(f"{where}: {_show(old[key])} vs (absent)")
            else:
                out.extend(differences(old[key], new[key], where))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out = []
        for i, (a, b) in enumerate(zip(old, new)):
            out.extend(differences(a, b, f"{path}[{i}]"))
        return out
    return [] if old == new else [f"{path or 'description'}: {_show(old)} vs {_show(new)}"]


def _show(value) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 200 else text[:197] + "..."
