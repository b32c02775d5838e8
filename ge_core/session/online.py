"""Online fusion (graph-autofusion's strategy): compile once for a shape range, decide per shape at run time.

The compile done once runs every pass of the config's pipeline except the shape-dependent ones
(ONLINE_PASSES): which ops may share a UB kernel depends on whether the group's working set fits the
Unified Buffer, and every kernel's tiling on its sizes, so neither can be decided while a dim is unknown.
When a run brings a shape not seen before, `decide` sets it on the range graph, infers the descs and runs
just those passes (and plans the memory arena); the result is kept per shape by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ge_core.compiler import CompiledModel, compile_steps
from ge_core.compiler import compile as ge_compile
from ge_core.config import CompileConfig
from ge_core.passes.npu import LOWERING_PASSES
from ge_core.session.shapes import reshape_inputs, shapes_text

ONLINE_PASSES = ("UbFusionPass", *LOWERING_PASSES)  # the choices that depend on the sizes


def range_config(config: CompileConfig) -> CompileConfig:
    """The config of the one compile for the range: its pipeline without the shape-dependent passes."""
    names = tuple(step.name for step in compile_steps(config) if step.name not in ONLINE_PASSES)
    return replace(config, pipeline=names)


def decide(range_model: CompiledModel, shapes: Mapping[str, Sequence[int]], config: CompileConfig) -> CompiledModel:
    """The model for one shape: the range compile's graph at `shapes`, with UB fusion, the NPU lowering and
    tiling decided for those sizes (the passes `config` would run), and its memory plan."""
    graph = reshape_inputs(range_model.graph, shapes)
    static = replace(config, input_shapes=shapes_text(shapes))
    steps = [step for step in compile_steps(static) if step.name in ONLINE_PASSES]
    return ge_compile(graph, static, pipeline=steps)
