"""The Compare page's data: one model under several CompileConfigs, side by side.

`compare` compiles each configuration (ge_core.compile), simulates those with a hardware target, and runs
each on the same seeded inputs against the graph as imported (O0, the CPU executor). Then:
- metrics(): one row per configuration (the compile report's numbers, simulated µs, error vs O0) with
  deltas against the first;
- node_alignment(): each original node -> the node holding it in each configuration (ge_core.viz.origins);
- latency_delta(): µs per original node in each configuration. A fused kernel's time belongs to all the
  nodes it holds, so nodes sharing a kernel in any configuration form one row: each configuration's
  rows then sum to its simulated total, and nothing is counted twice.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ge_core.compiler import CompiledModel
from ge_core.compiler import compile as ge_compile
from ge_core.config import CompileConfig
from ge_core.errors import GEError, UsageError
from ge_core.frontend import load_onnx
from ge_core.ir.graph import Graph
from ge_core.runtime import execute, random_feeds, relative_error
from ge_core.samples import sample_bytes
from ge_core.sim.simulator import SimResult, simulate
from ge_core.viz.compare_spec import ComparisonSpec
from ge_core.viz.origins import Fate, fates, holders

ModelSource = str | bytes | Graph
METRICS = ["nodes", "kernels", "arena_bytes", "theory_min_bytes", "simulated_us", "compile_seconds", "max_rel_error"]


@dataclass
class Entry:
    """One configuration's outcome: compiled (and simulated with a hardware target), or the error."""

    name: str
    config: CompileConfig
    compiled: CompiledModel | None = None
    sim: SimResult | None = None
    max_rel_error: float | None = None  # against the graph as imported, on the comparison's seeded inputs
    error: str = ""

    @cached_property
    def fates(self) -> dict[str, Fate]:
        return fates(self.compiled) if self.compiled is not None else {}


@dataclass
class Comparison:
    spec: ComparisonSpec
    entries: list[Entry] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The spec (model reference, seed, named configs): enough to run the comparison again."""
        return self.spec.to_json()

    @staticmethod
    def from_json(data: Mapping[str, Any] | str) -> ComparisonSpec:
        """The spec of a saved comparison (run_spec runs it again); unknown keys are refused."""
        return ComparisonSpec.from_json(data)

    def metrics(self) -> pd.DataFrame:
        """One row per configuration: status, error, the compile report's nodes, kernels, arena and theory
        minimum, compile seconds, simulated µs, max relative error vs O0; `<metric>_delta` vs the first."""
        frame = pd.DataFrame([_metrics_row(e) for e in self.entries])
        for metric in METRICS:
            first = frame[metric].iloc[0] if len(frame) else None
            frame[f"{metric}_delta"] = [_delta(v, first) for v in frame[metric]]
        return frame

    def node_alignment(self) -> pd.DataFrame:
        """Per original node (input graph order): its op and, for each configuration, the node holding it
        ("" when removed), its status (kept, fused, removed) and the pass that fused or removed it."""
        originals = _originals(self.entries)
        rows = []
        for name, op_type in originals.items():
            row: dict[str, Any] = {"node": name, "op_type": op_type}
            for e in self.entries:
                fate = e.fates.get(name)
                row[e.name] = fate.holder if fate else ""
                row[f"{e.name} status"] = fate.status if fate else ("error" if e.error else "")
                row[f"{e.name} pass"] = fate.pass_name if fate else ""
            rows.append(row)
        columns = ["node", "op_type", *[f"{e.name}{s}" for e in self.entries for s in ("", " status", " pass")]]
        return pd.DataFrame(rows, columns=columns)

    def latency_delta(self) -> pd.DataFrame:
        """Per group of original nodes (one node, or the nodes sharing a kernel in some configuration):
        for each simulated configuration its kernels and µs, and `<name> delta_us` vs the first one."""
        simulated = [e for e in self.entries if e.sim is not None and e.compiled is not None]
        latencies = {e.name: _latencies(e) for e in simulated}
        rows = []
        for group in _kernel_groups(simulated, _originals(self.entries)):
            row: dict[str, Any] = {"nodes": ", ".join(group.members), "op_types": group.op_types}
            for e in simulated:
                row[f"{e.name} kernels"] = ", ".join(group.kernels[e.name])
                row[f"{e.name} us"] = sum(latencies[e.name][k] for k in group.kernels[e.name])
            for e in simulated[1:]:
                row[f"{e.name} delta_us"] = row[f"{e.name} us"] - row[f"{simulated[0].name} us"]
            rows.append(row)
        columns = ["nodes", "op_types", *[f"{e.name} {c}" for e in simulated for c in ("kernels", "us")],
                   *[f"{e.name} delta_us" for e in simulated[1:]]]
        return pd.DataFrame(rows, columns=columns)


def compare(model_source: ModelSource, configs: Sequence[tuple[str, CompileConfig]], *, seed: int = 0,
            model: str | None = None, numerics: bool = True) -> Comparison:
    """Compile `model_source` ("sample:NAME", a path, ONNX bytes or a Graph) under each named config; the
    spec's model reference is `model`, else the string given, else upload:<sha256> of the bytes. Configs
    should carry the model's input shapes (symbolic dims need them for a plan, a simulation and inputs).
    numerics=False skips running the graphs (no max_rel_error; simulated timing only): running is most
    of a comparison's time on a big model (densenet121: three CPU runs, ~10 s of ~15 s)."""
    spec = ComparisonSpec.of(model or _reference(model_source), configs, seed)
    return run_spec(spec, model_source, numerics=numerics)


