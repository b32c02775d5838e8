"""The Graph page's node picker and inspector across one pass: nodes after it, plus the ones it removed."""

from __future__ import annotations

from dataclasses import dataclass

from ge_core.ir.graph import Graph
from ge_core.viz.graph_diff import GraphDiff, NodeChange
from ge_core.viz.inspector import NodeDetails, node_details
from ge_core.viz.node_index import Located, index_nodes, top_level
from ge_core.viz.search import find_nodes

REMOVED_TAG = "removed by this pass"


def node_choices(after: Graph | dict[str, Located], before: Graph | dict[str, Located] | None = None,
                 query: str = "", limit: int = 5000) -> dict[str, str]:
    """Reference -> label (`Conv · n5`) for every node after the pass (fused bodies included), then the
    nodes the pass removed; with `query`, only search hits (op type first, then names)."""
    ia = index_nodes(after) if isinstance(after, Graph) else after
    ib = index_nodes(before) if isinstance(before, Graph) else (before or {})
    removed = {r: loc for r, loc in ib.items() if r not in ia}
    if query.strip():
        hits = [h.ref for h in find_nodes(ia, query, limit)]
        hits += [h.ref for h in find_nodes(removed, query, limit)]
    else:
        hits = [*ia, *removed][:limit]
    return {r: _label(ia.get(r) or removed[r], r in removed) for r in dict.fromkeys(hits)}


def _label(loc: Located, removed: bool) -> str:
    tag = f" ({REMOVED_TAG})" if removed else ""
    return f"{loc.node.op_type} · {loc.ref}{tag}"


@dataclass(frozen=True)
class Inspection:
    details: NodeDetails
    side: str  # "after" or "before" (the pass removed it)
    status: str  # added / removed / changed / "" for this pass
    changes: tuple[NodeChange, ...] = ()


def inspect_node(before: Graph, after: Graph, ref: str, diff: GraphDiff | None = None) -> Inspection | None:
    """The inspector for `ref` after the pass, or before it when the pass removed it; None if in neither."""
    for side, graph in (("after", after), ("before", before)):
        index = index_nodes(graph)
        if ref in index:
            name = top_level(ref)
            status = diff.status(name) if diff is not None else ""
            changes = diff.changed.get(name, ()) if diff is not None and ref == name else ()
            return Inspection(node_details(index, ref), side, status, changes)
    return None
