"""A GE graph dump as the pages take a compiled model: the first stage as the input graph, the last as the
final graph, one record per later stage (its snapshot, GE's fused ops as fusion decisions), and a report.

    load_ge_dump(source, name="", config=None) -> CompiledModel   a dump file, folder or zip (path or bytes)
    ge_dump_facts(compiled) -> dict | None                         what the dump is (None: a compile of ours)
    priced_dump(compiled) -> CompiledModel                          the final graph in our ops, for the simulator
    unpriced_nodes(graph) -> list[str]                              the nodes no op of ours prices
    names_on_graph(log.names, graph) -> NamesOnGraph                the ops and kernels a GE log names, found

Nothing here compiles or runs: a dump has no pass of ours to switch off, no memory plan to re-plan, and its
GE ops have no CPU kernel. GE's types stay GE's (what the file says); the simulator prices the copy in which
op_map put our equivalent under each mapped node's name, and leaves the others unpriced (shown, not timed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from ge_core.compiler import CompiledModel, ExecutionPlan
from ge_core.config import CompileConfig
from ge_core.debugging.ge_log_lines import Names
from ge_core.debugging.ge_records import dump_records
from ge_core.frontend.ge.attrs import original_names
from ge_core.frontend.ge.dump_files import GeDump, read_dump
from ge_core.frontend.ge.op_map import registry_graph
from ge_core.frontend.onnx import ImportResult
from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY

FACTS = "ge_dump"  # the report's section naming the dump


def load_ge_dump(source: str | os.PathLike[str] | bytes, name: str = "",
                 config: CompileConfig | None = None) -> CompiledModel:
    """Every stage of the dump's main graph (the one with the most stages) as a CompiledModel; `config`
    only names the hardware target and precision the pages simulate it on (nothing is compiled)."""
    return compiled_from_dump(read_dump(source, name), config)


def compiled_from_dump(dump: GeDump, config: CompileConfig | None = None) -> CompiledModel:
    graph_id = _main_graph(dump)
    stages = dump.stages(graph_id)
    first, records = dump_records(dump, graph_id)
    final = records[-1].snapshot if records and records[-1].snapshot is not None else first
    problems = [p for s in stages for p in s.result.problems]
    facts: dict[str, Any] = {
        "source": dump.source,
        "graph_id": graph_id,
        "graphs": sorted(dump.graphs),
        "stages": [s.stage for s in stages],
        "files": [s.file.name for s in stages],
        "form": final.metadata.get("ge_form", ""),
        "weights": final.metadata.get("ge_weights", ""),
        "unmapped": final.metadata.get("ge_unmapped_ops", ""),
        "problems": problems,
    }
    return CompiledModel(final, first, config or CompileConfig(), records, ExecutionPlan.of(final), 0.0,
                         {FACTS: facts})


def _main_graph(dump: GeDump) -> int | None:
    if not dump.graphs:
        return None
    return max(dump.graphs, key=lambda g: (len(dump.graphs[g]), -g))


def ge_dump_facts(compiled: CompiledModel) -> dict[str, Any] | None:
    """The dump `compiled` was read from (source, stages, files, form, weights, unmapped types, problems), or
    None for a compile of ours."""
    facts = compiled.extra_report.get(FACTS)
    return facts if isinstance(facts, dict) else None


def final_stage(compiled: CompiledModel) -> ImportResult:
    """The dump's last stage as an import (what the Model page shows), with every stage's problems."""
    facts = ge_dump_facts(compiled) or {}
    return ImportResult(compiled.graph, list(facts.get("problems", [])))


def priced_dump(compiled: CompiledModel) -> CompiledModel:
    """The same dump with its final graph as op_map's registry copy: what the simulator prices (same node
    names, so its rows select nodes of GE's graph)."""
    graph = registry_graph(compiled.graph)
    return replace(compiled, graph=graph, plan=ExecutionPlan.of(graph))


def unpriced_nodes(graph: Graph) -> list[str]:
    """Nodes no op of ours stands for (a GE type without an op_map row): shown on the pages, not timed."""
    return [n.name for n in graph.nodes if REGISTRY.for_node(n) is None and not n.subgraphs]


@dataclass(frozen=True)
class NamesOnGraph:
    """What a GE log names, found on a graph: each matched name -> the nodes it marks; the names not found."""

    marked: dict[str, tuple[str, ...]]
    unmatched: tuple[str, ...]

    @property
    def nodes(self) -> list[str]:
        """Every node marked, each once, in the log's order."""
        return list(dict.fromkeys(n for nodes in self.marked.values() for n in nodes))


def names_on_graph(names: Names, graph: Graph) -> NamesOnGraph:
    """The ops a log names (by node name, or as an original op GE fused into a node: its
    `_datadump_original_op_names`) and the kernels it names (a node's `*kernelname` attr, GE's TBE kernel
    name), marked on `graph`; op types only when no op or kernel matched (they would mark every node of it)."""
    by_name = {n.name: (n.name,) for n in graph.nodes}
    fused: dict[str, list[str]] = {}
    kernels: dict[str, list[str]] = {}
    for node in graph.nodes:
        for original in original_names(node.attrs):
            fused.setdefault(original, []).append(node.name)
        for key, value in node.attrs.items():
            if isinstance(value, str) and value and key.lower().replace("_", "").endswith("kernelname"):
                kernels.setdefault(value, []).append(node.name)
    marked: dict[str, tuple[str, ...]] = {}
    for op in names.ops:
        found = by_name.get(op) or tuple(fused.get(op, ()))
        if found:
            marked[op] = found
    for kernel in names.kernels:
        found = tuple(n for k, nodes in kernels.items() if k == kernel or k.startswith(f"{kernel}_") for n in nodes)
        if found:
            marked[kernel] = found
    if not marked:
        for op_type in names.op_types:
            found = tuple(n.name for n in graph.nodes if n.op_type == op_type)
            if found:
                marked[op_type] = found
    unmatched = tuple(n for n in [*names.ops, *names.kernels, *names.op_types] if n not in marked)
    return NamesOnGraph(marked, unmatched)
