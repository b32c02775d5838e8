"""A lossless, pickle-free form of a Graph: JSON for its structure, named numpy arrays for its values.

`graph_to_record(graph)` returns (record, arrays): the record is plain JSON (names, ops, edges, every
TensorDesc, attributes, fused bodies and subgraphs nested), the arrays a flat {key: ndarray} map holding
constants and array-valued attributes (saved with numpy's .npy format, never pickled). `graph_from_record`
rebuilds an equal graph; `graph_from_record(*graph_to_record(g)).to_text() == g.to_text()`.

Used by the offline model (ge_core/offline) and anything that must store a compiled graph exactly; the
text and JSON forms of ir/text.py are for reading, not for loading back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ge_core.errors import ModelError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc

Arrays = dict[str, np.ndarray]


class _Store(dict[str, np.ndarray]):
    """The arrays written so far; one array object (graph copies share their constants) is stored once."""

    def __init__(self) -> None:
        super().__init__()
        self.keys_by_id: dict[int, str] = {}

    def put(self, key: str, value: np.ndarray) -> str:
        known = self.keys_by_id.get(id(value))
        if known is not None and self[known] is value:
            return known
        self[key] = value
        self.keys_by_id[id(value)] = key
        return key


def graph_to_record(graph: Graph, prefix: str = "g") -> tuple[dict[str, Any], Arrays]:
    records, arrays = graphs_to_records({prefix: graph})
    return records[prefix], arrays


KNOWN = "known:"  # an array key naming a constant of the `known` graph: not stored, looked up by name


def graphs_to_records(graphs: Mapping[str, Graph], known: Graph | None = None, stored: Arrays | None = None
                      ) -> tuple[dict[str, dict[str, Any]], Arrays]:
    """Several graphs at once, their shared arrays (a graph and its compiled copy's weights) stored once.
    Arrays that are constants of `known` (the same objects: graph copies share them) are not returned:
    the records name them `known:<tensor>`, and `known_arrays(known)` gives them back when reading.
    `stored`: arrays returned by an earlier call (same objects are named by their keys, not returned)."""
    store = _Store()
    for name, value in known.constants.items() if known is not None else ():
        store.put(KNOWN + name, value)
    for key, value in (stored or {}).items():
        store.put(key, value)
    named = set(store)
    records = {prefix: _graph(graph, prefix, store) for prefix, graph in graphs.items()}
    return records, {k: v for k, v in store.items() if k not in named}


def known_arrays(known: Graph) -> dict[str, np.ndarray]:
    """The arrays `graphs_to_records(..., known=known)` left out, under the keys its records use."""
    return {KNOWN + name: value for name, value in known.constants.items()}


def graph_from_record(record: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Graph:
    try:
        return _load_graph(record, arrays)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ModelError(f"the stored graph is malformed ({type(exc).__name__}: {exc}).",
                         hint="The file is corrupt or from another version; compile the model again.") from None


def graph_digest(graph: Graph) -> str:
    """A sha256 of the graph's whole content (structure, descs, attributes, every constant's bytes)."""
    record, arrays = graph_to_record(graph)
    digest = hashlib.sha256(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())
    for key in sorted(arrays):
        value = np.ascontiguousarray(arrays[key])
        digest.update(f"{key}:{value.dtype.str}:{value.shape}".encode())
        if value.dtype.kind in "OUS":
            digest.update(repr(value.tolist()).encode())
        else:  # the bytes in place (no copy of a model's weights just to hash them)
            digest.update(value.reshape(-1).view(np.uint8).data)
    return digest.hexdigest()


def desc_to_json(desc: TensorDesc) -> dict[str, Any]:
    return {"shape": list(desc.shape), "dtype": desc.dtype, "format": desc.format,
            "origin_shape": None if desc.origin_shape is None else list(desc.origin_shape),
            "origin_format": desc.origin_format,
            "shape_range": None if desc.shape_range is None else [list(r) for r in desc.shape_range]}


def desc_from_json(data: Mapping[str, Any]) -> TensorDesc:
    origin = data.get("origin_shape")
    ranges = data.get("shape_range")
    return TensorDesc(tuple(int(d) for d in data["shape"]), str(data["dtype"]), str(data.get("format", "ND")),
                      None if origin is None else tuple(int(d) for d in origin), data.get("origin_format"),
                      None if ranges is None else tuple((int(lo), int(hi)) for lo, hi in ranges))


# -- writing -------------------------------------------------------------------------------------------

def _graph(graph: Graph, prefix: str, arrays: _Store) -> dict[str, Any]:
    constants = [{"name": name, "array": arrays.put(f"{prefix}.c{i}", value)}
                 for i, (name, value) in enumerate(graph.constants.items())]
    return {
        "name": graph.name, "opset": dict(graph.opset), "inputs": list(graph.inputs), "outputs": graph.outputs,
        "captures": list(graph.captures),
        "constants": constants, "descs": {t: desc_to_json(d) for t, d in graph.descs.items()},
        "input_dim_params": {t: list(p) for t, p in graph.input_dim_params.items()},
        "metadata": dict(graph.metadata),
        "nodes": [_node(n, f"{prefix}.n{i}", arrays) for i, n in enumerate(graph.nodes)],
    }


def _node(node: Node, prefix: str, arrays: _Store) -> dict[str, Any]:
    out: dict[str, Any] = {"name": node.name, "op_type": node.op_type, "domain": node.domain, "opset": node.opset,
                           "inputs": list(node.inputs), "outputs": list(node.outputs),
                           "control_inputs": list(node.control_inputs),
                           "attrs": {k: _value(v, f"{prefix}.a.{k}", arrays) for k, v in node.attrs.items()}}
    if node.body is not None:
        out["body"] = _graph(node.body, f"{prefix}.body", arrays)
    if node.subgraphs:
        out["subgraphs"] = {k: _graph(g, f"{prefix}.s.{k}", arrays) for k, g in node.subgraphs.items()}
        out["num_captures"] = node.num_captures
    return out


def _value(value: Any, key: str, arrays: _Store) -> Any:
    """An attribute as tagged JSON: {"t": kind, "v": value}; arrays go to `arrays` under `key`."""
    if isinstance(value, np.ndarray):
        return {"t": "array", "v": arrays.put(key, value)}
    if isinstance(value, np.generic):
        return {"t": "scalar", "v": arrays.put(key, np.asarray(value))}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int):
        return {"t": "int", "v": value}
    if isinstance(value, float):
        return {"t": "float", "v": repr(value)}  # repr keeps inf, nan and every bit of a double
    if isinstance(value, str):
        return {"t": "str", "v": value}
    if isinstance(value, bytes):
        return {"t": "bytes", "v": value.hex()}
    if value is None:
        return {"t": "none", "v": None}
    if isinstance(value, Graph):
        return {"t": "graph", "v": _graph(value, key, arrays)}
    if isinstance(value, list | tuple):
        return {"t": "list" if isinstance(value, list) else "tuple",
                "v": [_value(v, f"{key}.{i}", arrays) for i, v in enumerate(value)]}
    raise ModelError(f"attribute value of type {type(value).__name__} cannot be stored ({key}).")


# -- reading -------------------------------------------------------------------------------------------

def _load_graph(record: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Graph:
    graph = Graph(str(record["name"]), {str(k): int(v) for k, v in record["opset"].items()})
    descs = {t: desc_from_json(d) for t, d in record["descs"].items()}
    params = record.get("input_dim_params", {})
    for name in record["inputs"]:
        graph.add_input(name, descs[name], params.get(name))
    for name in record.get("captures", []):
        graph.add_capture(name, descs[name])
    for item in record["constants"]:
        graph.add_constant(item["name"], np.asarray(arrays[item["array"]]))
        graph.set_desc(item["name"], descs[item["name"]])
    for item in record["nodes"]:
        node = _load_node(item, arrays)
        subgraphs = {k: _load_graph(g, arrays) for k, g in item.get("subgraphs", {}).items()}
        graph.add_node(node.op_type, node.explicit_inputs, node.outputs, node.attrs, name=node.name,
                       domain=node.domain, opset=node.opset, control_inputs=node.control_inputs, body=node.body,
                       subgraphs=subgraphs, captures=node.captures)
        for t in node.outputs:
            if t in descs:
                graph.set_desc(t, descs[t])
    graph.set_outputs(list(record["outputs"]))
    graph.metadata.update({str(k): str(v) for k, v in record.get("metadata", {}).items()})
    return graph


def _load_node(item: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Node:
    body = _load_graph(item["body"], arrays) if "body" in item else None
    attrs = {k: _load_value(v, arrays) for k, v in item["attrs"].items()}
    captured = int(item.get("num_captures", 0))
    if not 0 <= captured <= len(item["inputs"]):
        raise ValueError(f"node {item['name']!r} has {captured} captured inputs of {len(item['inputs'])}")
    return Node(str(item["name"]), str(item["op_type"]), tuple(item["inputs"]), tuple(item["outputs"]), attrs,
                tuple(item["control_inputs"]), str(item["domain"]), int(item["opset"]), body, num_captures=captured)


def _load_value(tagged: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Any:
    kind, value = tagged["t"], tagged["v"]
    if kind == "array":
        return np.asarray(arrays[value])
    if kind == "scalar":
        return np.asarray(arrays[value])[()]
    if kind == "float":
        return float(value)
    if kind == "bytes":
        return bytes.fromhex(value)
    if kind == "graph":
        return _load_graph(value, arrays)
    if kind in ("list", "tuple"):
        items = [_load_value(v, arrays) for v in value]
        return items if kind == "list" else tuple(items)
    if kind in ("bool", "int", "str", "none"):
        return value
    raise ValueError(f"unknown attribute kind {kind!r}")
