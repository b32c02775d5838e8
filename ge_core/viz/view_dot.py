"""DOT text of a GraphView: op boxes as on the Model page, folded boxes, fused bodies as clusters, and
the pass diff in colour (added green, removed red, changed amber, the rest grey) or op categories.

Ids and escaping come from dot.py: node ids are hashes of names, labels are escaped HTML-like text.
"""

from __future__ import annotations

import hashlib
from collections import ChainMap
from collections.abc import Iterable, Mapping

from ge_core.ir.graph import Graph
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.viz.diff_style import BOX_FILL, DIFF_BORDER, HIT, SELECTED, box_status, diff_colours, item_marks, status_of
from ge_core.viz.dot import (
    _HEADER,
    CATEGORY_COLOURS,
    HIGHLIGHT_BORDER,
    RANKDIRS,
    UNSUPPORTED_BORDER,
    UNSUPPORTED_FILL,
    _constant_lines,
    _desc_text,
    _html,
    _Ids,
    _input_line,
    _output_line,
    _outputs_text,
    _quote,
    _small,
    shorten,
)
from ge_core.viz.graph_view import GraphView, ViewEdge, ViewItem
from ge_core.viz.node_index import Located

MAX_BOX_OPS = 4  # op types listed on a folded box


def view_to_dot(graph: Graph, view: GraphView, index: Mapping[str, Located], *,
                status: Mapping[str, str] | None = None, selected: str = "", rankdir: str = "TB",
                hits: Iterable[str] = ()) -> str:
    """DOT for `view` of `graph`. With `status` (top-level node name -> added/removed/changed) boxes are
    coloured by the diff, else by op category. `selected` (a node reference or item id) is outlined twice,
    search `hits` (node references) once; a folded box holding one is outlined too."""
    if rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {rankdir!r}")
    ids = _Ids()
    marks = item_marks(view, selected, hits)
    lines = [_HEADER.replace("{rankdir}", rankdir)]
    by_cluster: dict[str, list[ViewItem]] = {}
    for item in view.items:
        by_cluster.setdefault(item.cluster, []).append(item)
    for item in by_cluster.get("", []):
        lines.append(_item_line(graph, item, index, ids, status, marks.get(item.id, "")))
    for cluster in (c for c, parent in view.clusters.items() if not parent):
        lines += _cluster_lines(graph, view, cluster, by_cluster, index, ids, status, marks, "  ")
    bodies = [index[c].node.body for c in view.clusters]
    descs = ChainMap(graph.descs, *(b.descs for b in bodies if b is not None))  # tensors inside fused bodies
    kinds = {i.id: i.kind for i in view.items}
    lines += [_edge_line(e, kinds, ids, descs) for e in view.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cluster_lines(graph: Graph, view: GraphView, cluster: str, by_cluster: dict[str, list[ViewItem]],
                   index: Mapping[str, Located], ids: _Ids, status: Mapping[str, str] | None,
                   marks: Mapping[str, str], indent: str) -> list[str]:
    """A fused node drawn as its body: a dashed cluster titled with the fused op (nested ones inside)."""
    node = index[cluster].node
    colour, width = DIFF_BORDER.get(status_of(cluster, status), "#7a7a7a"), 1
    if marks.get(cluster) == SELECTED:  # the selected fused node is drawn as this cluster
        colour, width = HIGHLIGHT_BORDER, 3
    title = _html(f"{node.op_type} {shorten(node.name)} (fused, expanded)")
    lines = [f"{indent}subgraph cluster_{_digest(cluster)} {{",
             f'{indent}  graph [label=<<b>{title}</b>>, style="rounded,dashed", color="{colour}", penwidth={width}, '
             f'fontsize=10, tooltip={_quote(node.name)}]']
    items = by_cluster.get(cluster, [])
    lines += [indent + _item_line(graph, i, index, ids, status, marks.get(i.id, "")) for i in items]
    for inner in (c for c, parent in view.clusters.items() if parent == cluster):
        lines += _cluster_lines(graph, view, inner, by_cluster, index, ids, status, marks, indent + "  ")
    return [*lines, f"{indent}}}"]


def _item_line(graph: Graph, item: ViewItem, index: Mapping[str, Located], ids: _Ids,
               status: Mapping[str, str] | None, mark: str) -> str:
    if item.kind == "input":
        return _input_line(graph, item.title, ids)
    if item.kind == "output":
        return _output_line(graph, item.title, ids)
    line = _box_line(item, ids, status) if item.is_box else _op_line(graph, item, index, ids, status)
    if mark == SELECTED:
        line = line[:-1] + f', penwidth=3.5, color="{HIGHLIGHT_BORDER}", peripheries=2]'
    elif mark == HIT:
        line = line[:-1] + f', penwidth=3, color="{HIGHLIGHT_BORDER}"]'
    return line


def _op_line(graph: Graph, item: ViewItem, index: Mapping[str, Located], ids: _Ids,
             status: Mapping[str, str] | None) -> str:
    loc = index[item.id]
    node, g = loc.node, loc.graph
    rows = [f"<b>{_html(item.title)}</b>", _small(shorten(node.name), "#444444")]
    consts = _constant_lines(g, node)
    if loc.parent is not None:  # a body reads the fused node's constant inputs as body inputs
        consts += _constant_lines(graph, node)
    rows += [_small(line) for line in consts]
    if item.absorbed:
        rows.append(_small(f"+{item.absorbed} constant node(s) folded in"))
    if node.body is not None:
        rows.append(_small(f"fused: {len(node.body)} ops"))
    rows.append(_html(_outputs_text(g, node)))
    op = REGISTRY.for_node(node)
    style = "rounded,filled,dashed" if item.boundary or op is None else "rounded,filled"
    if status is not None:
        state = status_of(item.id, status)
        attrs = _diff_attrs(state)
        what = state or "unchanged"
    elif op is None:
        attrs, what = f'fillcolor="{UNSUPPORTED_FILL}", color="{UNSUPPORTED_BORDER}"', "unsupported"
    else:
        attrs, what = f'fillcolor="{CATEGORY_COLOURS[op.category]}"', op.category.value
    more = ", has neighbours not drawn" if item.boundary else ""
    tooltip = _quote(f"{node.name} ({item.title}, {what}{more})")
    return f"  {ids.op(item.id)} [label=<{'<br/>'.join(rows)}>, {attrs}, style=\"{style}\", tooltip={tooltip}]"


def _box_line(item: ViewItem, ids: _Ids, status: Mapping[str, str] | None) -> str:
    kinds = {"scope": "scope", "block": "block", "chunk": "nodes"}
    head = item.title if item.kind != "scope" else f"scope {shorten(item.title, 40)}"
    ops = ", ".join(f"{op}×{n}" for op, n in item.ops[:MAX_BOX_OPS])
    if len(item.ops) > MAX_BOX_OPS:
        ops += f", +{len(item.ops) - MAX_BOX_OPS} types"
    rows = [f"<b>{_html(head)}</b>", _small(f"{len(item.refs):,} nodes, folded"), _small(ops)]
    state = box_status(item, status) if status is not None else ""
    attrs = _diff_attrs(state) if status is not None else f'fillcolor="{BOX_FILL}"'
    tooltip = _quote(f"{kinds[item.kind]} box: {item.title} ({len(item.refs)} nodes). Open it to see inside.")
    return f"  {ids.tensor('box', item.id)} [label=<{'<br/>'.join(rows)}>, shape=box3d, style=filled, {attrs}, " \
           f"tooltip={tooltip}]"


def _edge_line(edge: ViewEdge, kinds: Mapping[str, str], ids: _Ids, descs: Mapping[str, TensorDesc]) -> str:
    src, dst = _dot_id(edge.src, kinds, ids), _dot_id(edge.dst, kinds, ids)
    first = edge.tensors[0]
    tip = f"{first}: {_desc_text(descs.get(first))}"
    if edge.count > 1:
        tip = f"{edge.count} tensors: {', '.join(edge.tensors)}" + ("…" if edge.count > len(edge.tensors) else "")
        return f"  {src} -> {dst} [penwidth=2, tooltip={_quote(tip)}]"
    return f"  {src} -> {dst} [tooltip={_quote(tip)}]"


def _dot_id(item_id: str, kinds: Mapping[str, str], ids: _Ids) -> str:
    kind = kinds.get(item_id, "op")
    if kind == "input":
        return ids.tensor("in", item_id.removeprefix("in:"))
    if kind == "output":
        return ids.tensor("out", item_id.removeprefix("out:"))
    return ids.tensor("box", item_id) if kind in ("scope", "block", "chunk") else ids.op(item_id)


def _diff_attrs(state: str) -> str:
    fill, border = diff_colours(state)
    extra = ", penwidth=2" if state else ', fontcolor="#555555"'
    return f'fillcolor="{fill}", color="{border}"{extra}'


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
