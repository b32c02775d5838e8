"""What the Graph page draws: a GraphView of boxes and edges, built from a Graph within a budget.

A view starts from the graph's nodes (or only those in `focus`: a neighbourhood, the changed region),
replaces each fused node the user expanded by its body (drawn as a cluster), adds graph inputs and
outputs, then folds (collapse.py) until at most `budget` items remain. The DOT and ECharts renderers
only read the view, so both drawings show the same boxes. Control edges are not drawn (the inspector
lists them); constants are not items (each op box lists the constants it reads).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ge_core.ir.graph import Graph
from ge_core.viz.collapse import Folding, fold_to_budget, histogram
from ge_core.viz.inspector import producer_ref
from ge_core.viz.neighbourhood import consumers, control_users
from ge_core.viz.node_index import Located, ancestors, body_ref, index_nodes, top_level
from ge_core.viz.scopes import scope_path

DEFAULT_BUDGET = 1500  # boxes sent to the browser at most: Graphviz-in-wasm stays interactive below this
MAX_EDGE_TENSORS = 4


@dataclass(frozen=True, slots=True)
class ViewItem:
    id: str  # a node reference, `in:T`/`out:T` for graph inputs/outputs, `scope:`/`block:`/`chunk:` boxes
    kind: str  # "op", "input", "output", "scope", "block" or "chunk"
    title: str  # op type, tensor name, or what a box holds
    refs: tuple[str, ...] = ()  # node references drawn by this item
    cluster: str = ""  # the expanded fused node whose body holds it
    absorbed: int = 0  # constant-subgraph nodes folded into this op
    ops: tuple[tuple[str, int], ...] = ()  # boxes: op types inside, most common first
    boundary: bool = False  # has neighbours left out of a focused view

    @property
    def is_box(self) -> bool:
        return self.kind in ("scope", "block", "chunk")


@dataclass(frozen=True, slots=True)
class ViewEdge:
    src: str
    dst: str
    tensors: tuple[str, ...]  # the first few tensors it carries
    count: int  # tensors it carries


@dataclass(frozen=True)
class GraphView:
    items: tuple[ViewItem, ...]
    edges: tuple[ViewEdge, ...]
    clusters: dict[str, str]  # expanded fused node -> the cluster holding it ("" at top level)
    nodes: int  # top-level nodes covered by the view (all of them, or those in focus)
    total_nodes: int  # top-level nodes in the graph
    budget: int
    notes: tuple[str, ...] = ()
    item_of: dict[str, str] = field(default_factory=dict)  # node reference -> item id

    @property
    def folded(self) -> bool:
        return any(i.is_box or i.absorbed for i in self.items)

    @property
    def boxes(self) -> int:
        return sum(i.is_box for i in self.items)

    def note(self) -> str:
        """What was folded, in words ("" when every node is drawn as its own box)."""
        parts = []
        absorbed = sum(i.absorbed for i in self.items)
        if absorbed:
            parts.append(f"{absorbed:,} nodes that only compute constants (e.g. weights made by ConstantOfShape) "
                         "into the ops they feed")
        for kind, words in BOX_WORDS.items():
            boxes = [i for i in self.items if i.kind == kind]
            if boxes:
                parts.append(f"{sum(len(b.refs) for b in boxes):,} nodes into {len(boxes):,} {words}")
        if not parts and not self.notes:
            return ""
        text = f"Folded {'; '.join(parts)}, to draw at most {self.budget:,} boxes." if parts else ""
        extra = " ".join(n[0].upper() + n[1:] + "." for n in self.notes)
        return f"{text} {extra}".strip() + " Search for a node or open a box to see inside."


BOX_WORDS = {
    "scope": "name-scope boxes",
    "block": "structural blocks (residual, dense or inception-like pieces between the nodes joining them)",
    "chunk": "runs of consecutive nodes",
}


def build_view(graph: Graph, *, index: dict[str, Located] | None = None, focus: Iterable[str] | None = None,
               expand: Iterable[str] = (), opened: Iterable[str] = (), pinned: Iterable[str] = (),
               budget: int = DEFAULT_BUDGET, scope_depth: int = 0) -> GraphView:
    """The view of `graph`: `focus` limits it to those top-level nodes, `expand` names fused nodes drawn
    as their bodies, `opened` names boxes kept open, `pinned` nodes (the selection) are never folded."""
    index = index if index is not None else index_nodes(graph)
    pinned = [p for p in pinned if p in index]
    keep = None if focus is None else set(focus)
    wanted = [*(a for p in pinned for a in ancestors(p)), *expand]
    expanded, refused = _expansions(index, wanted, keep, budget // 2)
    units = _units(graph, index, keep, expanded)
    edges, boundary = _edges(graph, index, units, expanded, keep)
    ios = _io_ids(graph, edges)
    work = Folding([*ios[0], *units, *ios[1]], [(a, b) for a, b, _ in edges],
                   {u for u in units if index[u].parent is None and u not in pinned})
    const_only = _constant_only(graph) if len(work.order) > budget else set()
    scopes = {u: scope_path(u) for u in units if index[u].parent is None}
    fold_to_budget(work, budget, is_constant=const_only.__contains__, scopes=scopes, opened=opened,
                   pinned=pinned, scope_depth=scope_depth)
    if refused:
        work.notes.append(f"{refused:,} fused node(s) stay closed: their bodies would not fit the limit")
    items = tuple(_item(work, index, i, boundary) for i in work.order)
    # The expanded fused nodes that hold drawn nodes, in drawing order (not the set's: DOT text is deterministic).
    clusters = {r: index[r].parent or "" for r in dict.fromkeys(index[u].parent for u in units) if r}
    covered = len({top_level(u) for u in units})
    return GraphView(items, _aggregate(work, edges), clusters, covered, len(graph), budget,
                     tuple(work.notes), dict(work.group))


def _expansions(index: dict[str, Located], wanted: list[str], keep: set[str] | None,
                limit: int) -> tuple[set[str], int]:
    """The fused nodes to draw as their bodies, in the order wanted (the selection's first), while their
    bodies hold at most `limit` nodes (body nodes are never folded); and how many were refused."""
    chosen: set[str] = set()
    count = refused = 0
    for ref in dict.fromkeys(wanted):
        loc = index.get(ref)
        if loc is None or loc.node.body is None or (keep is not None and top_level(ref) not in keep):
            continue
        if loc.parent is not None and loc.parent not in chosen:
            continue  # a body inside a closed fused node cannot be drawn
        if count + len(loc.node.body) > limit:
            refused += 1
            continue
        chosen.add(ref)
        count += len(loc.node.body) - (loc.parent is not None)  # a nested body replaces one body node
    return chosen, refused


def _units(graph: Graph, index: dict[str, Located], keep: set[str] | None, expanded: set[str]) -> list[str]:
    """Node references drawn, in order: top-level nodes in focus, expanded fused nodes by their bodies."""
    out: list[str] = []

    def emit(ref: str) -> None:
        loc = index[ref]
        if ref in expanded and loc.node.body is not None:
            for inner in loc.node.body.nodes:
                emit(body_ref(ref, inner.name))
        else:
            out.append(ref)

    for node in graph.nodes:
        if keep is None or node.name in keep:
            emit(node.name)
    return out


def _edges(graph: Graph, index: dict[str, Located], units: list[str], expanded: set[str],
           keep: set[str] | None) -> tuple[list[tuple[str, str, str]], set[str]]:
    """(source, destination, tensor) for every data edge between drawn units and graph inputs/outputs,
    and the units with a neighbour outside the focus."""
    drawn = set(units)
    edges: list[tuple[str, str, str]] = []
    boundary: set[str] = set()
    for u in units:
        loc = index[u]
        for t in dict.fromkeys(loc.node.inputs):
            if not t or loc.graph.is_constant(t):
                continue
            src = _descend(index, producer_ref(index, loc, t), t, expanded)
            if src is None:
                if t in graph.inputs:
                    edges.append((f"in:{t}", u, t))
            elif src in drawn:
                edges.append((src, u, t))
            else:
                boundary.add(u)
    for t in graph.outputs:
        producer = graph.producer(t)
        src = _descend(index, producer.name if producer else None, t, expanded)
        if src in drawn:
            edges.append((src, f"out:{t}", t))
    if keep is not None:
        after = control_users(graph)
        boundary |= {n for n in keep if graph.has_node(n)
                     and any(c.name not in keep for c in consumers(graph, graph.node(n), after))}
    return edges, boundary


def _descend(index: dict[str, Located], ref: str | None, tensor: str, expanded: set[str]) -> str | None:
    """The body node producing `tensor` when its producer `ref` is an expanded fused node."""
    while ref is not None and ref in expanded:
        body = index[ref].node.body
        inner = body.producer(tensor) if body is not None else None
        if inner is None:
            break
        ref = body_ref(ref, inner.name)
    return ref


def _io_ids(graph: Graph, edges: list[tuple[str, str, str]]) -> tuple[list[str], list[str]]:
    used = {a for a, _, _ in edges} | {b for _, b, _ in edges}
    return ([f"in:{t}" for t in graph.inputs if f"in:{t}" in used],
            [f"out:{t}" for t in dict.fromkeys(graph.outputs) if f"out:{t}" in used])


def _constant_only(graph: Graph) -> set[str]:
    """Top-level nodes computing from constants alone (transitively), e.g. ConstantOfShape weights."""
    const_tensors = set(graph.constants)
    out: set[str] = set()
    for n in graph.nodes:
        if not n.control_inputs and all(not t or t in const_tensors for t in n.inputs):
            out.add(n.name)
            const_tensors.update(n.outputs)
    return out


def _item(work: Folding, index: dict[str, Located], item: str, boundary: set[str]) -> ViewItem:
    if item.startswith(("in:", "out:")):
        kind, _, tensor = item.partition(":")
        return ViewItem(item, "input" if kind == "in" else "output", tensor)
    units = tuple(work.members[item])
    if item in work.kinds:
        ops = histogram(index[u].node.op_type for u in units)
        return ViewItem(item, work.kinds[item], work.titles[item], units, ops=ops,
                        boundary=any(u in boundary for u in units))
    node = index[item].node
    title = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
    return ViewItem(item, "op", title, units, index[item].parent or "", work.absorbed.get(item, 0),
                    boundary=item in boundary)


def _aggregate(work: Folding, edges: list[tuple[str, str, str]]) -> tuple[ViewEdge, ...]:
    """One edge per (source item, destination item), listing the tensors it stands for."""
    grouped: dict[tuple[str, str], dict[str, None]] = {}
    g = work.group
    for a, b, t in edges:
        key = (g.get(a, a), g.get(b, b))
        if key[0] != key[1]:
            grouped.setdefault(key, {})[t] = None
    return tuple(ViewEdge(s, d, tuple(list(ts)[:MAX_EDGE_TENSORS]), len(ts)) for (s, d), ts in grouped.items())
