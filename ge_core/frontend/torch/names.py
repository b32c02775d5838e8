"""GE node names from the module tree: `/encoder/layer.0/attention/self/query/linear`.

torch.export records in each node's `nn_module_stack` the modules whose forward produced it; the deepest
one's path (`encoder.layer.0.attention.self.query`) becomes the node's name scope, split at the dots
except before an index (`layer.0` is one scope: the ModuleList entry, as the ONNX exporter names it).
The graph view folds by these scopes (ge_core/viz/scopes.py).
"""

from __future__ import annotations

from typing import Any


def module_path(n: Any) -> str:
    """The dotted path of the innermost module that produced FX node `n` ('' for the root module)."""
    stack = n.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path, _ = list(stack.values())[-1]
    return str(path)


def scopes(path: str) -> list[str]:
    """`encoder.layer.0.attention` -> ['encoder', 'layer.0', 'attention']."""
    parts: list[str] = []
    for part in (p for p in path.split(".") if p):
        if part.isdigit() and parts:
            parts[-1] = f"{parts[-1]}.{part}"
        else:
            parts.append(part)
    return parts


def node_name(n: Any) -> str:
    """The GE name of FX node `n`: its scopes then its FX name, or the FX name alone at the root."""
    parts = scopes(module_path(n))
    return "/" + "/".join([*parts, n.name]) if parts else str(n.name)
