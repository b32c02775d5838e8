"""Run a module eagerly and a GE Graph on the CPU executor, and compare them output by output."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

import ge_core

# fp32 on both sides, different summation orders: 1e-4 relative, plus an absolute floor for values near 0
RTOL, ATOL = 1e-4, 1e-5


def eager(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> list[np.ndarray]:
    with torch.no_grad():
        result = module(*inputs)
    if hasattr(result, "logits"):  # a transformers ModelOutput: its logits
        result = result.logits
    flat = [result] if isinstance(result, torch.Tensor) else list(result)
    return [t.numpy() for t in flat]


def run_graph(graph: ge_core.Graph, inputs: Sequence[torch.Tensor]) -> list[np.ndarray]:
    feeds = {name: t.numpy() for name, t in zip(graph.inputs, inputs, strict=True)}
    outputs = ge_core.execute(graph, feeds)
    return [outputs[name] for name in graph.outputs]


def assert_close(actual: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> None:
    assert len(actual) >= len(expected) > 0
    for got, want in zip(actual, expected, strict=False):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