def run_spec(spec: ComparisonSpec, source: ModelSource | None = None, *, numerics: bool = True) -> Comparison:
    """Run a (loaded) spec; `source` is needed when the model is an upload (its bytes) or not a file."""
    resolved = _resolve(source if source is not None else spec.model)
    graphs: dict[str, Graph | GEError] = {}  # by input shapes: loaded once, with their O0 outputs
    references: dict[str, tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None] = {}
    entries = []
    for name, config in spec.configs:
        if config.input_shapes not in graphs:
            graphs[config.input_shapes] = _load(resolved, config.input_shapes)
            loaded = graphs[config.input_shapes]
            references[config.input_shapes] = (_reference_run(loaded, spec.seed)
                                               if numerics and isinstance(loaded, Graph) else None)
        loaded = graphs[config.input_shapes]
        if isinstance(loaded, GEError):
            entries.append(Entry(name, config, error=str(loaded)))
            continue
        entries.append(_run_one(name, config, loaded, references[config.input_shapes]))
    return Comparison(spec, entries)


def _run_one(name: str, config: CompileConfig, graph: Graph,
             reference: tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None) -> Entry:
    entry = Entry(name, config)
    try:
        entry.compiled = ge_compile(graph, config)
        feeds, want = reference if reference is not None else (None, None)
        if config.hardware is not None:
            entry.sim = simulate(entry.compiled, feeds=feeds, run=feeds is not None)
        if feeds is not None and want is not None:
            got = entry.sim.outputs if entry.sim is not None else entry.compiled.run(feeds)
            entry.max_rel_error = max((relative_error(got[k], v) for k, v in want.items()), default=0.0)
    except GEError as err:
        entry.error = str(err)
    return entry


def _reference(source: ModelSource) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, bytes):
        return f"upload:{hashlib.sha256(source).hexdigest()}"
    return f"graph:{source.name}"


def _resolve(source: ModelSource) -> bytes | str | Graph:
    if isinstance(source, str) and source.startswith("sample:"):
        return sample_bytes(source.removeprefix("sample:"))
    if isinstance(source, str) and source.startswith(("upload:", "graph:")):
        raise UsageError(f"the comparison's model '{source}' is not a file or a sample.",
                         hint="Give its bytes (or graph) to run_spec, or upload the model again.")
    return source


