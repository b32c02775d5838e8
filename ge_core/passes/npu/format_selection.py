"""FormatSelectionPass: pick each op's format for the NPU and put TransData at each op's format boundary."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.formats import NC1HWC0
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.infra.base import PassResult
from ge_core.passes.npu.edits import convert_input, convert_output, in_format, rebind_bodies
from ge_core.passes.npu.rules import Rule, feature_map_problem
from ge_core.passes.npu.select import ORIGIN, Choice, is_candidate, select_formats


@dataclass(frozen=True)
class FormatSelectionPass:
    """Choose the format each op works in on the NPU, and convert at each op's boundary.

    The cube works on 16-channel blocks: Conv and its kin take feature maps in NC1HWC0 (N, C/16, H, W, 16:
    channels padded to a multiple of C0=16) and weights in FRACTAL_Z; pooling and per-channel norms work
    on the same 5-D tiles. Elementwise ops, Concat and Resize compute the same in any layout, so they
    follow an input that comes in NC1HWC0. Everything else (Reshape, Flatten, MatMul, Softmax, graph
    outputs...) keeps the origin layout, NCHW or ND.

    Constants are converted here, at compile time (weights to FRACTAL_Z, per-channel constants to
    NC1HWC0): they need no TransData at run time. Each op working in NC1HWC0 then gets a TransData from
    NCHW on each feature-map input and back to NCHW on each output, as GE inserts trans nodes op by op: so
    every tensor between ops keeps its origin format and two NC1HWC0 ops in a row meet through a
    back-to-back inverse pair, which TransDataSymmetryEliminationPass removes next.

    Values are untouched: on the CPU arrays stay in the origin layout and TransData passes them through;
    the format is the device layout recorded on each TensorDesc (its `device_shape` holds the padding).
    """

    name: ClassVar[str] = "FormatSelectionPass"

    def run(self, graph: Graph) -> PassResult:
        chosen = select_formats(graph)
        lowered = [graph.node(n) for n, c in chosen.items() if c.rule is not None]
        folded = _fold_constants(graph, lowered, chosen)
        inserted = retagged = 0
        for node in lowered:
            rule = chosen[node.name].rule
            assert rule is not None
            added, tagged = _wrap(graph, node, rule)
            inserted, retagged = inserted + added, retagged + tagged
        report = {"formats": tuple(c.to_json() for n, c in chosen.items()
                                   if graph.has_node(n) and is_candidate(graph, graph.node(n)))}
        changed = bool(folded or inserted or retagged)
        return PassResult(changed, _notes(chosen, folded, inserted) if changed else (), report=report)


def _notes(chosen: dict[str, Choice], folded: int, inserted: int) -> tuple[str, ...]:
    kinds = Counter(c.op_type for c in chosen.values() if c.format == NC1HWC0)
    shown = ", ".join(f"{n} {op}" for op, n in kinds.most_common(6)) + (" ..." if len(kinds) > 6 else "")
    stay = sum(c.format == ORIGIN for c in chosen.values())
    return (f"{sum(kinds.values())} op(s) work in NC1HWC0 ({shown}); {stay} keep their origin format",
            f"{folded} constant(s) converted at compile time (weights to FRACTAL_Z, per-channel to NC1HWC0)",
            f"{inserted} TransData inserted at the ops' format boundaries")


def _fold_constants(graph: Graph, lowered: list[Node], chosen: dict[str, Choice]) -> int:
    """Give each constant the format its NC1HWC0 readers need; a constant that readers want in several
    formats (or also as it is) is duplicated, one copy per format. Returns how many were converted."""
    wants: dict[str, dict[str, list[tuple[Node, int]]]] = {}
    for node in lowered:
        rule = chosen[node.name].rule
        assert rule is not None
        for i, t in enumerate(node.inputs):
            fmt = rule.wanted(i)
            if t and fmt is not None and graph.is_constant(t) and graph.desc(t).format != fmt:
                wants.setdefault(t, {}).setdefault(fmt, []).append((node, i))
    for const, by_format in wants.items():
        readers = {id(n) for uses in by_format.values() for n, _ in uses}
        shared = graph.is_output(const) or any(id(u) not in readers for u in graph.users(const))
        if len(by_format) == 1 and not shared:
            graph.set_desc(const, in_format(graph.desc(const), next(iter(by_format))))
            continue
        for fmt, uses in by_format.items():
            copy = graph.unique_tensor_name(f"{const}_{fmt.lower()}")
            graph.add_constant(copy, graph.constants[const], in_format(graph.desc(const), fmt))
            for node, i in uses:
                graph.set_input(node, i, copy)
    return sum(len(by_format) for by_format in wants.values())


def _wrap(graph: Graph, node: Node, rule: Rule) -> tuple[int, int]:
    """TransData into the wanted format before each input not in it, and back to the origin format after
    each output still in it. Returns (TransData inserted, unread outputs merely marked NC1HWC0)."""
    inserted = marked = 0
    converted: dict[tuple[str, str], str] = {}
    for i, t in enumerate(node.inputs):
        fmt = rule.wanted(i)
        if not t or fmt is None or graph.desc(t).format == fmt:
            continue
        if (t, fmt) in converted:
            graph.set_input(node, i, converted[t, fmt])  # the same tensor read twice: one conversion
            continue
        converted[t, fmt] = convert_input(graph, node, i, fmt)
        inserted += 1
    for t in node.outputs:
        desc = graph.desc(t)
        if desc.format == NC1HWC0 or feature_map_problem(desc) is not None:
            continue
        if graph.num_uses(t) == 0:
            graph.set_desc(t, in_format(desc, NC1HWC0))  # an unread output: no way back needed
            marked += 1
            continue
        convert_output(graph, node, t, NC1HWC0)
        inserted += 1
    if inserted or marked:
        rebind_bodies(graph, NC1HWC0, [node])
    return inserted, marked
