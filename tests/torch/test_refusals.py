"""What from_torch refuses, and how it says so: every unsupported ATen op at once, data-dependent control
flow in plain words, training-only layers, and a missing PyTorch."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import ge_core  # noqa: E402
from ge_core.errors import GEError, ModelError, UnsupportedOpError, UsageError  # noqa: E402
from ge_core.frontend.torch.capture import ExportError  # noqa: E402


class Sorter(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sort(x, dim=-1).values


class Flipper(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, dims=[0]) + torch.sort(x, dim=0).values


class TwoBadOps(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 4), Sorter())
        self.decoder = Flipper()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encoder(x))


def test_every_unsupported_op_is_listed_at_once_with_its_module() -> None:
    with pytest.raises(UnsupportedOpError) as caught:
        ge_core.from_torch(TwoBadOps(), (torch.randn(3, 4),))
    text = str(caught.value)
    assert "3 node(s)" in text
    sort_line = next(p for p in caught.value.problems if "'aten.sort.default'" in p)
    assert "2 node(s)" in sort_line and "module 'encoder.1'" in sort_line and "module 'decoder'" in sort_line
    flip_line = next(p for p in caught.value.problems if "'aten.flip.default'" in p)
    assert "'/decoder/flip'" in flip_line
    assert "aten_table.py" in text  # says what to do


class Branchy(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x - 1


def test_data_dependent_control_flow_is_explained_with_the_line_and_what_to_do() -> None:
    with pytest.raises(ExportError) as caught:
        ge_core.from_torch(Branchy(), (torch.randn(3),))
    text = str(caught.value)
    assert "branches on the value of a tensor" in text
    assert "test_refusals.py" in text and "if x.sum() > 0:" in text
    assert "torch.cond" in text and "torch.where" in text


class MaskedSelect(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[x > 0]


def test_a_result_whose_size_depends_on_the_data_is_a_problem_naming_the_node() -> None:
    with pytest.raises(ModelError) as caught:
        ge_core.from_torch(MaskedSelect(), (torch.randn(5),))
    assert any("boolean mask" in p and "'index'" in p for p in caught.value.problems)


def test_a_bad_dim_range_is_refused_with_torch_export_words() -> None:
    module = nn.Linear(4, 2)
    with pytest.raises(ExportError, match="dynamic_shapes"):
        ge_core.from_torch(module, (torch.randn(3, 4),),
                           dynamic_shapes={"input": {1: torch.export.Dim("features", min=2, max=8)}})


def test_without_torch_the_api_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(UsageError, match=r"pip install torch==2\.13\.0") as refused:
        ge_core.from_torch(nn.Linear(2, 2), (torch.randn(1, 2),))
    assert "pip install '.[torch]'" in str(refused.value)  # the pyproject extra
    with pytest.raises(UsageError, match="PyTorch is not installed"):
        ge_core.torch_backend()
    assert issubclass(UsageError, GEError)


def test_importing_ge_core_does_not_import_torch() -> None:
    import subprocess
    import sys
    from pathlib import Path

    code = "import sys, ge_core; print('torch' in sys.modules)"
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo)
    assert result.stdout.strip() == "False"