def _load(source: bytes | str | Graph, shapes: str) -> Graph | GEError:
    try:
        return source if isinstance(source, Graph) else load_onnx(source, shapes or None)
    except GEError as err:
        return err


def _reference_run(graph: Graph, seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    """Seeded inputs and the outputs of the graph as imported (None while an input has symbolic dims)."""
    try:
        feeds = random_feeds(graph, seed)
        return feeds, execute(graph, feeds)
    except GEError:
        return None


def _metrics_row(e: Entry) -> dict[str, Any]:
    """The compile report's numbers, read from the model itself (building the whole report is slower)."""
    c, plan = e.compiled, e.compiled.memory if e.compiled is not None else None
    return {"config": e.name, "key": e.config.key(), "status": "error" if e.error else "ok", "error": e.error,
            "opt_level": str(e.config.opt_level), "hardware": e.config.hardware or "",
            "precision_mode": e.sim.precision if e.sim is not None else e.config.precision_mode or "",  # as run
            "nodes_before": len(c.input_graph) if c is not None else None,
            "nodes": len(c.graph) if c is not None else None, "kernels": c.plan.kernels if c is not None else None,
            "memory_strategy": plan.strategy if plan is not None else "",
            "arena_bytes": plan.arena_bytes if plan is not None else None,
            "theory_min_bytes": plan.theory_min_bytes if plan is not None else None,
            "simulated_us": e.sim.total_us if e.sim is not None else None,
            "compile_seconds": round(c.compile_seconds, 6) if c is not None else None,  # as the report rounds
            "max_rel_error": e.max_rel_error}


def _delta(value: Any, first: Any) -> float | None:
    if value is None or first is None or _missing(value) or _missing(first):
        return None
    return float(value) - float(first)


def _missing(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _originals(entries: Sequence[Entry]) -> dict[str, str]:
    """Original node -> op type, in the input graph's order (the configs' input graphs, merged)."""
    out: dict[str, str] = {}
    for e in entries:
        if e.compiled is not None:
            for node in e.compiled.input_graph.nodes:
                out.setdefault(node.name, node.op_type)
    return out


def _latencies(e: Entry) -> dict[str, float]:
    return {r.node: r.latency_us for r in e.sim.ops} if e.sim is not None else {}


@dataclass
class _Group:
    members: list[str]  # original nodes
    kernels: dict[str, list[str]]  # entry name -> its kernels holding them
    op_types: str = ""


def _kernel_groups(entries: Sequence[Entry], originals: Mapping[str, str]) -> list[_Group]:
    """Originals joined when one kernel holds them in any entry (union-find), with each entry's kernels;
    a kernel holding no original (an inserted TransData) is a group of its own. Groups with no kernel
    anywhere (removed nodes, views) are left out."""
    parent = {name: name for name in originals}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    held: dict[str, dict[str, list[str]]] = {}  # entry -> kernel -> the originals it holds
    for e in entries:
        assert e.compiled is not None
        inside: dict[str, list[str]] = {}
        for name, holder in holders(e.compiled.graph).items():
            if name in parent:
                inside.setdefault(holder, []).append(name)
        held[e.name] = {k: inside.get(k, []) for k in _latencies(e)}
        for members in held[e.name].values():
            for other in members[1:]:
                parent[root(other)] = root(members[0])
    groups: dict[str, _Group] = {}
    for name in originals:
        groups.setdefault(root(name), _Group([], {e.name: [] for e in entries})).members.append(name)
    for e in entries:
        for kernel, members in held[e.name].items():
            key = root(members[0]) if members else f"inserted:{kernel}"
            op = "" if members else e.compiled.graph.node(kernel).op_type if e.compiled is not None else ""
            group = groups.setdefault(key, _Group([kernel], {x.name: [] for x in entries}, op))
            group.kernels[e.name].append(kernel)
    for group in groups.values():
        group.op_types = group.op_types or "+".join(dict.fromkeys(originals[m] for m in group.members))
    return [g for g in groups.values() if any(g.kernels.values())]
