"""Our compile beside GE's Build graph of the same architecture (the Compare page's "Ours beside GE's"): the
kernels by op type (ours named as GE names them where op_map has the pair), the TransData nodes (how many, and
between which ops, from which format to which), the formats the tensors are in, and the fused groups (a fused
node of ours holds its body; GE's names its originals in `_datadump_original_op_names`).

    beside_ge(ours: CompiledModel, ge: CompiledModel) -> BesideGE   (tables, each with an `ours` / `GE` side)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from ge_core.compiler import CompiledModel
from ge_core.frontend.ge.attrs import original_names
from ge_core.frontend.ge.op_map import TABLE
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node

OURS, GE = "ours", "GE"
TRANSDATA = "TransData"
GE_NAME = {m.op_type: m.ge_type for m in reversed(TABLE)}  # our type -> GE's (the first row of a pair wins)


@dataclass(frozen=True)
class BesideGE:
    kernels: pd.DataFrame  # op type (GE's name) | ours | GE | difference
    transdata: pd.DataFrame  # side | node | from | to | formats
    formats: pd.DataFrame  # format | ours | GE (tensors in it)
    fused: pd.DataFrame  # side | node | op type | ops | originals

    def headline(self) -> dict[str, tuple[int, int]]:
        """(ours, GE's) for kernels, TransData nodes and fused groups."""
        def pair(frame: pd.DataFrame) -> tuple[int, int]:
            return int((frame["side"] == OURS).sum()), int((frame["side"] == GE).sum())
        return {"kernels": (int(self.kernels[OURS].sum()), int(self.kernels[GE].sum())),
                "TransData": pair(self.transdata), "fused groups": pair(self.fused)}


def beside_ge(ours: CompiledModel, ge: CompiledModel) -> BesideGE:
    return BesideGE(_kernels(ours, ge), _transdata(ours.graph, ge.graph), _formats(ours.graph, ge.graph),
                    _fused(ours.graph, ge.graph))


def ge_type(op_type: str) -> str:
    """Our op type as GE names it (Conv as Conv2D, Gemm as FullyConnection ...), else as it is."""
    return GE_NAME.get(op_type, op_type)


def _kernel_types(compiled: CompiledModel) -> Counter[str]:
    """Kernels by type, as GE names the type (a GE dump's own types stay; one of ours written as a dump too)."""
    return Counter(ge_type(s.op_type) for s in compiled.plan.steps if s.launches_kernel)


def _kernels(ours: CompiledModel, ge: CompiledModel) -> pd.DataFrame:
    mine, theirs = _kernel_types(ours), _kernel_types(ge)
    rows = [{"op type": t, OURS: mine.get(t, 0), GE: theirs.get(t, 0), "difference": mine.get(t, 0) - theirs.get(t, 0)}
            for t in sorted(set(mine) | set(theirs), key=lambda t: (-(mine.get(t, 0) + theirs.get(t, 0)), t))]
    return pd.DataFrame(rows, columns=["op type", OURS, GE, "difference"])


def _transdata(ours: Graph, ge: Graph) -> pd.DataFrame:
    rows = [row for side, graph in ((OURS, ours), (GE, ge)) for row in _transdata_rows(side, graph)]
    return pd.DataFrame(rows, columns=["side", "node", "from", "to", "formats"])


def _transdata_rows(side: str, graph: Graph) -> Iterable[dict[str, str]]:
    for node in graph.nodes:
        if node.op_type != TRANSDATA:
            continue
        producers = [graph.producer(t) for t in node.inputs if t]
        consumers = [c for t in node.outputs for c in graph.users(t)]
        yield {"side": side, "node": node.name,
               "from": ", ".join(_where(graph, p, t) for p, t in zip(producers, node.inputs, strict=False)),
               "to": ", ".join(f"{c.name} ({c.op_type})" for c in consumers[:4]) + (" …" if len(consumers) > 4 else "")
               or "graph output",
               "formats": f"{node.attrs.get('src_format', '?')} → {node.attrs.get('dst_format', '?')}"}


def _where(graph: Graph, producer: Node | None, tensor: str) -> str:
    if producer is not None:
        return f"{producer.name} ({producer.op_type})"
    return f"{tensor} (input)" if tensor in graph.inputs else f"{tensor} (constant)"


def _formats(ours: Graph, ge: Graph) -> pd.DataFrame:
    mine, theirs = _format_counts(ours), _format_counts(ge)
    rows = [{"format": f, OURS: mine.get(f, 0), GE: theirs.get(f, 0)}
            for f in sorted(set(mine) | set(theirs), key=lambda f: (-(mine.get(f, 0) + theirs.get(f, 0)), f))]
    return pd.DataFrame(rows, columns=["format", OURS, GE])


def _format_counts(graph: Graph) -> Counter[str]:
    """Tensors per format: the graph's inputs and every node's outputs (constants: their format too)."""
    tensors = [*graph.inputs, *graph.constants, *(t for n in graph.nodes for t in n.outputs if t)]
    return Counter(graph.desc(t).format for t in tensors if graph.has_tensor(t))


def _fused(ours: Graph, ge: Graph) -> pd.DataFrame:
    rows = []
    for side, graph in ((OURS, ours), (GE, ge)):
        for node in graph.nodes:
            originals = [n.name for n in node.body.nodes] if node.body is not None else original_names(node.attrs)
            if len(originals) > 1:
                rows.append({"side": side, "node": node.name, "op type": node.op_type, "ops": len(originals),
                             "originals": ", ".join(originals)})
    return pd.DataFrame(rows, columns=["side", "node", "op type", "ops", "originals"])
