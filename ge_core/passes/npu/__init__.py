"""Lowering for the NPU: passes that run only when a hardware target is given (`compile(hardware=...)`).

    FormatSelectionPass               each op's format (NC1HWC0 / FRACTAL_Z / origin); TransData at its boundary
    TransDataSymmetryEliminationPass  back-to-back inverse TransData pairs removed (GE's symmetry pass)
    TransDataBreadthFusionPass        identical TransData on one tensor merged (GE's breadth pass)
    TilingPass                        every kernel tiled to L0/L1/UB and split over the cores (block dim)

Values never change: CPU arrays stay in the origin layout, TransData passes them through, and the device
layout is what each TensorDesc records (`format`, `device_shape`, `device_nbytes`; see ge_core/ir/formats.py).
"""

from __future__ import annotations

from ge_core.passes.infra.base import Stage
from ge_core.passes.infra.manager import PipelineStep
from ge_core.passes.npu.breadth import TransDataBreadthFusionPass
from ge_core.passes.npu.format_selection import FormatSelectionPass
from ge_core.passes.npu.symmetry import TransDataSymmetryEliminationPass
from ge_core.passes.npu.tiling_pass import DEFAULT_HARDWARE, TilingPass

S = Stage


def lowering_steps(hardware: str = DEFAULT_HARDWARE) -> list[PipelineStep]:
    """The lowering passes for `hardware` (a profile name or .json path), in pipeline order."""
    return [
        PipelineStep(S.PRE_RUN_AFTER_OPTIMIZE2, FormatSelectionPass()),               # formats; TransData around ops
        PipelineStep(S.PRE_RUN_AFTER_OPTIMIZE2, TransDataSymmetryEliminationPass()),  # A->B->A pairs removed
        PipelineStep(S.PRE_RUN_AFTER_OPTIMIZE2, TransDataBreadthFusionPass()),        # duplicate TransData merged
        PipelineStep(S.BUILD, TilingPass(hardware)),                                  # L0/L1/UB tiles, block dim
    ]


LOWERING_PASSES = tuple(step.name for step in lowering_steps())

__all__ = ["DEFAULT_HARDWARE", "LOWERING_PASSES", "FormatSelectionPass", "TilingPass", "TransDataBreadthFusionPass",
           "TransDataSymmetryEliminationPass", "lowering_steps"]
