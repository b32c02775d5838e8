"""The canvas's layers (Model Explorer namespaces): never one flat layer.

Model Explorer lays out each layer (the direct children of one namespace) on its own. Past 1,000
children it splits a layer itself, by a recursive walk along the edges after laying the whole layer out:
on a chain of ~3k nodes that walk overflows its worker's stack and the page hangs on "Processing
graph..." with no error. So every graph gets its hierarchy here, by one rule:

1. name scopes (scopes.py: `/encoder/layer.0/attention/...`, `block2.conv1`) when at least half the nodes
   have one; a fused node sits in the deepest scope holding all its ops; a top scope every scoped node
   shares (PyTorch's `/m/...` of the wrapped module) is left out: it would open as one collapsed layer;
2. else the structural blocks ge_core finds (blocks.py: residual, dense, inception pieces), one layer each;
3. else no layer yet: the root holds everything, and step 4 cuts it;
4. then, recursively, any layer with more than MAX_LAYER direct children (nodes and sub-layers) is cut
   into topological chunks (`chunk 2`, holding nodes 401-800) of balanced size, and chunks into chunks when
   even those are too many. A scope or block is never cut apart by a chunk: it moves into one whole.
   Graph inputs and outputs stay in their layer (they are few, and the eye looks for them first).

MAX_LAYER = 400: well under Model Explorer's own 1,000-children split (so that never runs), a layer of
400 lays out in a fraction of a second, and a flat 10,000-node chain opens on 25 boxes, not 250.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ge_core.ir.graph import Graph
from ge_core.viz.blocks import block_interiors
from ge_core.viz.scopes import Scope, node_scope

MAX_LAYER = 400
SCOPED_SHARE = 0.5  # name scopes are the rule when at least this share of the nodes has one
MIN_BLOCK = 3  # a block interior of 1-2 nodes (a side branch's end) is no layer worth opening
SCOPES, BLOCKS, CHUNKS = "name scopes", "structural blocks", "topological chunks"


@dataclass(frozen=True)
class Hierarchy:
    """Each item's namespace ("" = the root layer), and what each generated layer is, for its panel."""

    rule: str  # SCOPES, BLOCKS or CHUNKS: where the first layers came from
    namespaces: dict[str, str]
    layers: dict[str, dict[str, str]] = field(default_factory=dict)  # namespace -> attributes


_NONE = 1 << 62  # the first position of a layer holding nothing yet


@dataclass
class _Layer:
    kind: str  # "scope", "block" or "chunk"
    leaves: list[str] = field(default_factory=list)  # item ids directly in this layer
    layers: dict[str, _Layer] = field(default_factory=dict)  # segment -> sub-layer
    first: int = _NONE  # positions of its first and last item
    last: int = -1
    size: int = 0  # items under it


def graph_hierarchy(graph: Graph, inputs: Mapping[str, str] | None = None, outputs: Mapping[str, str] | None = None,
                    *, max_layer: int = MAX_LAYER) -> Hierarchy:
    """The hierarchy of `graph`'s nodes (ids: their names) and of its input and output items (`inputs`,
    `outputs`: tensor -> item id; pinned to the layer they are in)."""
    inputs, outputs = dict(inputs or {}), dict(outputs or {})
    nodes = [n.name for n in graph.nodes]
    base, rule = base_paths(graph, inputs, outputs)
    order = [*inputs.values(), *nodes, *outputs.values()]
    position = {item: i - len(inputs) for i, item in enumerate(order)}  # node k is at k; inputs < 0
    return layer_hierarchy(order, base, position, pinned={*inputs.values(), *outputs.values()}, rule=rule,
                           numbered=len(nodes), max_layer=max_layer)


def base_paths(graph: Graph, inputs: Mapping[str, str] | None = None,
               outputs: Mapping[str, str] | None = None) -> tuple[dict[str, Scope], str]:
    """Steps 1-3 of the rule: each node's first layers, and the rule that gave them. Blocks are found
    with the input and output items as vertices (a residual from the graph input closes a block too),
    which stay out of every block."""
    nodes = graph.nodes
    scopes = {n.name: node_scope(n) for n in nodes}
    if nodes and sum(1 for s in scopes.values() if s) >= SCOPED_SHARE * len(nodes):
        return _without_shared_top(scopes), SCOPES
    ios = {*(inputs or {}).values(), *(outputs or {}).values()}
    vertices = [*(inputs or {}).values(), *(n.name for n in nodes), *(outputs or {}).values()]
    blocks = [[v for v in b if v not in ios] for b in block_interiors(vertices, data_edges(graph, inputs, outputs))]
    blocks = [b for b in blocks if len(b) >= MIN_BLOCK]
    if blocks:
        return {v: (f"block {k}",) for k, b in enumerate(blocks, 1) for v in b}, BLOCKS
    return {}, CHUNKS


def _without_shared_top(scopes: dict[str, Scope]) -> dict[str, Scope]:
    """The scopes less the outermost ones every scoped node shares (`m`, then `m/encoder` if that too),
    as long as something is left to group by."""
    while True:
        tops = {s[0] for s in scopes.values() if s}
        if len(tops) != 1 or not any(len(s) > 1 for s in scopes.values()):
            return scopes
        scopes = {name: s[1:] for name, s in scopes.items()}


