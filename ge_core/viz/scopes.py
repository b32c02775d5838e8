"""Name scopes: `/encoder/layer.0/attention/MatMul` lives in scopes encoder › layer.0 › attention.

Exporters write the module path into node names (PyTorch `/m/encoder/layer.0/...`, TensorFlow
`resnet_v1/block1/unit_1/...`, FX-style `layer1.0.conv1`). The Graph page folds a big graph by these
scopes: `choose_folded_scopes` opens scopes shallowest and biggest first while the drawing stays within
its budget, and returns the scopes left folded (each becomes one box).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping

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


def scope_text(scope: Scope) -> str:
    return "/".join(scope)


class ScopeTree:
    """How many items sit under each scope and what each scope directly holds."""

    def __init__(self, paths: Mapping[str, Scope]) -> None:
        self.size: Counter[Scope] = Counter()
        self.children: dict[Scope, set[Scope]] = {(): set()}
        self.leaves: Counter[Scope] = Counter()  # items directly in a scope
        for path in paths.values():
            self.leaves[path] += 1
            for depth in range(len(path) + 1):
                prefix = path[:depth]
                self.size[prefix] += 1
                if depth:
                    self.children.setdefault(path[:depth - 1], set()).add(prefix)
                    self.children.setdefault(prefix, set())

    def width(self, scope: Scope) -> int:
        """Boxes shown when `scope` is open: its sub-scopes (folded) plus the items directly in it."""
        return len(self.children.get(scope, ())) + self.leaves[scope]


def choose_folded_scopes(paths: Mapping[str, Scope], budget: int, *, forced: Iterable[Scope] = (),
                         max_depth: int = 0) -> tuple[set[Scope], list[Scope]]:
    """The scopes to fold so that at most `budget` boxes remain, and the forced scopes that did not fit.

    `paths` maps each foldable item to its scope. Scopes open shallowest and biggest first; `forced` ones
    (opened by the user, or holding the selected node) open first, with their parents. With `max_depth`
    > 0, scopes at that depth or deeper stay folded unless forced.
    """
    tree = ScopeTree(paths)
    wanted = [f for f in dict.fromkeys(forced) if f in tree.size and f]
    count = tree.width(())
    opened: set[Scope] = {()}
    for scope in sorted({p for f in wanted for p in _prefixes(f)}, key=len):
        cost = tree.width(scope) - 1
        if scope[:-1] in opened and count + cost <= budget:
            opened.add(scope)
            count += cost
    heap = [(len(s), -tree.size[s], s) for o in opened for s in tree.children.get(o, ()) if s not in opened]
    heapq.heapify(heap)
    while heap:
        depth, _, scope = heapq.heappop(heap)
        cost = tree.width(scope) - 1
        if scope in opened or (max_depth and depth >= max_depth and cost > 0) or count + cost > budget:
            continue
        opened.add(scope)
        count += cost
        for child in tree.children.get(scope, ()):
            heapq.heappush(heap, (len(child), -tree.size[child], child))
    folded = {s for o in opened for s in tree.children.get(o, ()) if s not in opened}
    return folded, [f for f in wanted if f not in opened]


def _prefixes(scope: Scope) -> list[Scope]:
    return [scope[:i] for i in range(1, len(scope) + 1)]


def folded_scope_of(path: Scope, folded: set[Scope]) -> Scope | None:
    """The outermost folded scope holding an item with this path (None: the item is drawn itself)."""
    for depth in range(1, len(path) + 1):
        if path[:depth] in folded:
            return path[:depth]
    return None
