"""What the torch.compile backend saw: graph breaks, compiles (and what triggered each), calls and times.

One TorchStats per process, read with `ge_core.torch_stats()`: the seed's "the first call is slow, later
calls are fast" and "a new shape recompiles" as numbers. Graph breaks and guard failures are Dynamo's own
words (torch._dynamo.utils.counters["graph_break"] and guard_failures), read as they grow. torch_stats lives
in the package's __init__: it reads Dynamo's news first, through dynamo_events.py, which imports torch and
builds on this module.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CompileEvent:
    graph: int  # which FX graph Dynamo handed over (0, 1, ... in order)
    trigger: str  # why: "first call", a guard failure ("tensor 'x' size mismatch at index 0 ..."), a new shape
    input_shapes: tuple[tuple[int | str, ...], ...]
    seconds: float  # capture + convert + ge_core.compile (or the cache load)
    kernels: int
    dynamic: bool = False  # compiled once for symbolic dims
    cache_hit: bool = False


@dataclass(frozen=True)
class CallRecord:
    graph: int
    seconds: float  # wall time of the call, a compile included when it triggered one
    compiled: bool  # this call compiled first
    simulated_us: float | None = None  # the NPU simulator's latency, when the backend simulates


@dataclass
class TorchStats:
    graph_breaks: list[str] = field(default_factory=list)  # Dynamo's reasons, one per break
    eager_frames: list[str] = field(default_factory=list)  # frames Dynamo ran eagerly, never reaching ge_core
    graphs: int = 0  # FX graphs Dynamo handed to the backend
    compiles: list[CompileEvent] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)  # graphs the backend could not take, run eagerly: why

    @property
    def recompiles(self) -> list[CompileEvent]:
        """Every compile after the first: a new graph for new guards, or a new shape."""
        return self.compiles[1:]

    def summary(self) -> str:
        lines = [f"{self.graphs} graph(s) from Dynamo, {len(self.graph_breaks)} graph break(s), "
                 f"{len(self.compiles)} compile(s), {len(self.calls)} call(s)"]
        lines += [f"  graph break: {reason}" for reason in self.graph_breaks]
        lines += [f"  ran eagerly (Dynamo gave up on the frame): {reason}" for reason in self.eager_frames]
        lines += [f"  fell back to eager (ge_core could not take the graph): {reason}" for reason in self.fallbacks]
        for c in self.compiles:
            shapes = ", ".join("[" + ",".join(map(str, s)) + "]" for s in c.input_shapes)
            kind = "dynamic " if c.dynamic else ""
            lines.append(f"  {kind}compile of graph {c.graph} ({shapes}) in {c.seconds * 1e3:.1f} ms, "
                         f"{c.kernels} kernel(s){' (cache hit)' if c.cache_hit else ''}: {c.trigger}")
        warm = [c.seconds for c in self.calls if not c.compiled]
        if warm:
            lines.append(f"  warm calls: {len(warm)}, median {sorted(warm)[len(warm) // 2] * 1e3:.2f} ms")
        return "\n".join(lines)


LOCK = threading.Lock()  # the backend's compiled graphs append under it; torch_stats swaps under it
_STATS = TorchStats()


def current_stats() -> TorchStats:
    """The stats the backend appends to now."""
    return _STATS


def take_stats(reset: bool) -> TorchStats:
    """The stats so far; with `reset`, later ones go to a fresh TorchStats."""
    global _STATS
    with LOCK:
        current = _STATS
        if reset:
            _STATS = TorchStats()
        return current
