"""`python -m ge_core inspect|compile|profile model.py:factory` and `sample:torch_*` on the command line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # CI installs it (scripts/install_test_deps.sh)

from ge_core.cli.main import main  # noqa: E402

MODEL_FILE = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(4, 8)
        self.head = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))

def build():
    torch.manual_seed(0)
    return Net().eval(), (torch.randn(2, 4),)

def build_dynamic():
    module, inputs = build()
    return module, inputs, {"x": {0: torch.export.Dim("batch", min=1, max=16)}}

def returns_a_number():
    return 3

def returns_no_module():
    return "net", (torch.randn(2, 4),)

def raises():
    raise RuntimeError("weights file missing")

NOT_A_FUNCTION = 1
'''


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "net.py"
    path.write_text(MODEL_FILE, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_inspect_converts_the_factorys_module(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", f"{model_file}:build")
    assert code == 0
    assert "Net" in out and "torch.export" in out
    assert "input    x: float32[2, 4]" in out and "Gemm x2, Relu x1" in out


def test_compile_and_profile_take_a_factory(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compile", f"{model_file}:build", "--no-cache")
    assert code == 0 and "compiled 3 ->" in out and "kernels" in out
    code, out, _ = run(capsys, "profile", f"{model_file}:build", "--no-cache")
    assert code == 0 and "us simulated" in out and "/encoder/" in out


def test_a_third_item_gives_dynamic_shapes(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", f"{model_file}:build_dynamic")
    assert code == 0
    assert "input    x: float32[batch, 4]" in out


@pytest.mark.parametrize(("function", "exit_code", "words"), [
    ("missing", 2, "'missing' is not defined in"),
    ("NOT_A_FUNCTION", 2, "'NOT_A_FUNCTION' is not a function"),
    ("returns_a_number", 3, "returned int; it must return (module, example_inputs)"),
    ("returns_no_module", 3, "returned str as the module; expected a torch.nn.Module"),
    ("raises", 3, "raised RuntimeError: weights file missing"),
])
def test_a_bad_factory_is_refused_in_words(model_file: Path, capsys: pytest.CaptureFixture[str], function: str,
                                           exit_code: int, words: str) -> None:
    code, out, err = run(capsys, "compile", f"{model_file}:{function}", "--no-cache")
    assert code == exit_code and words in err and "Traceback" not in err + out
    if function == "missing":
        assert "Functions defined there: Net, build, build_dynamic, raises, returns_a_number, returns_no_module." in err


def test_a_file_that_fails_to_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.py").write_text("import torch\nraise ImportError('no module named tokenizer')\n")
    code, _, err = run(capsys, "inspect", f"{tmp_path / 'broken.py'}:build")
    assert code == 3 and "running" in err and "ImportError: no module named tokenizer" in err


def test_a_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "inspect", f"{tmp_path / 'nowhere.py'}:build")
    assert code == 2 and "Python file" in err and "not found" in err


def test_input_shape_is_refused_for_a_torch_model(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "compile", f"{model_file}:build", "--input-shape", "x:4,4")
    assert code == 2 and "--input-shape does not apply" in err


def test_without_torch_the_cli_says_how_to_install_it(model_file: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    code, _, err = run(capsys, "inspect", f"{model_file}:build")
    assert code == 2 and "PyTorch is not installed" in err and "pip install '.[torch]'" in err


def test_help_says_the_file_is_run(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compile", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "model.py:FUNCTION" in out and "This runs the file's code: give trusted local files only" in out


def test_a_torch_sample_compiles_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compile", "sample:torch_lstm_tagger", "--no-cache")
    assert code == 0 and "kernels" in out
    code, out, _ = run(capsys, "inspect", "sample:torch_lstm_tagger")
    assert code == 0 and "LSTM x2" in out
