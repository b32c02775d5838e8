"""Epilogues: what a Conv or MatMul kernel may apply to its accumulator on the way out — the bias, a residual
and an activation — as an op fact (OpDef.epilogue). The compiled pass that applies them lives in
ge_core/kernels/epilogue.py (a fast path); here is only the form each activation takes.

The activation is an op fact: an OpDef's `epilogue` turns its node (and constant inputs, Clip's bounds)
into an `Epilogue`, or None when it has no such form (transcendental activations: numpy's vectorised exp
and erf beat a scalar loop).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from ge_core.ir.node import Node


class Act(IntEnum):
    NONE = 0
    RELU = 1  # max(v, 0)
    LEAKY_RELU = 2  # v if v >= 0 else p0 * v
    CLIP = 3  # min(max(v, p0), p1)
    HARD_SIGMOID = 4  # clamp(p0 * v + p1, 0, 1)
    HARD_SWISH = 5  # v * clamp(v / 6 + 1/2, 0, 1)


# The form an activation node takes as an epilogue, from the node and its inputs' values where they are
# constants (None otherwise): OpDef.epilogue. None when it has none (non-constant Clip bounds).
EpilogueFn = Callable[[Node, list[np.ndarray | None]], "Epilogue | None"]


@dataclass(frozen=True)
class Epilogue:
    act: Act = Act.NONE
    p0: float = 0.0
    p1: float = 0.0
    adds: bool = False  # an Add: adds its other operand (a per-channel bias, or a residual), no activation


NO_ACTIVATION = Epilogue()  # a bias and residual alone
ADDS = Epilogue(adds=True)  # the epilogue fact of Add and of a two-input Sum
