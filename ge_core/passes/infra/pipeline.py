"""The default compile pipeline, per opt level: reads top to bottom, one commented step per line."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields, is_dataclass, replace
from enum import StrEnum

from ge_core.errors import UsageError
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.passes.cleanup.cse import CsePass
from ge_core.passes.cleanup.dead_code import PrunePass
from ge_core.passes.cleanup.fold_batchnorm import BatchNormFoldPass
from ge_core.passes.cleanup.fold_scale import ScaleFoldPass
from ge_core.passes.cleanup.infer_shapes import InferShapePass
from ge_core.passes.cleanup.noop_elimination import NoOpEliminationPass
from ge_core.passes.cleanup.reshape_chain import ReshapeChainPass
from ge_core.passes.cleanup.transpose_chain import TransposeChainPass
from ge_core.passes.fusion.graph import (
    AttentionFusionPass,
    ConvActivationFusionPass,
    GeluFusionPass,
    HardActivationFusionPass,
    LayerNormFusionPass,
    MatMulAddFusionPass,
)
from ge_core.passes.fusion.ub.ub_fusion import UbFusionPass
from ge_core.passes.infra.base import GraphPass, Stage
from ge_core.passes.infra.manager import PipelineStep
from ge_core.passes.npu import DEFAULT_HARDWARE, lowering_steps

S = Stage


class OptLevel(StrEnum):
    O0 = "O0"  # nothing: the graph as imported
    O1 = "O1"  # cleanups: constant folding, no-op removal, CSE, dead code
    O3 = "O3"  # everything: also chain collapsing, BatchNorm/scale folding, graph and UB fusion

    @classmethod
    def parse(cls, value: str | OptLevel) -> OptLevel:
        text = str(value).upper()
        text = {"0": "O0", "1": "O1", "3": "O3", "O2": "O3"}.get(text.removeprefix("-"), text)
        try:
            return cls(text)
        except ValueError:
            raise UsageError(f"unknown opt level '{value}'.", hint="Use O0, O1 or O3.") from None


def default_pipeline(opt_level: OptLevel | str = OptLevel.O3, hardware: str | None = None) -> list[PipelineStep]:
    """The steps of `opt_level`; with a `hardware` target (profile name or .json path) the NPU lowering
    passes follow them (ge_core/passes/npu), at any level. Without one the pipeline is target-independent."""
    steps = _optimization_steps(OptLevel.parse(opt_level), hardware)
    if hardware is not None:
        steps += lowering_steps(hardware)
    return steps


def _optimization_steps(level: OptLevel, hardware: str | None) -> list[PipelineStep]:
    """The optimisation passes of `level`; UB fusion sizes its groups to `hardware`'s UB (the default
    target's without one), as GE's UB fusion does for the SoC it compiles for."""
    if level == OptLevel.O0:
        return []  # O0: the graph exactly as imported

    steps = [
        PipelineStep(S.AFTER_INFERSHAPE, InferShapePass()),                # shapes/dtypes from the op registry
        PipelineStep(S.OPTIMIZE_ORIGINAL_GRAPH, ConstantFoldingPass()),    # precompute what only needs constants
        PipelineStep(S.OPTIMIZE_ORIGINAL_GRAPH, NoOpEliminationPass()),    # Identity, Dropout, same-shape Reshape...
        PipelineStep(S.OPTIMIZE_ORIGINAL_GRAPH, CsePass()),                # compute duplicates once
        PipelineStep(S.OPTIMIZE_ORIGINAL_GRAPH, PrunePass()),              # drop what no output needs
    ]
    if level == OptLevel.O3:
        steps += [
            PipelineStep(S.OPTIMIZE_STAGE1, TransposeChainPass()),         # Transpose∘Transpose -> one (or none)
            PipelineStep(S.OPTIMIZE_STAGE1, ReshapeChainPass()),           # Reshape chains -> one Reshape
            PipelineStep(S.OPTIMIZE_STAGE1, BatchNormFoldPass()),          # BN into the Conv/Gemm before it
            PipelineStep(S.OPTIMIZE_STAGE1, ScaleFoldPass()),              # Mul/Add by constants into weights
            PipelineStep(S.OPTIMIZE_STAGE1, ConstantFoldingPass()),        # what the folds left constant
            PipelineStep(S.OPTIMIZE_STAGE1, NoOpEliminationPass()),        # no-ops the rewrites exposed
            PipelineStep(S.OPTIMIZE_STAGE1, CsePass()),                    # duplicates the rewrites exposed
            PipelineStep(S.OPTIMIZE_STAGE1, PrunePass()),                  # weights and nodes now unused
            # -- graph fusion (pattern rewrites) --
            PipelineStep(S.OPTIMIZE_STAGE1, LayerNormFusionPass()),        # LayerNorm primitives -> LayerNormalization
            PipelineStep(S.OPTIMIZE_STAGE1, GeluFusionPass()),             # x*0.5*(1+Erf(x/sqrt2)), tanh form -> Gelu
            PipelineStep(S.OPTIMIZE_STAGE1, HardActivationFusionPass()),   # Clip forms -> HardSigmoid, HardSwish
            PipelineStep(S.OPTIMIZE_STAGE1, MatMulAddFusionPass()),        # MatMul+Add(+act) -> Gemm / FullyConnection
            PipelineStep(S.OPTIMIZE_STAGE1, ConvActivationFusionPass()),   # Conv(+bias)(+residual)+act -> FusedConv
            PipelineStep(S.OPTIMIZE_STAGE1, AttentionFusionPass()),        # Softmax(QK^T*s+mask)V -> FusedAttention
            # -- UB fusion --
            PipelineStep(S.PRE_RUN_AFTER_OPTIMIZE2,                        # vector chains (+ a cube op) in one kernel
                         UbFusionPass.for_profile(hardware or DEFAULT_HARDWARE)),
        ]
    return steps


def all_passes() -> list[GraphPass]:
    """Every pass the pipelines can run, once each (for switch files and the UI), the NPU lowering's last."""
    seen: dict[str, GraphPass] = {}
    for step in default_pipeline(OptLevel.O3, DEFAULT_HARDWARE):
        seen.setdefault(step.name, step.pass_)
    return list(seen.values())


def named_steps(names: Iterable[str], hardware: str | None = None) -> list[PipelineStep]:
    """A custom pipeline: the named passes in the given order, each at the stage the default pipeline
    runs it in (TilingPass tiles for `hardware`, else the default target)."""
    known: dict[str, PipelineStep] = {}
    for step in default_pipeline(OptLevel.O3, hardware or DEFAULT_HARDWARE):
        known.setdefault(step.name, step)
    missing = [n for n in names if n not in known]
    if missing:
        raise UsageError(f"pipeline names unknown passes {missing}.", hint=f"Known passes: {', '.join(known)}.")
    return [known[n] for n in names]


def without(steps: Iterable[PipelineStep], disabled: Iterable[str]) -> list[PipelineStep]:
    """Drop switched-off passes; a fusion pass stays as a dry run, so its decision log still lists every
    candidate it would have fused, with the reason "disabled by switch file"."""
    off = set(disabled)
    kept = []
    for step in steps:
        if step.name not in off:
            kept.append(step)
        elif is_dataclass(step.pass_) and "dry_run" in {f.name for f in fields(step.pass_)}:
            kept.append(PipelineStep(step.stage, replace(step.pass_, dry_run=True)))
    return kept
