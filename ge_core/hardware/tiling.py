"""`tile_node(node, graph, profile) -> Tiling`: how one kernel of the final graph is cut for an AI Core.

Cube ops (Conv, MatMul, Gemm, and fused kernels built around one) are tiled into L0A/L0B/L0C blocks fed
through L1 (cube_tiling.py); vector ops into UB-sized tiles (vector_tiling.py); both are split over the
cores (block dim). Views launch no kernel; shape arithmetic (and tiny integer outputs) runs on the scalar
unit; pure copies (Concat, Slice, Pad...) are DMA through the UB. Which unit an op runs on is a fact of the
op (OpDef.unit). Every decision is in the Tiling, with a one-line reason (`describe()`) for logs and the UI.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ge_core.hardware.cube_tiling import CubeTiling, tile_cube
from ge_core.hardware.gemm import Gemm, gemm_of
from ge_core.hardware.profile import HardwareProfile
from ge_core.hardware.sizes import numel, shape_numel
from ge_core.hardware.ub_working_set import reduce_slab
from ge_core.hardware.vector_tiling import VectorTiling, forget_groups, tile_group, tile_vector
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category, Unit

SMALL_RATIO = 64  # a tensor this many times smaller than the kernel's largest is kept whole in UB
SCALAR_MAX_ELEMENTS = 16  # integer tensors this small are shape arithmetic: the scalar unit does it


@dataclass(frozen=True)
class Tiling:
    node: str
    op_type: str
    unit: str  # "cube", "vector", "mte" (DMA only), "scalar", or "none" (a view: no kernel)
    block_dim: int  # cores the kernel runs on
    tile_shape: tuple[int, ...]  # cube: the L0 block (m0, k0, n0); vector/mte: (elements per UB tile,)
    tiles: int  # tiles over all cores
    tiles_per_core: int  # on the busiest core: the length of its pipeline
    buffer_bytes: dict[str, int] = field(hash=False)  # per core, double-buffered: l0a, l0b, l0c, l1, ub
    reason: str = ""
    gemm: Gemm | None = None
    cube: CubeTiling | None = None
    vector: VectorTiling | None = None

    def describe(self) -> str:
        return f"{self.node} ({self.op_type}): {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "op_type": self.op_type, "unit": self.unit, "block_dim": self.block_dim,
                "tile_shape": list(self.tile_shape), "tiles": self.tiles, "tiles_per_core": self.tiles_per_core,
                "buffer_bytes": dict(self.buffer_bytes), "reason": self.reason}


def tile_node(node: Node, graph: Graph, profile: HardwareProfile, *, cube_dtype_bytes: int | None = None,
              kind: str | None = None, anchor: tuple[Node, Graph] | None = None) -> Tiling:
    """The tiling of `node` (a node of `graph`) on `profile`. Cube operands are priced in their own dtype
    unless `cube_dtype_bytes` says otherwise (2 when a precision mode feeds the cube fp16). `kind`
    (kernel_kind) and `anchor` (the main cube op: the node itself, or its body's per main_cube_index) save
    the work when the caller has them already.

    Tilings are remembered per graph node (see `known_tiling`): the compile's TilingPass tiles every
    kernel, and the simulator asks for the same ones again."""
    known = known_tiling(node, graph, profile, cube_dtype_bytes)
    if known is not None:
        return known
    if kind is None:
        kind, body, cubes = classify(node, graph)
    else:
        body, cubes = kernel_body(node, graph), None
    gemm = None
    if kind == "cube":
        if anchor is None:
            if body is None:
                anchor = (node, graph)
            else:
                cubes = list(cube_ops(body)) if cubes is None else cubes
                anchor = cubes[main_cube_index(cubes)[0]]
        gemm = gemm_of(*anchor)
    tiling = _tile_kernel(node, graph, profile, cube_dtype_bytes, kind, body, anchor, gemm)
    remember_tiling(node, graph, profile, cube_dtype_bytes, tiling)
    return tiling


# Per graph: node -> [(profile, cube operand width, what the tiling was made from, the tiling)].
_Known = dict[Node, list[tuple[HardwareProfile, int | None, Any, Tiling]]]
_TILINGS: weakref.WeakKeyDictionary[Graph, _Known] = weakref.WeakKeyDictionary()
_recent: tuple[weakref.ref[Graph], _Known] | None = None  # the last graph asked about: callers ask node by node


def _known(graph: Graph, create: bool) -> _Known | None:
    global _recent
    recent = _recent
    if recent is not None and recent[0]() is graph:
        return recent[1]
    known = _TILINGS.get(graph)
    if known is None and create:
        known = _TILINGS[graph] = {}
    if known is not None:
        _recent = (weakref.ref(graph, _forget), known)
    return known


def _forget(ref: weakref.ref[Graph]) -> None:
    """The recent graph is gone: let its tilings go with it."""
    global _recent
    if _recent is not None and _recent[0] is ref:
        _recent = None


def forget_tilings() -> None:
    """Forget every remembered tiling, and the memoised tiles of GEMMs and fused groups: the next tile_node
    tiles from scratch (what the simulator would do on a profile no compile tiled for). Results never
    depend on it: for benchmarks, and for a graph edited behind the stamp's back (a list attribute
    changed in place)."""
    global _recent
    _TILINGS.clear()
    _recent = None
    tile_cube.cache_clear()
    forget_groups()


def _stamp(node: Node, graph: Graph) -> tuple[Any, ...]:
    """Everything of `node` and `graph` a tiling reads: the node's op, attributes and tensors, their descs
    (immutable: a changed tensor gets a new desc) and which inputs are constants; a fused body never
    changes once built, so its identity stands for it."""
    descs, inputs = graph.descs, node.inputs
    return (node.op_type, node.domain, node.opset, inputs, node.outputs, node.body, tuple(node.attrs.items()),
            tuple(map(descs.get, inputs)), tuple(map(descs.get, node.outputs)),
            tuple(map(graph.constants.__contains__, inputs)))


def known_tiling(node: Node, graph: Graph, profile: HardwareProfile, cube_dtype_bytes: int | None) -> Tiling | None:
    """The tiling made earlier for this very node (the compile's TilingPass made one for every kernel), if
    the node, its tensors' descs and the profile are unchanged since; None otherwise. The cube operand
    width shapes cube tilings only: another kernel's tiling serves every width."""
    known = _known(graph, False)
    entries = known.get(node) if known is not None else None
    if not entries:
        return None
    for profile_then, width, stamp, tiling in entries:
        if width != cube_dtype_bytes and tiling.unit == "cube":
            continue
        if profile_then is not profile and profile_then != profile:
            continue
        try:
            if stamp == _stamp(node, graph):
                return tiling
        except ValueError:  # an array attribute replaced by another array: not the same node any more
            pass
    return None


def remember_tiling(node: Node, graph: Graph, profile: HardwareProfile, cube_dtype_bytes: int | None,
                    tiling: Tiling) -> None:
    known = _known(graph, True)
    assert known is not None
    entries = [e for e in known.get(node, ()) if not (e[1] == cube_dtype_bytes and e[0] == profile)]
    entries.append((profile, cube_dtype_bytes, _stamp(node, graph), tiling))
    known[node] = entries


def _tile_kernel(node: Node, graph: Graph, profile: HardwareProfile, cube_dtype_bytes: int | None, kind: str,
                 body: Graph | None, anchor: tuple[Node, Graph] | None, gemm: Gemm | None) -> Tiling:
    """The tiling, from the kind and fused body (classify), and for a cube kernel its main cube op and that
    op's GEMM (None when it cannot be viewed as one)."""
    if kind == "none":
        return Tiling(node.name, node.op_type, "none", 0, (), 0, 0, {}, "view: no kernel, reuses its input's memory")
    if kind == "scalar":
        return Tiling(node.name, node.op_type, "scalar", 1, (), 1, 1, {},
                      "scalar: tiny integer shape arithmetic on the scalar unit")
    descs = _descs(node, graph)
    sizes = [shape_numel(d.shape) for d in descs]
    if None in sizes:
        return Tiling(node.name, node.op_type, kind, 1, (), 1, 1, {}, "unknown dims: not tiled (compile with "
                      "static input shapes)")
    if kind == "cube":
        if gemm is not None and anchor is not None:
            return _cube(node, anchor[0], anchor[1], gemm, profile, cube_dtype_bytes)
        kind = "vector"  # a cube op we cannot view as a GEMM: priced as vector work
    return _vector(node, graph, kind, profile, descs, [n or 0 for n in sizes], body)


def kernel_kind(node: Node, graph: Graph) -> str:
    """What kind of kernel a node launches: none (view), scalar, mte (DMA), vector or cube."""
    return classify(node, graph)[0]


def classify(node: Node, graph: Graph) -> tuple[str, Graph | None, list[tuple[Node, Graph]]]:
    """(kernel_kind, fused_body, the body's cube ops) in one look at the node and one walk of its body."""
    body = kernel_body(node, graph)
    if body is not None:  # a fused kernel, or an op priced as its kernel body: made of that body
        cubes = list(cube_ops(body))
        return ("cube" if cubes else "vector"), body, cubes
    op = REGISTRY.get(node.op_type, node.domain)
    unit = op.unit if op is not None else Unit.VECTOR
    if unit in (Unit.NONE, Unit.CUBE):  # a view (no kernel), or a cube op
        return unit.value, None, []
    if unit == Unit.SCALAR or _tiny_integers(node, graph):
        return "scalar", None, []
    return ("mte" if unit == Unit.MTE else "vector"), None, []


def fused_body(node: Node) -> Graph | None:
    """The body of a kernel made of its body (UB fusion groups, FusedConv...); None for an op with a kernel
    of its own (a LayerNormalization or Gemm made by fusion keeps its body for display, runs as itself)."""
    if node.body is None or REGISTRY.get(node.op_type, node.domain) is not None:
        return None
    return node.body


def kernel_body(node: Node, graph: Graph) -> Graph | None:
    """The body a kernel is priced by: a fused node's (fused_body), or the kernel body of an op that declares
    one (OpDef.kernel_body: Attention's MatMuls and Softmax); None for an op priced as itself."""
    op = REGISTRY.get(node.op_type, node.domain)
    if op is None:
        return node.body
    if op.kernel_body is None:
        return None
    return op.kernel_body(node, graph.input_descs(node), graph.output_descs(node))


def cube_ops(body: Graph) -> Iterator[tuple[Node, Graph]]:
    """Every cube op in a fused body, with the graph it lives in (bodies nest; an op priced as its kernel
    body, an Attention in a UB group, counts as that body)."""
    for inner in body.nodes:
        nested = kernel_body(inner, body)
        if nested is not None:  # a nested fused kernel
            yield from cube_ops(nested)
        elif (op := REGISTRY.get(inner.op_type, inner.domain)) is not None and op.category == Category.CUBE:
            yield inner, body


def main_cube_index(cubes: list[tuple[Node, Graph]]) -> tuple[int, list[Gemm | None] | None]:
    """Which of a fused body's cube ops (cube_ops) shapes the kernel: the one with the most MACs, the first
    of equals; and every cube op's GEMM when there are several (None for a single one)."""
    if len(cubes) == 1:
        return 0, None
    gemms = [gemm_of(*ng) for ng in cubes]
    return max(range(len(cubes)), key=lambda i: (g.macs if (g := gemms[i]) is not None else 0)), gemms


def _cube(node: Node, inner: Node, body: Graph, gemm: Gemm, p: HardwareProfile, dtype_bytes: int | None) -> Tiling:
    in_desc = body.desc(inner.input(0))
    out_desc = body.desc(inner.outputs[0])
    in_bytes = dtype_bytes or in_desc.itemsize
    t = tile_cube(narrowed(gemm, in_bytes, in_desc.itemsize), p, in_bytes, out_desc.itemsize)
    (bb, bm, bn), (m0, k0, n0), (m1, k1, n1) = t.split, t.l0, t.l1
    anchor = "" if inner is node else f" (fused around {inner.op_type} '{inner.name}')"
    reason = (f"cube{anchor}: GEMM batch {gemm.batch} x M {gemm.m} x K {gemm.k} x N {gemm.n} on {t.block_dim} "
              f"core(s) (split batch/M/N {bb}/{bm}/{bn}); L0 tile {m0}x{k0}x{n0}, L1 panel {m1}x{k1}x{n1}; "
              f"{t.tiles_per_core} tile(s) per core")
    return Tiling(node.name, node.op_type, "cube", t.block_dim, t.l0, t.tiles_per_core * t.block_dim,
                  t.tiles_per_core, dict(t.buffer_bytes), reason, gemm=gemm, cube=t)


def narrowed(gemm: Gemm, in_bytes: int, itemsize: int) -> Gemm:
    """`gemm` with its operands as the cube reads them: fp32 operands fed to the cube as fp16 (a precision
    mode's) occupy half their bytes in global memory (ATC stores them so: weights converted at compile
    time, activations cast by the kernel before)."""
    if in_bytes >= itemsize:
        return gemm
    return replace(gemm, a_bytes=gemm.a_bytes * in_bytes // itemsize, b_bytes=gemm.b_bytes * in_bytes // itemsize)


def _vector(node: Node, graph: Graph, kind: str, p: HardwareProfile, descs: list[TensorDesc],
            sizes: list[int], body: Graph | None) -> Tiling:
    cores = p.vector_cores
    elements = max(sizes, default=1) or 1
    v = tile_group(body, elements, cores, p) if body is not None else None
    if v is None:
        per_element, fixed, count = _buffers(descs, sizes, elements)
        v = tile_vector(elements, per_element, fixed, count, _slab(node, graph), cores, p)
    what = "data movement (DMA through UB)" if kind == "mte" else "vector"
    group = f", fused group of {len(body)} op(s)" if body is not None else ""
    reason = (f"{what}{group}: {elements} element(s) on {v.block_dim} core(s), UB tile of {v.tile} element(s) "
              f"({v.ub_bytes} bytes of UB {p.buffers.ub}), {v.tiles_per_core} tile(s) per core")
    return Tiling(node.name, node.op_type, kind, v.block_dim, (v.tile,), v.tiles_per_core * v.block_dim,
                  v.tiles_per_core, {"ub": v.ub_bytes}, reason, vector=v)


def _descs(node: Node, graph: Graph) -> list[TensorDesc]:
    """The tensors that take UB buffers: not integer parameters, nor a gather's table (OpDef.indexed_input)."""
    descs = graph.descs
    op = REGISTRY.get(node.op_type, node.domain)
    table = op.indexed_input if op is not None else None
    ins = [descs[t] for i, t in enumerate(node.inputs) if t and i != table and not _param(graph, t)]
    return ins + [descs[t] for t in node.outputs if t]


def _param(graph: Graph, tensor: str) -> bool:
    """Integer constants (axes, shapes, indices) are kernel parameters, not buffers."""
    return tensor in graph.constants and graph.descs[tensor].dtype.startswith(("int", "uint"))


def _buffers(descs: list[TensorDesc], sizes: list[int], elements: int) -> tuple[float, int, int]:
    """(bytes per walked element of the buffers that shrink with the tile, bytes of the small ones, count).

    A tensor of comparable size (a pooled output is a quarter of its input) takes its share of each tile;
    a much smaller one (a per-channel bias broadcast over an image) stays whole in the UB."""
    per_element, fixed = 0.0, 0
    for d, count in zip(descs, sizes, strict=True):
        if count * SMALL_RATIO >= elements:
            per_element += d.itemsize * count / elements
        else:
            fixed += count * d.itemsize
    return per_element, fixed, len(descs)


def _slab(node: Node, graph: Graph) -> int:
    op = REGISTRY.for_node(node)
    if op is not None and op.category == Category.REDUCE and node.inputs and node.input(0):
        return max(reduce_slab(graph, node) or 1, 1)
    itemsize = graph.desc(node.outputs[0]).itemsize if node.outputs else 4
    return max(1, 32 // max(itemsize, 1))  # one 32-byte block


def _tiny_integers(node: Node, graph: Graph) -> bool:
    outs = graph.output_descs(node)
    return bool(outs) and all(d.dtype.startswith(("int", "uint", "bool")) and d.is_static
                              and numel(d) <= SCALAR_MAX_ELEMENTS for d in outs)
