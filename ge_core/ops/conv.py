"""(being written) op family: conv."""

from __future__ import annotations

from ge_core.ops.registry import OpDef

OPS: list[OpDef] = []
