"""torch.export.Dim -> GE symbolic dims: named, with their ranges, and one graph for every size."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import ge_core  # noqa: E402
from tests.torch.compare import assert_close, eager, run_graph  # noqa: E402
from tests.torch.models import TransformerBlock, mlp  # noqa: E402


def test_a_batch_dim_stays_symbolic_with_its_name_and_range() -> None:
    module, inputs = mlp()
    batch = torch.export.Dim("batch", min=1, max=64)
    graph = ge_core.from_torch(module, inputs, dynamic_shapes={"x": {0: batch}})
    desc = graph.desc("x")
    assert desc.shape == (-1, 8)
    assert graph.input_dims_text("x") == ["batch", "8"]
    assert desc.shape_range == ((1, 64), (8, 8))
    for size in (1, 5, 64):
        x = torch.randn(size, 8)
        assert_close(run_graph(graph, [x]), eager(module, [x]))


def test_batch_and_sequence_dims_of_a_transformer_block() -> None:
    torch.manual_seed(5)
    module = TransformerBlock().eval()
    ids = torch.randint(0, 50, (2, 7))
    dims = {"ids": {0: torch.export.Dim("batch", min=1, max=8), 1: torch.export.Dim("seq", min=2, max=32)}}
    graph = ge_core.from_torch(module, (ids,), dynamic_shapes=dims)
    assert graph.input_dims_text("ids") == ["batch", "seq"]
    assert graph.desc("ids").shape_range == ((1, 8), (2, 32))
    for batch, seq in ((1, 3), (3, 11)):
        other = torch.randint(0, 50, (batch, seq))
        assert_close(run_graph(graph, [other]), eager(module, [other]))
