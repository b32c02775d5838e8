"""Name scopes: `/encoder/layer.0/attention/MatMul` lives in scopes encoder › layer.0 › attention.

Exporters write the module path into node names (PyTorch `/m/encoder/layer.0/...`, TensorFlow
`resnet_v1/block1/unit_1/...`, FX-style `layer1.0.conv1`). `scope_path` reads a name's scopes and
`node_scope` a node's (a fused node's name joins its ops' names, so its scope comes from its body). The
graph canvas nests its layers by them (canvas_hierarchy.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from ge_core.ir.node import Node

Scope = tuple[str, ...]


def scope_path(name: str) -> Scope:
    """The scopes of a node name, outermost first; () for a name without any."""
    if "/" in name:
        parts = [p for p in name.split("/") if p]
    elif "." in name:
        parts = [p for p in name.split(".") if p]
        if len(parts) < 2 or parts[-1].isdigit():  # `Conv.3`, `relu.12`: a counter, not a scope
            return ()
    else:
        return ()
    return tuple(parts[:-1])


def node_scope(node: Node) -> Scope:
    """A node's scopes. A fused node is named after its ops joined by '+' (`/m/a/Add+/m/a/Mul`), which is
    no path: it lives in the deepest scope holding every op of its body."""
    if node.body is None or not node.body.nodes:
        return scope_path(node.name)
    return common_scope([node_scope(n) for n in node.body.nodes])


def common_scope(scopes: Iterable[Scope]) -> Scope:
    """The longest scope every one of `scopes` lies in (() when they share none, or there are none)."""
    common: Scope | None = None
    for scope in scopes:
        if common is None:
            common = scope
            continue
        depth = 0
        while depth < min(len(common), len(scope)) and common[depth] == scope[depth]:
            depth += 1
        common = common[:depth]
        if not common:
            break
    return common or ()
