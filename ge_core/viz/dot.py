"""DOT text of a GE Graph: the graphviz export ("Download DOT" on the Model and Graph pages).

The workbench draws graphs on its canvas (Model Explorer, fed by canvas.py); DOT is kept as a download for
people who render graphs with graphviz themselves (`dot -Tsvg graph.dot`). `graph_to_dot` writes a whole
graph, optionally with some nodes outlined (a failure's nodes). Pure string building: no Graphviz binary
is run here.

Op nodes are boxes coloured by fusion category; graph inputs and outputs are ellipses. Constants are not
drawn (a ResNet has hundreds of weights): each op lists the constants it reads inside its own box instead.
Node ids are hashes of node names, so a node keeps its id across passes, and no user-written name ever
reaches the DOT source unescaped: labels are HTML-like (`html.escape`), tooltips are quoted strings with
backslashes and quotes escaped.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import SHORT_DTYPE, TensorDesc
from ge_core.ops import REGISTRY
from ge_core.viz.diff_style import (
    CATEGORY_COLOURS,
    HIGHLIGHT_BORDER,
    INPUT_FILL,
    OUTPUT_FILL,
    UNSUPPORTED_BORDER,
    UNSUPPORTED_FILL,
)
from ge_core.viz.inspector import input_names

RANKDIRS = ("TB", "LR", "BT", "RL")

UNDEFINED_TEXT = "?"  # shown for a shape inference could not work out
NAME_WIDTH = 30  # node names longer than this are shortened in the middle (the tail says the most)
MAX_CONST_LINES = 4  # constants listed per op box; the rest are counted
MAX_OUTPUT_SHAPES = 3

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")

_HEADER = """digraph GE_Graph {
  graph [rankdir={rankdir}, nodesep=0.3, ranksep=0.35, bgcolor="transparent", fontname="Helvetica"]
  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, color="#555555", \
margin="0.14,0.06"]
  edge [color="#6b6b6b", arrowsize=0.6]"""


@dataclass(frozen=True)
class DotView:
    """DOT source plus what was drawn: `note` tells the user what was left out ("" when nothing)."""

    source: str
    shown: int
    total: int
    truncated: bool
    note: str


# ---- a whole graph ---------------------------------------------------------------------------------
def graph_to_dot(graph: Graph, *, max_nodes: int = 1500, highlight: Iterable[str] = (),
                 rankdir: str = "TB") -> DotView:
    """DOT for `graph`: the first `max_nodes` ops in topological order, inputs, outputs and edges."""
    lines = [_header(rankdir)]
    if max_nodes < 0:
        raise ValueError(f"max_nodes must be >= 0, not {max_nodes}")
    ids = _Ids()
    nodes = graph.nodes
    shown = list(nodes[:max_nodes])
    marked = set(highlight)
    lines += [_input_line(graph, t, ids) for t in graph.inputs]
    lines += [_graph_op_line(graph, n, ids, n.name in marked) for n in shown]
    drawn = {n.name for n in shown}
    outputs = [t for t in graph.outputs if _source(graph, t, drawn, ids) is not None]
    lines += [_output_line(graph, t, ids) for t in outputs]
    lines += _graph_edges(graph, shown, outputs, drawn, ids)
    hidden = len(nodes) - len(shown)
    if hidden:
        lines += _more_lines(graph, shown, hidden, ids)
    lines.append("}")
    note = _truncation_note(len(shown), len(nodes), len(graph.outputs) - len(outputs)) if hidden else ""
    return DotView("\n".join(lines) + "\n", len(shown), len(nodes), bool(hidden), note)


def _graph_op_line(graph: Graph, node: Node, ids: _Ids, highlighted: bool) -> str:
    op = REGISTRY.for_node(node)
    qualified = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
    rows = _op_rows(qualified, node, _constant_lines(graph, node), [], _outputs_text(graph, node))
    if op is None:
        attrs = f'fillcolor="{UNSUPPORTED_FILL}", color="{UNSUPPORTED_BORDER}", style="rounded,filled,dashed"'
        what = "unsupported"
    else:
        attrs = f'fillcolor="{CATEGORY_COLOURS[op.category]}"'
        what = op.category.value
    if highlighted:
        colour = UNSUPPORTED_BORDER if op is None else HIGHLIGHT_BORDER
        attrs += f', penwidth=3, color="{colour}"'
    return _box(ids.op(node.name), rows, attrs, f"{node.name} ({qualified}, {what})")


def _more_lines(graph: Graph, shown: list[Node], hidden: int, ids: _Ids) -> list[str]:
    """One '…' box standing for every node not drawn, fed by the drawn nodes that feed them."""
    lines = [f'  more [label="… {hidden:,} more nodes not drawn", shape=note, fillcolor="#ffffff", '
             'style="filled,dashed"]']
    drawn = {id(n) for n in shown}
    for node in shown:
        feeds_hidden = any(id(u) not in drawn for t in node.outputs for u in graph.users(t))
        if feeds_hidden:
            lines.append(f"  {ids.op(node.name)} -> more [style=dashed]")
    return lines


def _graph_edges(graph: Graph, shown: list[Node], outputs: list[str], drawn: set[str], ids: _Ids) -> list[str]:
    """Data edges between drawn items, one per (source, destination) pair; constants are skipped."""
    seen: set[tuple[str, str]] = set()
    lines = []
    pairs = [(t, ids.op(n.name)) for n in shown for t in n.inputs if t and not graph.is_constant(t)]
    pairs += [(t, ids.tensor("out", t)) for t in outputs]
    for tensor, dest in pairs:
        src = _source(graph, tensor, drawn, ids)
        if src is None or (src, dest) in seen:
            continue
        seen.add((src, dest))
        tip = _quote(f"{tensor}: {_desc_text(graph.descs.get(tensor))}")
        lines.append(f"  {src} -> {dest} [tooltip={tip}]")
    return lines


def _source(graph: Graph, tensor: str, drawn: set[str], ids: _Ids) -> str | None:
    """The drawn item producing `tensor`: a graph input or a drawn op; None if not drawn."""
    if tensor in graph.inputs:
        return ids.tensor("in", tensor)
    producer = graph.producer(tensor)
    if producer is None or producer.name not in drawn:
        return None
    return ids.op(producer.name)


def _truncation_note(shown: int, total: int, hidden_outputs: int) -> str:
    outs = f" and {hidden_outputs:,} graph output(s)" if hidden_outputs else ""
    return (f"Showing the first {shown:,} of {total:,} nodes in topological order: {total - shown:,} later "
            f"nodes{outs} are not drawn. The dashed '…' box marks where the drawing stops.")


# ---- header, boxes, inputs and outputs ---------------------------------------------
def _header(rankdir: str) -> str:
    if rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {rankdir!r}")
    return _HEADER.replace("{rankdir}", rankdir)


def _box(dot_id: str, rows: list[str], attrs: str, tooltip: str) -> str:
    return f"  {dot_id} [label=<{'<br/>'.join(rows)}>, {attrs}, tooltip={_quote(tooltip)}]"


def _op_rows(title: str, node: Node, consts: list[str], notes: list[str], outputs: str) -> list[str]:
    """An op box's label: the op in bold, the node's name, its constants and notes small, its outputs."""
    rows = [f"<b>{_html(title)}</b>", _small(shorten(node.name), "#444444")]
    rows += [_small(line) for line in [*consts, *notes]]
    return [*rows, _html(outputs)]


def _input_line(graph: Graph, tensor: str, ids: _Ids) -> str:
    desc = graph.desc(tensor)
    dims = ",".join(graph.input_dims_text(tensor))  # keeps symbolic names such as "batch"
    label = f"<b>{_html(shorten(tensor))}</b><br/>{_html(f'{_dtype(desc)}[{dims}]')}"
    return (f'  {ids.tensor("in", tensor)} [label=<{label}>, shape=ellipse, fillcolor="{INPUT_FILL}", '
            f"tooltip={_quote('graph input ' + tensor)}]")


def _output_line(graph: Graph, tensor: str, ids: _Ids) -> str:
    label = f"<b>{_html(shorten(tensor))}</b><br/>{_html(_desc_text(graph.descs.get(tensor)))}"
    return (f'  {ids.tensor("out", tensor)} [label=<{label}>, shape=ellipse, fillcolor="{OUTPUT_FILL}", '
            f"tooltip={_quote('graph output ' + tensor)}]")


# ---- label pieces ----------------------------------------------------------------------------------
def _constant_lines(graph: Graph, node: Node) -> list[str]:
    """`W: f32[16,3,3,3]` for each constant input (scalars show their value), capped."""
    names = input_names(node.op_type, node.domain, node.opset, len(node.inputs))
    lines = []
    for i, t in enumerate(node.inputs):
        if t and graph.is_constant(t):
            value = graph.constants[t]
            text = _desc_text(graph.descs.get(t))
            if value.size == 1 and value.dtype.kind in "biuf":
                text += f" = {value.reshape(-1)[0].item():g}"
            lines.append(f"{names[i]}: {text}")
    if len(lines) > MAX_CONST_LINES:
        more = len(lines) - MAX_CONST_LINES + 1
        lines = [*lines[:MAX_CONST_LINES - 1], f"+{more} more constants"]
    return lines


def _outputs_text(graph: Graph, node: Node) -> str:
    texts = [_desc_text(graph.descs.get(t)) for t in node.outputs]
    if len(texts) > MAX_OUTPUT_SHAPES:
        texts = [*texts[:MAX_OUTPUT_SHAPES], f"+{len(texts) - MAX_OUTPUT_SHAPES}"]
    return ", ".join(texts) or "(no outputs)"


def _desc_text(desc: TensorDesc | None) -> str:
    """`f32[1,64]`, or `?` while inference could not tell (unsupported op, or one upstream)."""
    if desc is None or desc.dtype == "undefined":
        return UNDEFINED_TEXT
    return desc.text()


def _dtype(desc: TensorDesc) -> str:
    return UNDEFINED_TEXT if desc.dtype == "undefined" else SHORT_DTYPE.get(desc.dtype, desc.dtype)


def shorten(name: str, width: int = NAME_WIDTH) -> str:
    """Shorten in the middle: `gpu_0/res4_…/branch2a_w_0` keeps both the scope and the leaf."""
    if len(name) <= width:
        return name
    head = (width - 1) // 3
    return name[:head] + "…" + name[len(name) - (width - 1 - head):]


def _small(text: str, colour: str = "") -> str:
    colour_attr = f' color="{colour}"' if colour else ""
    return f'<font point-size="9"{colour_attr}>{_html(text)}</font>'


def _html(text: str) -> str:
    """Text for an HTML-like label: markup characters escaped, control characters dropped."""
    return html.escape(_CONTROL_CHARS.sub(" ", text), quote=True)


def _quote(text: str) -> str:
    """A DOT quoted string; backslashes are doubled so escString sequences (\\N, \\l) stay literal."""
    text = _CONTROL_CHARS.sub(" ", text).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


class _Ids:
    """Stable, safe DOT ids: a kind prefix and a hash of the name (collisions get a counter)."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], str] = {}
        self._taken: set[str] = set()

    def op(self, name: str) -> str:
        return self._get("op", name)

    def tensor(self, kind: str, name: str) -> str:
        return self._get(kind, name)

    def _get(self, kind: str, name: str) -> str:
        key = (kind, name)
        if key not in self._ids:
            candidate, n = f"{kind}_{_digest(name)}", 1
            while candidate in self._taken:
                n += 1
                candidate = f"{kind}_{_digest(name)}_{n}"
            self._ids[key] = candidate
            self._taken.add(candidate)
        return self._ids[key]