def data_edges(graph: Graph, inputs: Mapping[str, str] | None = None,
               outputs: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(source, destination) of every data edge between nodes (by name) and input/output items (by the
    ids in `inputs` / `outputs`, tensor -> id)."""
    inputs, outputs = inputs or {}, outputs or {}
    edges = []
    for node in graph.nodes:
        for t in node.inputs:
            producer = graph.producer(t) if t else None
            if producer is not None:
                edges.append((producer.name, node.name))
            elif t in inputs:
                edges.append((inputs[t], node.name))
    for t, item in outputs.items():
        producer = graph.producer(t)
        source = producer.name if producer is not None else inputs.get(t)
        if source is not None:
            edges.append((source, item))
    return edges


def layer_hierarchy(order: Sequence[str], base: Mapping[str, Scope], position: Mapping[str, int], *,
                    pinned: set[str], rule: str, numbered: int, max_layer: int = MAX_LAYER) -> Hierarchy:
    """Step 4 over items in `order`, starting from their `base` paths; `position` numbers the items
    (0..numbered-1 are the ones a chunk's label counts)."""
    if max_layer < 2:
        raise ValueError(f"max_layer must be at least 2, not {max_layer}")
    root = _tree(order, base, position, "scope" if rule == SCOPES else "block")
    out: dict[str, str] = {}
    layers: dict[str, dict[str, str]] = {}
    _emit(root, (), _Cut(position, pinned, numbered, max_layer), out, layers)
    return Hierarchy(rule, out, layers)


def _tree(order: Sequence[str], base: Mapping[str, Scope], position: Mapping[str, int], kind: str) -> _Layer:
    root = _Layer("root")
    for item in order:
        layer = _grow(root, position[item])
        for segment in base.get(item, ()):
            layer = layer.layers.setdefault(segment, _Layer(kind))
            _grow(layer, position[item])
        layer.leaves.append(item)
    return root


def _grow(layer: _Layer, at: int) -> _Layer:
    layer.first, layer.last, layer.size = min(layer.first, at), max(layer.last, at), layer.size + 1
    return layer


@dataclass(frozen=True)
class _Cut:
    position: Mapping[str, int]
    pinned: set[str]
    numbered: int
    max_layer: int


_Child = tuple[int, str, "_Layer | None"]  # (first position, leaf id or segment, the sub-layer)


def _emit(layer: _Layer, prefix: Scope, cut: _Cut, out: dict[str, str], layers: dict[str, dict[str, str]]) -> None:
    """Write the namespace of every item under `layer`, cutting over-full layers into chunks first."""
    children: list[_Child] = [(cut.position[i], i, None) for i in layer.leaves]
    children += [(sub.first, segment, sub) for segment, sub in layer.layers.items()]
    children.sort(key=lambda c: c[0])
    stay = [c for c in children if c[2] is None and c[1] in cut.pinned]
    rest = [c for c in children if not (c[2] is None and c[1] in cut.pinned)]
    if cut.max_layer - len(stay) < 2:  # too many pinned items to keep them all out of the chunks
        stay, rest = [], children
    room = cut.max_layer - len(stay)
    while len(stay) + len(rest) > cut.max_layer:
        rest = _chunks(rest, room, cut)
    namespace = "/".join(prefix)
    for _, key, sub in stay + rest:
        if sub is None:
            out[key] = namespace
            continue
        path = (*prefix, key)
        layers["/".join(path)] = _layer_attrs(sub, cut)
        _emit(sub, path, cut, out, layers)


def _chunks(children: list[_Child], room: int, cut: _Cut) -> list[_Child]:
    """`children` in topological runs of balanced size, each run one chunk layer (at most `room` runs
    when len(children) <= room², else fewer children than before)."""
    runs = math.ceil(len(children) / room)
    size = math.ceil(len(children) / runs)
    out: list[_Child] = []
    for k, start in enumerate(range(0, len(children), size), 1):
        chunk = _Layer("chunk")
        for first, key, sub in children[start:start + size]:
            if sub is None:
                chunk.leaves.append(key)
                _grow(chunk, first)
            else:
                chunk.layers[key] = sub
                chunk.first, chunk.last = min(chunk.first, sub.first), max(chunk.last, sub.last)
                chunk.size += sub.size
        out.append((chunk.first, _chunk_label(k, chunk, cut), chunk))
    return out


def _chunk_label(k: int, chunk: _Layer, cut: _Cut) -> str:
    """`chunk 2`: a layer's id is its label and the canvas matches the panes before and after a pass by id,
    so a layer's name holds nothing a pass moves (its node range and size are its attributes); and it is
    ASCII, as the canvas's WebGL font is."""
    return f"chunk {k}"


def _layer_attrs(layer: _Layer, cut: _Cut) -> dict[str, str]:
    what = {"scope": "name scope", "block": "structural block (a residual, dense or inception-like piece)",
            "chunk": f"topological chunk: a layer holds at most {cut.max_layer} items, so bigger ones are cut"}
    attrs = {"layer": what.get(layer.kind, layer.kind), "nodes": str(layer.size)}
    first, last = max(layer.first, 0), min(layer.last, cut.numbered - 1)
    if layer.kind == "chunk" and first <= last:
        attrs["positions"] = f"nodes {first + 1}-{last + 1} in topological order"
    return attrs
