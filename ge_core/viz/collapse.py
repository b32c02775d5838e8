"""Folding a drawing until it fits its budget of boxes (the browser lays out ~1,500 nodes at most).

Stages, each run only while the drawing is still over budget, gentlest first:
1. constant subgraphs (nodes computing from constants alone, e.g. a zoo model's ConstantOfShape weights)
   fold into the op they feed;
2. name scopes fold into one box each, shallowest and biggest scopes staying open (scopes.py);
3. structural blocks (biconnected pieces: residual, dense, inception blocks) fold into one box each
   (blocks.py), for graphs whose names carry no scopes;
4. runs of consecutive nodes fold into chunks, farthest from the selected node first (never fails).
Items the user pinned (the selected node), opened (a box they expanded), graph inputs/outputs and nodes
of an expanded fused body are never folded.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ge_core.viz.blocks import block_interiors
from ge_core.viz.scopes import Scope, choose_folded_scopes, folded_scope_of, scope_text

MIN_CHUNK = 20  # a chunk smaller than this tells the user little


@dataclass
class Folding:
    """The items of a drawing while it is being folded. Units are nodes (by reference) and graph
    inputs/outputs (`in:`/`out:` ids); every unit belongs to one item; boxes are items of many units."""

    order: list[str]  # item ids, drawing order (topological)
    edges: list[tuple[str, str]]  # unit-level data edges
    foldable: set[str]  # items that may go into a box
    members: dict[str, list[str]] = field(default_factory=dict)  # item id -> units
    kinds: dict[str, str] = field(default_factory=dict)  # box id -> "scope", "block" or "chunk"
    titles: dict[str, str] = field(default_factory=dict)  # box id -> what it is
    absorbed: dict[str, int] = field(default_factory=dict)  # op item -> constant-subgraph nodes folded in
    notes: list[str] = field(default_factory=list)  # what could not be done, in words
    group: dict[str, str] = field(default_factory=dict)  # unit -> item

    def __post_init__(self) -> None:
        self.members = {i: [i] for i in self.order}
        self.group = {i: i for i in self.order}

    def item_edges(self) -> set[tuple[str, str]]:
        g = self.group
        return {(g[a], g[b]) for a, b in self.edges if g[a] != g[b]}

    def merge(self, boxes: dict[str, list[str]], kind: str, titles: dict[str, str]) -> None:
        """Replace each box's items by one box item, drawn where its first item was."""
        into = {item: box for box, items in boxes.items() for item in items}
        for box, items in boxes.items():
            units = [u for item in items for u in self.members.pop(item)]
            for u in units:
                self.group[u] = box
            self.members[box] = units
            self.kinds[box] = kind
            self.titles[box] = titles[box]
            self.foldable.add(box)
            for item in items:
                self.absorbed.pop(item, None)
        order: list[str] = []
        placed: set[str] = set()
        for item in self.order:
            target = into.get(item)
            if target is None:
                order.append(item)
            elif target not in placed:
                placed.add(target)
                order.append(target)
        self.order = order


def fold_to_budget(work: Folding, budget: int, *, is_constant: Callable[[str], bool],
                   scopes: dict[str, Scope], opened: Iterable[str] = (), pinned: Iterable[str] = (),
                   scope_depth: int = 0) -> Folding:
    """Fold `work` in place until it has at most `budget` items (see the module doc); returns it."""
    opened = set(opened)
    pinned_scopes = [scopes[p] for p in pinned if p in scopes]
    if len(work.order) > budget:
        absorb_constants(work, is_constant)
    if len(work.order) > budget or scope_depth:
        fold_scopes(work, budget, scopes, opened, pinned_scopes, scope_depth)
    if len(work.order) > budget:
        fold_blocks(work, budget, opened)
    if len(work.order) > budget:
        fold_chunks(work, budget, set(pinned), opened)
    return work


