"""CsePass: common subexpression elimination over nodes and constants."""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.ops.registry import OpDef
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import control_pinned


@dataclass
class _Hasher:
    """Content digests of arrays, computed once per array object within a run."""

    cache: dict[int, tuple[np.ndarray, bytes]] = field(default_factory=dict)  # the array is held so its id stays its

    def digest(self, array: np.ndarray) -> bytes:
        hit = self.cache.get(id(array))
        if hit is None:
            hit = self.cache[id(array)] = (array, hashlib.blake2b(np.ascontiguousarray(array).tobytes(),
                                                                  digest_size=20).digest())
        return hit[1]

    def canon(self, value: Any) -> Hashable:
        """An attribute value as a hashable key: arrays by dtype, shape and content."""
        if isinstance(value, np.ndarray):
            if value.dtype.kind == "O":
                return ("obj", id(value))
            return ("nd", value.dtype.str, value.shape, self.digest(value))
        if isinstance(value, np.generic):
            return ("np", value.dtype.str, value.tobytes())
        if isinstance(value, list | tuple):
            return ("seq", *(self.canon(v) for v in value))
        if isinstance(value, int | float | str | bytes | bool | None):
            return (type(value).__name__, value)  # 1 and 1.0 are different attributes
        return ("obj", id(value))  # unknown kinds only match themselves


@dataclass(frozen=True)
class CsePass:
    """Compute each distinct expression once: merge nodes with the same op, inputs and attributes.

    Two nodes with the same operator, the same inputs and the same attributes compute the same tensor
    (exporters often repeat a Shape, a mask or a whole subgraph per layer); identical constants hold the
    same bytes twice. GE keeps the first and points the readers of the copy at it, which saves kernel
    launches and memory. Random operators are never merged: each call must draw new values.
    """

    name: ClassVar[str] = "CsePass"
    max_hash_bytes: int = 1 << 26  # larger constants are never compared (hashing them costs more than it saves)

    def run(self, graph: Graph) -> PassResult:
        hasher = _Hasher()
        returned = set(graph.outputs)  # the same names after the run: merges keep returned names
        consts = self._merge_constants(graph, hasher, returned)
        nodes = self._merge_nodes(graph, hasher, returned)
        if not consts and not nodes:
            return PassResult(False)
        return PassResult(True, (f"merged {nodes} duplicate node(s) and {consts} duplicate constant(s)",))

    def _merge_constants(self, graph: Graph, hasher: _Hasher, returned: set[str]) -> int:
        # Bucket by desc and a few sampled elements first: only constants that still collide get hashed.
        groups: dict[tuple[TensorDesc, bytes], list[str]] = {}
        for t, array in graph.constants.items():
            if array.dtype.kind != "O" and array.nbytes <= self.max_hash_bytes:
                groups.setdefault((graph.desc(t), _sample(array)), []).append(t)
        merged = 0
        for names in groups.values():
            first: dict[bytes, str] = {}
            for t in names if len(names) > 1 else ():
                keep = first.setdefault(hasher.digest(graph.constants[t]), t)
                if keep != t and _same_bytes(graph.constants[keep], graph.constants[t]):
                    merged += _redirect_constant(graph, t, keep, returned)
        return merged

    def _merge_nodes(self, graph: Graph, hasher: _Hasher, returned: set[str]) -> int:
        """One topological sweep: a node's inputs are already canonical when it is visited."""
        pinned = control_pinned(graph)
        seen: dict[Hashable, Node] = {}
        merged = 0
        for node in graph.nodes:
            key = _node_key(graph, node, hasher)
            if key is None:
                continue
            first = seen.setdefault(key, node)
            if first is not node and node.name not in pinned and _merge(graph, node, first, returned):
                merged += 1
        return merged


def _node_key(graph: Graph, node: Node, hasher: _Hasher) -> Hashable | None:
    """What the node computes, or None when it must never be merged (random, or not foldable either)."""
    op = REGISTRY.for_node(node)
    if op is None or not op.foldable or not op.deterministic or not _in_inference(graph, node, op):
        return None
    inputs = node.inputs
    if op.commutative and len(inputs) == 2 and all(inputs):  # a+b is b+a: the key sorts the inputs
        inputs = tuple(sorted(inputs))
    attrs = tuple(sorted((k, hasher.canon(v)) for k, v in node.attrs.items()))
    return (op.domain, node.op_type, node.opset, inputs, attrs, tuple(sorted(node.control_inputs)),
            len(node.outputs))


def _in_inference(graph: Graph, node: Node, op: OpDef) -> bool:
    """An op with a training_mode input (Dropout) is deterministic only in inference: that input absent, or
    a constant False."""
    index = op.training_input
    if index is None or not node.has_input(index):
        return True
    flag = graph.constants.get(node.input(index))
    return flag is not None and not bool(np.asarray(flag).reshape(-1)[0])


def _merge(graph: Graph, dup: Node, first: Node, returned: set[str]) -> bool:
    """Point the readers of `dup`'s outputs at `first`'s and erase `dup`; graph output names survive."""
    pairs = list(zip(dup.outputs, first.outputs, strict=True))
    if any(d in returned and f in returned for d, f in pairs):
        return False  # both names are part of the interface: keep both nodes
    for d, f in pairs:
        if d in returned:
            graph.replace_all_uses(d, f)  # also moves the graph output to f, renamed back below
        else:
            _point_readers(graph, d, f)
    graph.erase(dup)
    for d, f in pairs:
        if d in returned:
            graph.rename_tensor(f, d)  # as bypass does: the kept output takes the returned name
    return True


def _point_readers(graph: Graph, old: str, new: str) -> None:
    """replace_all_uses for a tensor that is not a graph output, without scanning the output list."""
    for user in graph.users(old):
        for i, t in enumerate(user.inputs):
            if t == old:
                graph.set_input(user, i, new)


def _sample(array: np.ndarray, count: int = 64) -> bytes:
    """Up to `count` evenly spaced elements: tells most different constants apart without hashing."""
    flat = array.reshape(-1)
    return flat[:: max(1, flat.size // count)][:count].tobytes()


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Digests matched; compare the bytes themselves so that a merge never rests on a hash alone."""
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _redirect_constant(graph: Graph, dup: str, keep: str, returned: set[str]) -> int:
    """Readers of constant `dup` read `keep`; `dup` goes unless it is a graph output (the interface)."""
    users = graph.users(dup)
    _point_readers(graph, dup, keep)
    if dup not in returned:
        graph.remove_constant(dup)
        return 1
    return 1 if users else 0
