"""The memory-planning switches shared by `run` and `compile` (GE's ge.exec.disableReuseMemory and friends)."""

from __future__ import annotations

import argparse
from typing import Any

from ge_core.memory.order import MEMORY_ORDERS
from ge_core.memory.planners import STRATEGIES


def add_memory_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("memory planning")
    group.add_argument("--disable-reuse-memory", "--disable_reuse_memory", dest="disable_reuse_memory",
                       action="store_true", help="give every activation its own bytes (ge.exec.disableReuseMemory)")
    group.add_argument("--memory-strategy", default="auto",
                       help=f"auto (smallest arena of all) or one of: {', '.join(STRATEGIES)}")
    group.add_argument("--memory-alignment", type=int, default=512, help="bytes every offset is aligned to (512)")
    group.add_argument("--copy-concat", action="store_true",
                       help="make every Concat copy its inputs (no continuous-memory, no-task Concat)")
    group.add_argument("--memory-order", default="graph", choices=MEMORY_ORDERS,
                       help="graph (the order the passes left, default) or memory_aware (a topological order "
                            "with a lower peak, when one is found)")


def memory_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {"memory_reuse": not args.disable_reuse_memory, "memory_strategy": args.memory_strategy,
            "memory_alignment": args.memory_alignment, "memory_no_copy_concat": not args.copy_concat,
            "memory_order": args.memory_order}


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
