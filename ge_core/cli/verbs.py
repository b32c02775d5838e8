"""The `inspect`, `run` and `compile` verbs (`profile` and `run --backend npu` live in profile.py)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ge_core.cli.options import compiled_from_args, imported_of, value_stats
from ge_core.compiler import CompiledModel
from ge_core.debugging.dump import write_dumps
from ge_core.debugging.ge_stages import FORMATS as GE_FORMATS
from ge_core.debugging.ge_stages import GeDumpOptions, write_ge_dumps
from ge_core.errors import UsageError, printable
from ge_core.frontend.summary import summarize
from ge_core.kernels import jit
from ge_core.ops import REGISTRY
from ge_core.passes.npu.report import lowering_line
from ge_core.runtime import random_feeds
from ge_core.runtime.npz import read_npz, write_npz
from ge_core.runtime.timings import timing_table
from ge_core.sim import simulate
from ge_core.viz.exports import compile_tables

RUN_OPT_LEVEL = "O0"  # `run` runs the model as imported unless told otherwise


def cmd_inspect(args: argparse.Namespace) -> int:
    result = imported_of(args)
    summary = summarize(result)
    if args.json:
        print(json.dumps(summary.to_json() | {"supported_ops": REGISTRY.supported()}, indent=2))
    else:
        print(summary.to_text())
    if not result.ok:
        print(f"ge_core inspect: {result.error()}", file=sys.stderr)
        return 3
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    compiled = compiled_from_args(args, default_opt_level=RUN_OPT_LEVEL)
    feeds = read_npz(args.inputs) if args.inputs else random_feeds(compiled.input_graph, args.seed)
    compiles, start = jit.compiles(), time.perf_counter()
    result = compiled.runner.run(feeds)
    say_kernel_compiles(jit.compiles() - compiles, time.perf_counter() - start)
    print_outputs(result.outputs, args.outputs)
    total = sum(t.seconds for t in result.timings)
    print(f"{len(result.timings)} nodes ({compiled.plan.kernels} kernels, {compiled.config.opt_level}) in "
          f"{total * 1e3:.1f} ms; peak activations {result.peak_live_bytes / (1 << 20):.2f} MiB")
    if args.timings:
        print(timing_table(result.timings))
    return 0


def say_kernel_compiles(count: int, seconds: float) -> None:
    """On stderr, when a run compiled fast CPU kernels (numba's cache did not have them): what it cost, and
    that `warmup` does it ahead."""
    if count:
        print(f"note: this run compiled {count} CPU kernel signatures for this machine first ({seconds:.1f} s in "
              f"all); later runs load them from numba's cache. `python -m ge_core warmup` compiles them ahead.",
              file=sys.stderr)


def print_outputs(outputs: dict[str, np.ndarray], path: str | None) -> None:
    """One line per output (dtype, shape, min/max/mean); with `path`, the outputs as an .npz there."""
    for name, value in outputs.items():
        print(f"{printable(name)}: {value.dtype}{list(value.shape)}  {value_stats(value)}")
    if path:
        write_npz(path, outputs)
        print(f"wrote {len(outputs)} output(s) to {path}")


def cmd_compile(args: argparse.Namespace) -> int:
    compiled = compiled_from_args(args)
    print(f"{'#':>3} {'stage':<22} {'pass':<32} {'changed':<7} {'nodes':>13} {'ms':>8}")
    for r in compiled.records:
        print(f"{r.index:>3} {r.stage:<22} {r.name:<32} {'yes' if r.changed else '-':<7} "
              f"{r.nodes_before:>6}->{r.nodes_after:<6} {r.seconds * 1e3:>8.2f}")
    print(f"compiled {len(compiled.input_graph)} -> {len(compiled.graph)} nodes, {compiled.plan.kernels} kernels, "
          f"in {compiled.compile_seconds:.3f} s ({compiled.config.opt_level})")
    print(cache_line(compiled.report))
    print(memory_line(compiled.report))
    if compiled.config.hardware:
        print(lowering_line(compiled.graph, compiled.report))
    if args.report:
        Path(args.report).write_text(json.dumps(compiled.report, indent=2), encoding="utf-8")
        print(f"wrote report to {args.report}")
    if args.dump_dir:
        files = write_dump_formats(compiled, args)
        print(f"wrote {len(files)} dump files to {args.dump_dir}")
    if args.tables:
        tables = write_tables(compiled, args.tables)
        print(f"wrote {len(tables)} tables to {args.tables}: {', '.join(p.name for p in tables)}")
    if args.output:
        print(f"wrote the offline model to {compiled.save(args.output)} (run it: python -m ge_core run {args.output})")
    return 0


def write_dump_formats(compiled: CompiledModel, args: argparse.Namespace) -> list[Path]:
    """--dump-dir in the --dump-format forms: ours per pass, and GE's as DUMP_GE_GRAPH / DUMP_GRAPH_LEVEL say."""
    formats = [f.strip() for f in str(getattr(args, "dump_format", "workbench")).split("|") if f.strip()]
    odd = [f for f in formats if f not in ("workbench", *GE_FORMATS)]
    if odd or not formats:
        raise UsageError(f"--dump-format {args.dump_format!r}: give workbench, ge_proto and/or onnx, '|'-separated.")
    level = str(getattr(args, "dump_graph_level", "2"))  # DUMP_GRAPH_LEVEL: which stages, for every form
    files = write_dumps(compiled, args.dump_dir, stages=level) if "workbench" in formats else []
    ge_forms = tuple(f for f in formats if f in GE_FORMATS)
    if ge_forms:
        options = GeDumpOptions(getattr(args, "dump_ge_graph", 2), level, ge_forms)
        files += write_ge_dumps(compiled, args.dump_dir, options)
    return files


def cache_line(report: dict[str, Any]) -> str:
    cache = report.get("cache") or {}
    if cache.get("hit"):
        return (f"cache: hit {cache['key'][:12]}, loaded in {cache['load_seconds']:.3f} s "
                f"(the compile it saved took {report['compile_seconds']:.3f} s)")
    if cache.get("why"):  # a hit would not pay: compiled, nothing kept
        return f"cache: {'miss, not kept' if cache.get('key') else 'skipped'}: {cache['why']}"
    if cache.get("key") is None:
        return "cache: not used"
    return f"cache: miss, stored as {cache['key'][:12]}"


def write_tables(compiled: CompiledModel, directory: str | Path) -> list[Path]:
    """The UI's tables (ge_core.viz.compile_tables) as DIR/<name>.csv; with a hardware target the model is
    simulated for timing (no outputs computed) to add the profile tables."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    result = simulate(compiled, run=False) if compiled.config.hardware is not None else None
    written = []
    for name, frame in compile_tables(compiled, result).items():
        path = folder / f"{name}.csv"
        frame.to_csv(path, index=False)
        written.append(path)
    return written


def memory_line(report: dict[str, Any]) -> str:
    """One line on the plan: `memory: 6.89 MiB arena (perturbed_greedy), 1.000x the lower bound, ...`."""
    memory = report.get("memory") or {}
    if "arena_bytes" not in memory:
        return f"memory: not planned ({memory.get('skipped', 'no plan')})"
    mib = 1 << 20
    bound = memory["theory_min_bytes"] or 1
    no_copy = len(memory.get("no_copy_concats", []))
    return (f"memory: {memory['arena_bytes'] / mib:.2f} MiB arena ({memory['strategy']}), "
            f"{memory['arena_bytes'] / bound:.3f}x the lower bound, no reuse {memory['no_reuse_bytes'] / mib:.2f} MiB"
            + (f", {no_copy} no-copy Concat(s)" if no_copy else "") + _order_note(memory))


def _order_note(memory: dict[str, Any]) -> str:
    graph_peak, aware_peak = memory.get("graph_order_min_bytes", 0), memory.get("memory_aware_min_bytes", 0)
    if memory.get("execution_order") == "memory_aware" and aware_peak < graph_peak:
        return f"; memory-aware order ({graph_peak / (1 << 20):.2f} MiB peak in the graph's order)"
    if aware_peak < graph_peak:
        return f"; --memory-order memory_aware would lower the peak to {aware_peak / (1 << 20):.2f} MiB"
    return ""
