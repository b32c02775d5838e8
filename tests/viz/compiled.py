"""Compiled samples shared by the Fusion, Memory, Profile and Compare table tests (each compiled once per run)."""

from __future__ import annotations

import functools

import ge_core
from ge_core.compiler import CompiledModel
from ge_core.samples import get_sample, sample_bytes
from ge_core.sim import SimResult, simulate

SAMPLES = ("densenet121", "resnet50", "bert_encoder_torch", "residual_block")


def config(name: str, opt_level: str = "O3", hardware: str | None = None, **options: object) -> ge_core.CompileConfig:
    """The sample's own input shapes (bert_encoder_torch has symbolic dims) with the options given."""
    return ge_core.CompileConfig.build(opt_level=opt_level, hardware=hardware,
                                       input_shapes=get_sample(name).input_shapes or None, **options)


@functools.cache
def compiled(name: str, opt_level: str = "O3", hardware: str | None = None) -> CompiledModel:
    return ge_core.compile(sample_bytes(name), config(name, opt_level, hardware))


@functools.cache
def simulated(name: str, hardware: str = "ascend910", precision: str | None = None) -> SimResult:
    return simulate(compiled(name, "O3", hardware), precision=precision)
