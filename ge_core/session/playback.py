"""Play a sequence of requests of varying size through each dynamic-shape strategy (the bench and the page).

    axis = DynamicAxis.of_graph(graph, "seq", defaults)      # which dims vary together, the rest fixed
    sizes = request_sizes(32, 16, 512, seed=0, distinct=12)  # seeded sequence lengths (or batch sizes)
    plays = [play(graph, axis, sizes, s, config, cache_dir) for s in STRATEGIES]

    static  a static graph per shape: a request of a new size rebuilds it (no cache, as a static GE graph)
    gears   a model per gear compiled at build; a request is zero-padded up to the smallest gear that fits
    range   a compile per distinct size on first use, through the compile cache
    online  one compile for the range at build; UB fusion and tiling decided per new size at run time

A play's first response includes its build; "warm start" is the same play again in a new Session over the
same compile cache (a second server start), which is where the cache's hits show.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ge_core.config import CompileConfig
from ge_core.errors import UsageError, quote
from ge_core.frontend.input_shapes import InputShapes
from ge_core.ir.graph import Graph
from ge_core.offline.cache import CompileCache
from ge_core.session.session import Session
from ge_core.session.shapes import takes_shapes

STRATEGIES = ("static", "gears", "range", "online")
STRATEGY_TITLES = {"static": "static (recompile per shape)", "gears": "gears (padded)",
                   "range": "range (compile per shape, cached)", "online": "online fusion (compile once)"}
GRAPH_ID = 1


@dataclass(frozen=True)
class DynamicAxis:
    """The dims that vary together (every dim named `symbol`), the others at fixed sizes."""

    symbol: str
    template: dict[str, tuple[int | None, ...]]  # None where the symbol stands

    @classmethod
    def of_graph(cls, graph: Graph, symbol: str, fixed: Mapping[str, Sequence[int]] | None = None) -> DynamicAxis:
        """`symbol` is one of the graph's symbolic dim names; the other symbolic dims take their size from
        `fixed` (e.g. a sample's default input shapes), else 1."""
        known = symbols(graph)
        if symbol not in known:
            raise UsageError(f"{quote(symbol)} is not a symbolic dim of the graph.",
                             hint=f"Its symbolic dims: {', '.join(known) or '(none)'}.")
        template: dict[str, tuple[int | None, ...]] = {}
        for name in graph.inputs:
            params = graph.input_dim_params.get(name) or graph.desc(name).shape
            given = (fixed or {}).get(name)
            template[name] = tuple(None if p == symbol else p if isinstance(p, int) and p >= 0
                                   else (int(given[i]) if given is not None and i < len(given) else 1)
                                   for i, p in enumerate(params))
        return cls(symbol, template)

    def largest_size(self, graph: Graph, up_to: int) -> int | None:
        """The largest size up to `up_to` whose shapes the graph takes (shape inference only; a size above a
        position-embedding table is refused, for instance), by bisection; None when even 1 is refused."""
        if takes_shapes(graph, self.shapes(up_to)):
            return up_to
        good, bad = 0, up_to
        while bad - good > 1:
            middle = (good + bad) // 2
            good, bad = (middle, bad) if takes_shapes(graph, self.shapes(middle)) else (good, middle)
        return good or None

    def shapes(self, size: int) -> InputShapes:
        return {n: tuple(size if d is None else d for d in dims) for n, dims in self.template.items()}

    def spec(self, low: int | None = None, high: int | None = None) -> str:
        """ge.inputShape with the varying dims as -1 (no bounds) or LOW~HIGH."""
        dim = "-1" if low is None else f"{low}~{-1 if high is None else high}"
        return ";".join(f"{n}:{','.join(dim if d is None else str(d) for d in dims)}"
                        for n, dims in self.template.items())

    def gear_dims(self, gears: Sequence[int]) -> str:
        """ge.dynamicDims: one value per varying dim, per gear."""
        count = sum(d is None for dims in self.template.values() for d in dims)
        return ";".join(",".join([str(g)] * count) for g in gears)


def symbols(graph: Graph) -> list[str]:
    """The graph's symbolic dim names, in input order."""
    names = [p for n in graph.inputs for p in graph.input_dim_params.get(n, ()) if isinstance(p, str) and p]
    return list(dict.fromkeys(names))


def request_sizes(count: int, low: int, high: int, seed: int = 0, distinct: int | None = None) -> list[int]:
    """`count` seeded sizes in low..high; with `distinct`, drawn from that many distinct sizes (traffic repeats)."""
    rng = np.random.default_rng(seed)
    if distinct is None:
        return [int(s) for s in rng.integers(low, high + 1, count)]
    pool = rng.choice(np.arange(low, high + 1), size=min(distinct, high - low + 1, count), replace=False)
    # Every pooled size comes at least once, so "N distinct sizes" asked is N played (when count allows).
    sizes = np.concatenate([pool, rng.choice(pool, size=count - len(pool))])
    return [int(s) for s in rng.permutation(sizes)]


def default_gears(low: int, high: int) -> list[int]:
    """Doubling gears from `low` until one covers `high`."""
    gears = [low]
    while gears[-1] < high:
        gears.append(min(gears[-1] * 2, high))
    return gears


@dataclass(frozen=True)
class Request:
    index: int
    size: int
    model_size: int  # the gear a padded request ran at (= size otherwise)
    seconds: float  # end to end, compile or decision included
    compile_seconds: float
    decision_seconds: float
    simulated_us: float


@dataclass
class Playback:
    strategy: str
    requests: list[Request] = field(default_factory=list)
    build_seconds: float = 0.0
    compiles: int = 0
    compile_seconds: float = 0.0
    cache_hits: int = 0
    decisions: int = 0
    decision_seconds: float = 0.0

    @property
    def first_response_seconds(self) -> float:
        """From the start (build included) to the first answer."""
        return self.build_seconds + (self.requests[0].seconds if self.requests else 0.0)

    @property
    def warm_request_seconds(self) -> float:
        """Median time of the requests that compiled and decided nothing (nan when none did)."""
        warm = [r.seconds for r in self.requests if r.compile_seconds == 0 and r.decision_seconds == 0]
        return statistics.median(warm) if warm else float("nan")

    @property
    def mean_simulated_us(self) -> float:
        return statistics.fmean(r.simulated_us for r in self.requests) if self.requests else 0.0

    def add_stats(self, stats: Mapping[str, float | int]) -> None:
        self.compiles += int(stats["compiles"])
        self.cache_hits += int(stats["cache_hits"])
        self.compile_seconds += float(stats["compile_seconds"])
        self.decisions += int(stats["decisions"])
        self.decision_seconds += float(stats["decision_seconds"])


def play(graph: Graph, axis: DynamicAxis, sizes: Sequence[int], strategy: str, config: CompileConfig,
         cache_dir: Path | None = None, *, low: int | None = None, high: int | None = None, seed: int = 0) -> Playback:
    """The requests of `sizes` through `strategy` in a new Session (`config` needs a hardware target for the
    simulated latency). `low`..`high` is the size range the service declares (default: the sizes' own), which
    the range and online strategies compile for and the gears cover (default_gears); range, gears and online
    compile through the cache in `cache_dir` when given."""
    if strategy not in STRATEGIES:
        raise UsageError(f"unknown strategy {quote(strategy)}.", hint=f"Known: {', '.join(STRATEGIES)}.")
    if config.hardware is None:
        raise UsageError("playing requests needs a hardware target for the simulated latency.",
                         hint="Give the CompileConfig a hardware profile, e.g. hardware='ascend910'.")
    cache = CompileCache(cache_dir, snapshots=False) if cache_dir is not None and strategy != "static" else None
    session = Session(config=config, cache=cache)
    result = Playback(strategy)
    low, high = low or min(sizes), high or max(sizes)
    gears = default_gears(low, high)
    if strategy != "static":
        options = {"ge.inputShape": axis.spec(low, high) if strategy != "gears" else axis.spec()}
        if strategy == "gears":
            options["ge.dynamicDims"] = axis.gear_dims(gears)
        if strategy == "online":
            options["ge.fusionMode"] = "online"
        session.add_graph(GRAPH_ID, graph, options)
        result.build_seconds = session.build_graph(GRAPH_ID)
    current: int | None = None
    for index, size in enumerate(sizes):
        model_size = next(g for g in gears if g >= size) if strategy == "gears" else size
        if strategy == "static" and size != current:
            if current is not None:
                result.add_stats(session.stats(GRAPH_ID))
                session.remove_graph(GRAPH_ID)
            session.add_graph(GRAPH_ID, graph, {"ge.inputShape": _static_spec(axis.shapes(size))})
            current = size
        feeds = _pad(session.dummy_feeds(GRAPH_ID, axis.shapes(size), seed + index), axis, model_size)
        start = time.perf_counter()
        session.run_graph(GRAPH_ID, feeds)
        seconds = time.perf_counter() - start
        record = session.last_run(GRAPH_ID)
        assert record is not None and record.simulated_us is not None  # the config has a hardware target
        result.requests.append(Request(index, size, model_size, seconds, record.compile_seconds,
                                       record.decision_seconds, record.simulated_us))
    result.add_stats(session.stats(GRAPH_ID))
    return result


def _static_spec(shapes: InputShapes) -> str:
    return ";".join(f"{n}:{','.join(map(str, dims))}" for n, dims in shapes.items())


def _pad(feeds: dict[str, np.ndarray], axis: DynamicAxis, size: int) -> dict[str, np.ndarray]:
    """Zero-pad the varying dims up to `size` (a gear): padded positions are masked out or sliced off."""
    padded = {}
    for name, value in feeds.items():
        widths = [(0, size - value.shape[i]) if d is None else (0, 0) for i, d in enumerate(axis.template[name])]
        padded[name] = np.pad(value, widths) if any(w for _, w in widths) else value
    return padded
