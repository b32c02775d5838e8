"""Finding nodes by name or op type, fused bodies included (a body node's hit names its fused node)."""

from __future__ import annotations

from dataclasses import dataclass

from ge_core.ir.graph import Graph
from ge_core.viz.node_index import Located, index_nodes

DEFAULT_LIMIT = 200


@dataclass(frozen=True, slots=True)
class SearchHit:
    ref: str  # the node's reference (see node_index): `name`, or `fused › name` inside a body
    name: str
    op_type: str
    why: str  # "op type" or "name"


def find_nodes(graph: Graph | dict[str, Located], query: str, limit: int = DEFAULT_LIMIT) -> list[SearchHit]:
    """Nodes whose op type equals `query` (case-insensitive) first, then nodes whose op type or name
    contains it, in graph order; at most `limit`. An empty query finds nothing."""
    q = query.strip().casefold()
    if not q:
        return []
    index = index_nodes(graph) if isinstance(graph, Graph) else graph
    exact, partial = [], []
    for loc in index.values():
        op = loc.node.op_type.casefold()
        if op == q:
            exact.append(SearchHit(loc.ref, loc.node.name, loc.node.op_type, "op type"))
        elif q in op:
            partial.append(SearchHit(loc.ref, loc.node.name, loc.node.op_type, "op type"))
        elif q in loc.node.name.casefold():
            partial.append(SearchHit(loc.ref, loc.node.name, loc.node.op_type, "name"))
        if len(exact) >= limit:
            break
    return (exact + partial)[:limit]
