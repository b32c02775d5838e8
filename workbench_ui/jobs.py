"""The heavy work the pages hand to worker processes (workbench_ui.workers): module-level functions, so a
worker can import them, each taking a `progress(done, total, step)` callback. Nothing here imports Streamlit."""

from __future__ import annotations

import os

from ge_core import CompileCache, CompileConfig, CompiledModel, Graph, random_feeds
from ge_core import compile as ge_compile
from ge_core.debugging import BisectResult, Failure, bisect_numerics, error_failure, reference_failure
from ge_core.errors import GEError
from workbench_ui.workers import Progress


def disk_cache() -> CompileCache | None:
    """The on-disk compile cache (GE_CACHE_DIR or the user's cache folder), so a second server start does
    not compile again; none when that folder cannot be written (the page compiles as before)."""
    cache = CompileCache.default()
    try:
        cache.folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return cache if os.access(cache.folder, os.W_OK) else None


def compile_job(graph: Graph, config: CompileConfig, *, progress: Progress) -> CompiledModel | Failure:
    """The compile, or the model's failure (a GEError: the model's fault, or a pass's refusal) in words."""
    try:
        return ge_compile(graph, config, progress=progress, cache=disk_cache())
    except GEError as err:
        return error_failure(err, "compile", graph)


def bisect_job(compiled: CompiledModel, tolerance: float, seed: int, *,
               progress: Progress) -> BisectResult | Failure:
    """The numeric bisection on seeded random inputs, or why the imported graph itself could not run."""
    def steps(done: int, total: int) -> None:
        progress(done, total, "running the graph after this pass")

    try:
        return bisect_numerics(compiled, random_feeds(compiled.input_graph, seed), tolerance, steps)
    except GEError as err:  # bad feeds, or the imported graph itself fails to run
        return reference_failure(err, compiled)
