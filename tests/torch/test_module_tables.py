"""ge_core.viz's module-tree tables for a PyTorch model: where each GE node came from."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")  # CI installs it (scripts/install_test_deps.sh)

from torch import nn  # noqa: E402

import ge_core  # noqa: E402
from ge_core.viz import module_table, node_origins, torch_modules  # noqa: E402


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.proj(x)) + x


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.head(self.blocks(x)))


@pytest.fixture(scope="module")
def graph() -> ge_core.Graph:
    torch.manual_seed(0)
    return ge_core.from_torch(Net().eval(), (torch.randn(2, 4),))


def test_every_node_names_its_module_and_class(graph: ge_core.Graph) -> None:
    origins = node_origins(graph)
    assert origins is not None and len(origins) == len(graph.nodes)
    rows = {r["node"]: r for r in origins.to_dict("records")}
    relu = next(r for name, r in rows.items() if name.startswith("/blocks.1/act/"))
    assert (relu["op"], relu["module"], relu["class"]) == ("Relu", "blocks.1.act", "ReLU")
    add = next(r for name, r in rows.items() if name.startswith("/blocks.0/add"))
    assert (add["module"], add["class"]) == ("blocks.0", "Block")  # the residual add is Block.forward's own
    tanh = next(r for r in rows.values() if r["op"] == "Tanh")
    assert (tanh["module"], tanh["class"]) == ("(root)", "Net")


def test_the_module_table_counts_nodes_per_module(graph: ge_core.Graph) -> None:
    table = module_table(graph)
    assert table is not None
    rows = {r["module"]: r for r in table.to_dict("records")}
    assert rows["blocks"]["class"] == "Sequential" and rows["blocks"]["GE nodes"] == 0  # a container
    assert rows["blocks.1.act"]["ops"] == "Relu x1"
    assert sum(table["GE nodes"]) == len(graph.nodes)


def test_a_graph_not_from_torch_has_no_tables(graph: ge_core.Graph) -> None:
    plain = graph.copy()
    del plain.metadata["torch_modules"]
    assert torch_modules(plain) is None and node_origins(plain) is None and module_table(plain) is None
    plain.metadata["torch_modules"] = "not json"  # an uploaded ONNX file may carry anything there
    assert node_origins(plain) is None
