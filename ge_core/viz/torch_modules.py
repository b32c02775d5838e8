"""Where each GE node of a PyTorch model came from: its module in the module tree, and that module's class.

from_torch names every node after the innermost module whose forward produced it
(`/layer2.0/downsample.0/conv2d_7`, frontend/torch/names.py) and records every module path's class in
graph.metadata["torch_modules"] (JSON). These tables read both back; a graph that did not come from
PyTorch has no such metadata and gets None.
"""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd

from ge_core.frontend.torch.names import scopes
from ge_core.ir.graph import Graph

ROOT = "(root)"  # how the tables write the top module's path ('')


def torch_modules(graph: Graph) -> dict[str, str] | None:
    """Module path -> class name, or None for a graph that did not come from from_torch."""
    text = graph.metadata.get("torch_modules")
    if not text:
        return None
    try:
        modules = json.loads(text)
    except ValueError:
        return None  # an uploaded ONNX file may carry anything under that key: not ours to trust
    if not isinstance(modules, dict):
        return None
    return {str(path): str(kind) for path, kind in modules.items()}


def node_origins(graph: Graph) -> pd.DataFrame | None:
    """One row per GE node: node, op, module path, module class (None without torch_modules)."""
    modules = torch_modules(graph)
    if modules is None:
        return None
    by_scope = {"/" + "/".join(scopes(path)) if path else "": path for path in modules}
    rows = []
    for node in graph.nodes:
        path = _module_of(node.name, by_scope)
        rows.append({"node": node.name, "op": node.op_type, "module": path or ROOT,
                     "class": modules.get(path, "")})
    return pd.DataFrame(rows, columns=["node", "op", "module", "class"])


def module_table(graph: Graph) -> pd.DataFrame | None:
    """One row per module of the tree (containers too): path, class, the GE nodes it produced directly and
    their ops ("Conv x1, Relu x1"); None without torch_modules."""
    modules = torch_modules(graph)
    origins = node_origins(graph)
    if modules is None or origins is None:
        return None
    ops: dict[str, Counter[str]] = {}
    for module, op in zip(origins["module"], origins["op"], strict=True):
        ops.setdefault(module, Counter())[op] += 1
    rows = []
    for path, kind in modules.items():
        counts = ops.get(path or ROOT, Counter())
        rows.append({"module": path or ROOT, "class": kind, "GE nodes": sum(counts.values()),
                     "ops": ", ".join(f"{op} x{n}" for op, n in sorted(counts.items()))})
    return pd.DataFrame(rows, columns=["module", "class", "GE nodes", "ops"])


def _module_of(name: str, by_scope: dict[str, str]) -> str:
    """The module path of the deepest known scope in a node's name ('' for the root)."""
    scope = name.rsplit("/", 1)[0] if name.startswith("/") else ""
    while scope and scope not in by_scope:
        scope = scope.rsplit("/", 1)[0]
    return by_scope.get(scope, "")
