"""torch.compile backend (TorchAir's role): `ge_core.torch_backend()` and `ge_core.torch_stats()`.

PyTorch is optional: importing this package does not import it; `torch_backend()` does (backend.py).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ge_core.dynamo.stats import CallRecord, CompileEvent, TorchStats, current_stats, take_stats
from ge_core.frontend.torch import require_torch

if TYPE_CHECKING:
    from ge_core.config import CompileConfig
    from ge_core.dynamo.backend import TorchBackend
    from ge_core.offline.cache import CompileCache


def torch_backend(config: CompileConfig | None = None, *, simulate: bool = False,
                  cache: CompileCache | None = None) -> TorchBackend:
    """A backend for `torch.compile(model, backend=ge_core.torch_backend(config))`: each graph Dynamo
    captures is compiled by ge_core with `config` and runs on the CPU executor, or on the NPU simulator
    with `simulate=True` (each call's simulated latency lands in torch_stats()); `cache` is a
    ge_core.CompileCache that keeps compiles across processes."""
    require_torch()
    from ge_core.dynamo.backend import torch_backend as make  # imports torch, an optional package

    return make(config, simulate=simulate, cache=cache)


def torch_stats(reset: bool = False) -> TorchStats:
    """What the torch.compile backend has done so far in this process (Dynamo's news read first: a frame
    it ran eagerly never calls the backend); `reset=True` starts over."""
    if "torch._dynamo" in sys.modules:  # else nothing was compiled, and torch stays unimported
        from ge_core.dynamo.dynamo_events import EVENTS, merge  # imports torch, an optional package

        merge(EVENTS.read(), current_stats())
    return take_stats(reset)


__all__ = ["CallRecord", "CompileEvent", "TorchStats", "torch_backend", "torch_stats"]
