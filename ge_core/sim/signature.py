"""Structural signatures of kernels: two nodes with the same signature cost the same on any profile.

A model repeats its layers (BERT's encoder layers, ResNet's blocks), so pricing each distinct kernel once
per schedule, and relabelling the result for its twins, makes simulation cheap. A kernel's cost depends
only on its op, attributes, the descs of its tensors (and which inputs are constants), and for a fused
kernel the same of every op in its body plus how they are wired (an op with a kernel of its own, such as a
LayerNormalization made by fusion, keeps its body for display only: that body is not part of the key);
names never matter. Keys are built only of hashable parts: an attribute of another kind (a large array)
makes the node unique, never wrongly shared.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY

SMALL_ARRAY = 64  # array attributes up to this many elements are part of the signature; larger: no sharing
LABELS = frozenset({"anchor_node"})  # attributes naming a node (UB fusion's anchor): names never matter


class _Unique(Exception):
    """The node cannot share its cost (an attribute that does not hash)."""


def signature(node: Node, graph: Graph) -> Hashable | None:
    """A key equal for nodes that cost the same, or None when the node must be priced alone. (Not hashed
    here: the caller's dict lookup hashes it, and hashing a fused body's key twice costs as much as it saves.)"""
    try:
        return _node_key(node, graph)
    except _Unique:
        return None


def _node_key(node: Node, graph: Graph) -> tuple[Any, ...]:
    descs, consts = graph.descs, graph.constants
    inputs: list[Any] = []
    for t in node.inputs:
        if t:
            d = descs[t]
            inputs.append((d.shape, d.dtype, d.format, t in consts))
        else:
            inputs.append(None)
    outputs = []
    for t in node.outputs:
        d = descs[t]
        outputs.append((d.shape, d.dtype, d.format))
    body = None  # the body of a fused kernel; an op with a kernel of its own keeps its body for display only
    if node.body is not None and REGISTRY.get(node.op_type, node.domain) is None:
        body = _body_key(node.body)
    return (node.op_type, node.domain, node.opset, tuple(inputs), tuple(outputs), _frozen(node.attrs), body)


def _body_key(body: Graph) -> tuple[Any, ...]:
    """The body's ops, wired by tensor numbers (first appearance): an inner input's desc is its producer's
    output desc or the fused node's own input desc, both in the key already; body constants add theirs."""
    wiring: dict[str, int] = {t: i for i, t in enumerate(body.inputs)}
    descs, consts = body.descs, body.constants
    nodes = []
    for n in body.nodes:
        inputs: list[Any] = []
        for t in n.inputs:
            if not t:
                inputs.append(None)
            elif t in consts:
                d = descs[t]
                inputs.append((wiring.setdefault(t, len(wiring)), d.shape, d.dtype, d.format))
            else:
                inputs.append(wiring.setdefault(t, len(wiring)))
        outputs = []
        for t in n.outputs:
            d = descs[t]
            outputs.append((wiring.setdefault(t, len(wiring)), d.shape, d.dtype, d.format))
        nested = _body_key(n.body) if n.body is not None and REGISTRY.get(n.op_type, n.domain) is None else None
        nodes.append((n.op_type, n.domain, _frozen(n.attrs), tuple(inputs), tuple(outputs), nested))
    return tuple(nodes), tuple(wiring.get(t) for t in body.outputs)


_PLAIN = frozenset({int, float, str, bytes, bool, type(None)})  # kept as they are by _freeze


def _frozen(attrs: dict[str, Any]) -> tuple[Any, ...]:
    """The attributes in their order (twins are built alike; a different order only loses a twin)."""
    if not attrs:
        return ()
    return tuple([(k, v if type(v) in _PLAIN else _freeze(v)) for k, v in attrs.items() if k not in LABELS])


def _freeze(value: Any) -> Hashable:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list or kind is tuple:  # the common case: a list of ints (pads, strides, perm)
        for v in value:
            if type(v) not in _PLAIN:
                break
        else:
            return tuple(value)
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        if value.size > SMALL_ARRAY:
            raise _Unique
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return _frozen(value)
    if isinstance(value, int | float | str | bytes | bool | np.generic) or value is None:
        return value
    raise _Unique
