"""torch.compile backend (TorchAir's role): `ge_core.torch_backend()` and `ge_core.torch_stats()`.

PyTorch is optional: importing this package does not import it; `torch_backend()` does (backend.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ge_core.dynamo.stats import CallRecord, CompileEvent, TorchStats, torch_stats
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
    from ge_core.dynamo.backend import torch_backend as make

    return make(config, simulate=simulate, cache=cache)


__all__ = ["CallRecord", "CompileEvent", "TorchStats", "torch_backend", "torch_stats"]
