"""from_torch: torch.export -> GE Graph, executed by ge_core and compared with eager PyTorch."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")  # CI installs it (scripts/install_test_deps.sh); skipped only without it

import numpy as np  # noqa: E402

import ge_core  # noqa: E402
from ge_core.viz.scopes import scope_path  # noqa: E402
from tests.torch.compare import assert_close, eager, run_graph  # noqa: E402
from tests.torch.models import SAMPLES, converted  # noqa: E402


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_sample_runs_like_eager(name: str) -> None:
    module, inputs, graph = converted(name)
    graph.verify()
    assert_close(run_graph(graph, inputs), eager(module, inputs))


class Recurrent(torch.nn.Module):
    def __init__(self, cell: type[torch.nn.Module], **options: object) -> None:
        super().__init__()
        self.rnn = cell(8, 12, **options)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        output, state = self.rnn(x)
        return (output, *state) if isinstance(state, tuple) else (output, state)


@pytest.mark.parametrize(("cell", "options"), [
    (torch.nn.LSTM, {"num_layers": 2, "bidirectional": True}),
    (torch.nn.GRU, {"batch_first": True, "bias": False, "num_layers": 2}),
], ids=["lstm-2-layers-bidirectional", "gru-batch-first-no-bias"])
def test_recurrent_layers_stay_one_op_per_layer_with_their_final_states(cell: type, options: dict) -> None:
    torch.manual_seed(6)
    module = Recurrent(cell, **options).eval()
    x = torch.randn(2, 5, 8)
    graph = ge_core.from_torch(module, (x,))
    assert sum(n.op_type == cell.__name__ for n in graph.nodes) == 2  # one per layer, not unrolled
    assert_close(run_graph(graph, [x]), eager(module, [x]))  # output, h_n (and c_n)


def test_compiled_at_o3_it_still_matches_eager() -> None:
    module, inputs, graph = converted("cnn")
    compiled = ge_core.compile(graph, ge_core.CompileConfig(opt_level="O3"))
    outputs = compiled.run({name: t.numpy() for name, t in zip(graph.inputs, inputs, strict=True)})
    assert_close([outputs[n] for n in compiled.graph.outputs], eager(module, inputs))
    assert compiled.plan.kernels < len(graph.nodes)  # BatchNorm folded or fused into the convolutions


def test_weights_are_constants_named_as_in_the_state_dict() -> None:
    module, _, graph = converted("mlp")
    for name, tensor in module.state_dict().items():
        np.testing.assert_array_equal(graph.constants[name], tensor.numpy())
    assert graph.inputs == ["x"]


def test_node_names_carry_the_module_path_as_name_scopes() -> None:
    _, _, graph = converted("transformer")
    scopes = {scope_path(n.name) for n in graph.nodes}
    assert ("attention",) in scopes and ("mlp.0",) in scopes and ("norm1",) in scopes
    by_op = {n.op_type for n in graph.nodes}
    assert {"Attention", "LayerNormalization", "Gelu", "Gather"} <= by_op  # kept whole, not decomposed
    modules = json.loads(graph.metadata["torch_modules"])
    assert modules["attention"] == "MultiheadAttention" and modules["mlp.1"] == "GELU"
    gelu = next(n for n in graph.nodes if n.op_type == "Gelu")
    assert scope_path(gelu.name) == ("mlp.1",) and gelu.attrs["approximate"] == "tanh"


def test_scopes_split_a_deep_path_but_keep_list_indices() -> None:
    from ge_core.frontend.torch.names import scopes

    assert scopes("encoder.layer.0.attention.self.query") == ["encoder", "layer.0", "attention", "self", "query"]
    assert scopes("") == []


def test_every_table_row_is_an_aten_overload_and_the_kept_ops_have_rows() -> None:
    from ge_core.frontend.torch.capture import KEPT_OPS

    ops = ge_core.frontend.torch.supported_aten_ops()
    assert all(op.startswith("aten.") and op.count(".") == 2 for op in ops)
    for op in ops:
        _, packet, overload = op.split(".")
        getattr(getattr(torch.ops.aten, packet), overload)  # raises if PyTorch has no such overload
    assert {f"aten.{op}" for op in KEPT_OPS} <= set(ops)


class Promotes(torch.nn.Module):
    def forward(self, ids: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return ids * 0.5 + ids / 4, (ids > 1) & (x < 0.25)


def test_pytorch_type_promotion_is_made_explicit() -> None:
    module = Promotes().eval()
    ids, x = torch.arange(6).reshape(2, 3), torch.linspace(0.0, 0.5, 6).reshape(2, 3)
    graph = ge_core.from_torch(module, (ids, x))
    assert any(n.op_type == "Cast" for n in graph.nodes)  # int64 ids computed in float32, as PyTorch does
    assert_close(run_graph(graph, [ids, x]), eager(module, [ids, x]))


def test_a_lone_example_tensor_is_the_one_input() -> None:
    module = torch.nn.Linear(3, 2).eval()
    x = torch.randn(4, 3)
    graph = ge_core.from_torch(module, x)
    assert graph.desc(graph.inputs[0]).shape == (4, 3)
    assert_close(run_graph(graph, [x]), eager(module, [x]))
