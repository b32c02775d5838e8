"""GE's ModelDef (a ge_proto dump, or a ge_onnx dump turned into one by onnx_form.py) -> our GE Graph.

How GE's ops live in our IR (the choice the dumps force; docs/ge_dumps.md):
- `Data` ops become graph inputs named by the op, `Const`/`Constant` ops graph constants named by the op
  (their weights when the dump has them, level 1; else a read-only zero view of the desc's shape, so nothing
  is allocated), `NetOutput` the graph outputs. Every other op is a node named and typed as GE wrote it.
- Tensors are named GE's way, `<op>:<output index>` (graph inputs and constants by their op's name).
- A node's domain: our registry's `ge` domain when it knows the type there (TransData), else the default
  domain when the type is one of ours there (Relu, Conv: what our own dump writer writes), else `ge`. A type
  our registry does not know is kept with its attributes and its dumped descs: a dump is there to be looked
  at, so it is listed in `graph.metadata["ge_unmapped_ops"]`, never refused. GE types with an equivalent of
  ours (Conv2D, FullyConnection, SoftmaxV2 ...) are priced through op_map.registry_graph's copy.
- Output descs come from the dump, not from inference; the op's attrs are kept as read (attrs.py), plus
  OpDef's own fields (id, stream_id, workspace ...) under their names, plus what TensorDesc cannot hold
  (descs.py). A fused op keeps `_datadump_original_op_names`, the ops it replaced.
- Subgraphs (PartitionedCall, If, Case, While: `subgraph_name`) are built from the ModelDef's other graphs
  and held by the node like our control-flow subgraphs (`node.subgraphs`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ge_core.frontend.ge.attrs import attrs_of
from ge_core.frontend.ge.descs import array_from_tensor, desc_extras, desc_from_proto
from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb
from ge_core.frontend.onnx import ImportResult
from ge_core.frontend.toposort import topo_order
from ge_core.ir import dtypes
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY

GE_DOMAIN = "ge"
DATA_TYPES = frozenset({"Data", "RefData", "AippData"})
CONST_TYPES = frozenset({"Const", "Constant"})
OUTPUT_TYPES = frozenset({"NetOutput"})
UNDEFINED = TensorDesc((), "undefined")
MAX_SUBGRAPH_DEPTH = 16
# OpDef fields (not attrs) worth keeping; GE's ONNX dump writes them as attributes of the same names.
OPDEF_FIELDS = ("id", "stream_id", "input_name", "src_name", "src_index", "dst_name", "dst_index", "input_i",
                "output_i", "workspace", "workspace_bytes", "is_input_const")
SUBGRAPH_KEYS = {"If": ("then_branch", "else_branch"), "StatelessIf": ("then_branch", "else_branch"),
                 "While": ("cond", "body"), "StatelessWhile": ("cond", "body"), "PartitionedCall": ("f",),
                 "StatefulPartitionedCall": ("f",)}


def import_model_def(model: pb.ModelDef, source: str) -> ImportResult:
    """The main graph (graph[0]) with its subgraphs, and the problems met (never raised: a dump is shown)."""
    if not model.graph:
        problem = f"{source}: the ModelDef holds no graph"
        return ImportResult(Graph(model.name or "empty"), [problem])
    by_name = {g.name: g for g in model.graph[1:]}
    builder = _GraphBuilder(model.graph[0], by_name, source, depth=0)
    graph = builder.build()
    graph.metadata["producer"] = "GE"
    graph.metadata["ge_source"] = source
    if model.name:
        graph.metadata["ge_model"] = model.name
    counts = Counter(op.type for op in model.graph[0].op)
    graph.metadata["ge_ops"] = json.dumps(dict(sorted(counts.items())))
    unmapped = sorted(builder.unmapped)
    if unmapped:
        graph.metadata["ge_unmapped_ops"] = ", ".join(unmapped)
    graph.metadata["ge_weights"] = "absent" if builder.placeholders else "present"
    return ImportResult(graph, builder.problems)


def domain_of(op_type: str) -> str:
    """Where a dumped type lives in our registry (the module docstring says why)."""
    if REGISTRY.get(op_type, GE_DOMAIN) is not None:
        return GE_DOMAIN
    return "" if REGISTRY.get(op_type, "") is not None else GE_DOMAIN


class _GraphBuilder:
    def __init__(self, proto: pb.GraphDef, subgraphs: dict[str, pb.GraphDef], source: str, depth: int) -> None:
        self.proto = proto
        self.subgraphs = subgraphs
        self.source = source
        self.depth = depth
        self.graph = Graph(proto.name or "graph", {"": 21, GE_DOMAIN: 1})
        self.problems: list[str] = []
        self.unmapped: set[str] = set()
        self.placeholders = 0
        self.kind: dict[str, str] = {}  # op name -> its type, for every op of this graph
        self.output_descs: dict[str, Sequence[pb.TensorDescriptor]] = {}
        self.outputs_read: dict[str, int] = {}  # op name -> 1 + the highest output index any op reads

    def build(self) -> Graph:
        ops = list(self.proto.op)
        self.kind = {op.name: op.type for op in ops}
        self.output_descs = {op.name: op.output_desc for op in ops}
        for op in ops:
            for ref in op.input:
                name, _, index = ref.rpartition(":")
                if name and index.isdigit():
                    self.outputs_read[name] = max(self.outputs_read.get(name, 0), int(index) + 1)
        for op in self._data_ops(ops):
            self.graph.add_input(op.name, self._first_desc(op))
        for op in ops:
            if op.type in CONST_TYPES:
                self._add_constant(op)
        nodes = [self._node(op) for op in ops if op.type not in DATA_TYPES | CONST_TYPES | OUTPUT_TYPES]
        available = set(self.graph.inputs) | set(self.graph.constants)
        order, problems = topo_order(nodes, available)
        self.problems += [f"graph {self.proto.name!r}: {p}" for p in problems]
        for node in order:
            self._add_node(node)
        self._set_outputs(ops)
        return self.graph

    # ---- Data, Const, NetOutput -----------------------------------------------------------------------
    def _data_ops(self, ops: Sequence[pb.OpDef]) -> list[pb.OpDef]:
        data = [op for op in ops if op.type in DATA_TYPES]
        listed = [name.rsplit(":", 1)[0] for name in self.proto.input]
        rank = {name: i for i, name in enumerate(listed)}
        return sorted(data, key=lambda op: (rank.get(op.name, len(rank)), _index_attr(op)))

    def _first_desc(self, op: pb.OpDef) -> TensorDesc:
        descs = op.output_desc or op.input_desc
        return desc_from_proto(descs[0]) if descs else UNDEFINED

    def _add_constant(self, op: pb.OpDef) -> None:
        desc = self._first_desc(op)
        value = op.attr["value"].t if "value" in op.attr and op.attr["value"].HasField("t") else None
        array = array_from_tensor(value, desc.origin_shape or desc.shape) if value is not None and value.data \
            else None
        if isinstance(array, str):
            self.problems.append(f"Const {op.name!r}: weights not read: {array}")
            array = None
        if array is None:
            self.placeholders += 1
            array = _zeros_view(desc)
        self.graph.add_constant(op.name, array, desc)

    def _set_outputs(self, ops: Sequence[pb.OpDef]) -> None:
        outputs = [op for op in ops if op.type in OUTPUT_TYPES]
        refs = [r for op in outputs for r in op.input if r and not r.endswith(":-1")] if outputs \
            else list(self.proto.output)
        tensors = [self._tensor(r) for r in refs]
        missing = [t for t in tensors if not self.graph.has_tensor(t)]
        self.problems += [f"graph {self.proto.name!r}: output {t!r} is not produced by any op" for t in missing]
        self.graph.set_outputs([t for t in tensors if self.graph.has_tensor(t)])

    # ---- ops ----------------------------------------------------------------------------------------
    def _node(self, op: pb.OpDef) -> Node:
        data, control = [], []
        for ref in op.input:
            if ref.endswith(":-1"):
                source = ref[:-3]
                if self.kind.get(source) not in DATA_TYPES | CONST_TYPES | OUTPUT_TYPES:
                    control.append(source)
            else:
                data.append(self._tensor(ref) if ref else "")
        while data and not data[-1]:
            data.pop()
        count = max(len(op.output_desc), self.outputs_read.get(op.name, 0))
        outputs = tuple(f"{op.name}:{i}" for i in range(count))
        attrs = self._attrs(op)
        domain = domain_of(op.type)
        if REGISTRY.get(op.type, domain) is None:
            self.unmapped.add(op.type)
        node = Node(op.name, op.type, tuple(data), outputs, attrs, tuple(control), domain, 1 if domain else 21)
        node.subgraphs = self._subgraphs(op)
        return node

    def _attrs(self, op: pb.OpDef) -> dict[str, Any]:
        attrs = attrs_of(op.attr)
        for name in OPDEF_FIELDS:
            value = getattr(op, name)
            if name in ("id", "stream_id") or len(value):
                attrs[name] = value if isinstance(value, int) else list(value)
        for prefix, descs in (("input", op.input_desc), ("output", op.output_desc)):
            for i, proto in enumerate(descs):
                attrs.update(desc_extras(proto, prefix, i, desc_from_proto(proto)))
        return attrs

    def _subgraphs(self, op: pb.OpDef) -> dict[str, Graph]:
        keys = SUBGRAPH_KEYS.get(op.type, ())
        out: dict[str, Graph] = {}
        for i, name in enumerate(op.subgraph_name):
            key = keys[i] if i < len(keys) else f"branches_{i}" if op.type == "Case" else f"subgraph_{i}"
            proto = self.subgraphs.get(name)
            if proto is None or self.depth >= MAX_SUBGRAPH_DEPTH:
                why = "is not in the file" if proto is None else f"nests deeper than {MAX_SUBGRAPH_DEPTH}"
                self.problems.append(f"op {op.name!r} ({op.type}): subgraph {name!r} {why}")
                continue
            inner = _GraphBuilder(proto, self.subgraphs, self.source, self.depth + 1)
            out[key] = inner.build()
            self.problems += inner.problems
            self.unmapped |= inner.unmapped
            self.placeholders += inner.placeholders
        return out

    def _add_node(self, node: Node) -> None:
        descs = [desc_from_proto(d) for d in self.output_descs.get(node.name, ())]
        descs += [UNDEFINED] * (len(node.outputs) - len(descs))
        self.graph.add_node(node.op_type, node.inputs, node.outputs, node.attrs, name=node.name,
                            descs=descs[: len(node.outputs)], domain=node.domain, opset=node.opset,
                            control_inputs=node.control_inputs, subgraphs=node.subgraphs)

    def _tensor(self, ref: str) -> str:
        """Our tensor name for GE's `op:index` reference."""
        name, _, index = ref.rpartition(":")
        if not name:
            return ref
        if self.kind.get(name) in DATA_TYPES | CONST_TYPES:
            return name
        return f"{name}:{index}"


def _index_attr(op: pb.OpDef) -> int:
    return int(op.attr["index"].i) if "index" in op.attr else 0


def _zeros_view(desc: TensorDesc) -> np.ndarray:
    """A read-only zero array of the desc's shape that allocates one element (weights absent, level 2/3)."""
    dtype = dtypes.numpy_dtype(desc.dtype) or np.dtype(np.float32)
    shape = desc.shape if desc.is_static else ()
    return np.broadcast_to(np.zeros((), dtype), shape)
