"""A model's summary: what `inspect` prints and the Model page shows."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from ge_core.errors import printable
from ge_core.frontend.onnx import ImportResult
from ge_core.ir.graph import Graph
from ge_core.ir.tensor import NOT_INFERRED


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    dims: list[str]  # symbolic names kept: ["batch", "3", "224", "224"]

    def text(self) -> str:
        """`float32[batch, 3]`; a tensor shape inference never reached (dtype undefined) as `? (not inferred)`."""
        return NOT_INFERRED if self.dtype == "undefined" else f"{self.dtype}[{', '.join(self.dims)}]"


@dataclass
class ModelSummary:
    name: str
    producer: str
    opset: dict[str, int]
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    nodes: int
    op_histogram: dict[str, int]
    parameters: int  # elements held by constants
    parameter_bytes: int
    unsupported: dict[str, list[str]] = field(default_factory=dict)  # op -> nodes using it
    problems: list[str] = field(default_factory=list)
    converted: str = ""  # how an old-opset model was converted before import ("" when it was not)

    @property
    def ok(self) -> bool:
        return not self.unsupported and not self.problems

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}

    def to_text(self) -> str:
        lines = [f"model    {self.name}  ({self.producer or 'unknown producer'}, opset "
                 + ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in self.opset.items()) + ")"]
        if self.converted:
            lines.append(f"note     {self.converted}")
        lines += [f"input    {t.name}: {t.text()}" for t in self.inputs]
        lines += [f"output   {t.name}: {t.text()}" for t in self.outputs]
        lines.append(f"nodes    {self.nodes}   parameters {self.parameters:,} ({_mib(self.parameter_bytes)})")
        ops = sorted(self.op_histogram.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append("ops      " + ", ".join(f"{op} x{n}" for op, n in ops))
        for op, nodes in self.unsupported.items():
            lines.append(f"UNSUPPORTED {op}: {len(nodes)} node(s): {', '.join(nodes[:5])}"
                         + (" ..." if len(nodes) > 5 else ""))
        lines += [f"PROBLEM  {p}" for p in self.problems]
        return "\n".join(printable(line) for line in lines)  # names from the model never start a line


def summarize(result: ImportResult) -> ModelSummary:
    graph = result.graph
    # a GE dump: its ops as the file lists them (Data, Const and NetOutput are inputs, constants and outputs here)
    dumped: dict[str, int] | None = json.loads(graph.metadata["ge_ops"]) if "ge_ops" in graph.metadata else None
    unsupported: dict[str, list[str]] = {}
    for node, op in result.unsupported:
        unsupported.setdefault(op, []).append(node)
    return ModelSummary(
        name=graph.name,
        producer=graph.metadata.get("producer", ""),
        opset=dict(graph.opset),
        inputs=[TensorInfo(t, graph.desc(t).dtype, graph.input_dims_text(t)) for t in graph.inputs],
        outputs=[_info(graph, t) for t in graph.outputs],
        nodes=len(graph) if dumped is None else sum(dumped.values()),
        op_histogram=dict(Counter(n.op_type for n in graph.nodes)) if dumped is None else dumped,
        parameters=sum(int(a.size) for a in graph.constants.values()),
        parameter_bytes=sum(int(a.nbytes) for a in graph.constants.values()),
        unsupported=unsupported,
        problems=list(result.problems),
        converted=graph.metadata.get("converted", ""),
    )


def _info(graph: Graph, tensor: str) -> TensorInfo:
    desc = graph.desc(tensor)
    return TensorInfo(tensor, desc.dtype, ["?" if d < 0 else str(d) for d in desc.shape])


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.2f} MiB"
