"""IR operations at 1k/5k/10k nodes: graph copy (a snapshot after every pass), erasing every node, verify().

    python bench/bench_ir.py

Each pass's snapshot is a graph.copy(), so it must stay cheap at 10k nodes, and edits must be O(1) so
passes scale linearly. Medians of 5 runs with the cyclic GC paused, as compile() runs; the last column
says how 10k compares with 5k (linear = 2x).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from ge_core.compiler import gc_paused
from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY

SIZES = (1000, 5000, 10000)


def chain(n: int) -> Graph:
    g = Graph("chain")
    g.add_input("x0", TensorDesc((1, 16), "float32"))
    for i in range(n):
        g.add_node("Relu", [f"x{i}"], [f"x{i + 1}"], name=f"n{i}", descs=[TensorDesc((1, 16), "float32")])
    g.set_outputs([f"x{n}"])
    return g


def erase_all(g: Graph) -> None:
    g.replace_all_uses(g.outputs[0], "x0")
    for node in reversed(g.nodes):
        g.erase(node)


def median(make: Callable[[], Graph], op: Callable[[Graph], object]) -> float:
    times = []
    for _ in range(5):
        g = make()
        with gc_paused():  # as inside compile(): see ge_core.compiler.gc_paused for why
            start = time.perf_counter()
            op(g)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ops: dict[str, Callable[[Graph], object]] = {"copy": Graph.copy, "erase every node": erase_all,
                                                 "verify": lambda g: g.verify(REGISTRY)}  # shapes too
    print("| operation | " + " | ".join(f"{n} nodes ms" for n in SIZES) + " | 10k / 5k |")
    print("|---|" + "---:|" * (len(SIZES) + 1))
    for label, op in ops.items():
        ms = [median(lambda n=n: chain(n), op) * 1e3 for n in SIZES]
        print(f"| {label} | " + " | ".join(f"{t:.1f}" for t in ms) + f" | {ms[-1] / ms[-2]:.2f}x |")


if __name__ == "__main__":
    main()