def absorb_constants(work: Folding, is_constant: Callable[[str], bool]) -> None:
    """Fold each node that computes from constants alone into the first node it feeds."""
    readers: dict[str, list[str]] = {}
    for a, b in work.edges:
        readers.setdefault(a, []).append(b)
    position = {u: i for i, u in enumerate(work.order)}
    into: dict[str, str] = {}
    for item in reversed(work.order):  # readers come later: their own target is known by then
        targets = [r for r in readers.get(item, ()) if r in work.foldable]
        if item in work.foldable and is_constant(item) and targets:
            first = min(targets, key=lambda r: position.get(r, math.inf))
            into[item] = into.get(first, first)
    if not into:
        return
    for item, target in into.items():
        work.members[target] += work.members.pop(item)
        work.absorbed[target] = work.absorbed.get(target, 0) + 1
        for u in work.members[target]:
            work.group[u] = target
    work.order = [i for i in work.order if i not in into]


def fold_scopes(work: Folding, budget: int, scopes: dict[str, Scope], opened: set[str],
                pinned: list[Scope], scope_depth: int) -> None:
    paths = {i: scopes.get(i, ()) for i in work.order if i in work.foldable}
    fixed = len(work.order) - len(paths)
    forced = [*pinned, *(tuple(o.removeprefix("scope:").split("/")) for o in opened if o.startswith("scope:"))]
    folded, refused = choose_folded_scopes(paths, budget - fixed, forced=forced, max_depth=scope_depth)
    boxes: dict[str, list[str]] = {}
    for item, path in paths.items():
        scope = folded_scope_of(path, folded)
        if scope is not None:
            boxes.setdefault("scope:" + scope_text(scope), []).append(item)
    boxes = {b: items for b, items in boxes.items() if len(items) > 1}
    if boxes:
        work.merge(boxes, "scope", {b: b.removeprefix("scope:") for b in boxes})
    if refused:
        work.notes.append(f"{len(refused)} scope(s) could not be opened within the limit: "
                          + ", ".join(scope_text(s) for s in refused[:3]))


def fold_blocks(work: Folding, budget: int, opened: set[str]) -> None:
    interiors = block_interiors(work.order, work.item_edges())
    candidates = [i for i in interiors if len(i) > 1 and all(x in work.foldable for x in i)
                  and _box_id("block", i) not in opened]
    chosen: list[list[str]] = []
    excess = len(work.order) - budget
    while excess > 0 and candidates:
        enough = [c for c in candidates if len(c) - 1 >= excess]
        pick = min(enough, key=len) if enough else candidates[0]  # candidates are biggest first
        candidates.remove(pick)
        chosen.append(pick)
        excess -= len(pick) - 1
    if chosen:
        boxes = {_box_id("block", c): c for c in chosen}
        work.merge(boxes, "block", {b: f"block of {len(_units(work, c)):,} nodes" for b, c in boxes.items()})


def fold_chunks(work: Folding, budget: int, pinned: set[str], opened: set[str]) -> None:
    foldable = [i for i in work.order if i in work.foldable]
    allowed = budget - (len(work.order) - len(foldable))
    if not foldable or allowed <= 0:
        work.notes.append("the drawing is still over its limit: pick a node to see its neighbourhood")
        return
    size = max(MIN_CHUNK, math.ceil(len(foldable) / allowed))
    runs = [foldable[i:i + size] for i in range(0, len(foldable), size)]
    position = {u: i for i, u in enumerate(work.order)}
    anchors = [position[work.group[p]] for p in pinned if p in work.group] or [len(work.order)]
    runs.sort(key=lambda r: -min(abs(position[r[0]] - a) for a in anchors))  # farthest first
    chosen, excess = [], len(work.order) - budget
    kept = [r for r in runs if _box_id("chunk", r) in opened]  # opened by the user: folded only if need be
    for run in [r for r in runs if r not in kept] + kept:
        if excess <= 0:
            break
        if len(run) > 1:
            chosen.append(run)
            excess -= len(run) - 1
            if run in kept:
                work.notes.append(f"a run of {len(run)} nodes could not stay open within the limit")
    boxes = {_box_id("chunk", r): r for r in chosen}
    work.merge(boxes, "chunk", {b: f"{len(_units(work, r)):,} consecutive nodes" for b, r in boxes.items()})


def histogram(op_types: Iterable[str]) -> tuple[tuple[str, int], ...]:
    return tuple(Counter(op_types).most_common())


def _units(work: Folding, items: list[str]) -> list[str]:
    return [u for i in items for u in work.members[i]]


def _box_id(kind: str, items: list[str]) -> str:
    return f"{kind}:{items[0]}"
