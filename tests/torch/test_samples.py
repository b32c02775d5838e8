"""The PyTorch samples (ge_core/samples: the `torch` kind): listed with torch, served as ONNX bytes that
keep the module tree, computing what eager PyTorch computes."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # CI installs it (scripts/install_test_deps.sh)

import ge_core  # noqa: E402
from ge_core.samples import get_sample, list_samples, sample_bytes  # noqa: E402
from ge_core.samples.torch_models import FACTORIES  # noqa: E402
from ge_core.samples.torch_samples import TORCH_SAMPLES, available_torch_samples, torch_sample_graph  # noqa: E402
from tests.torch.compare import assert_close, eager  # noqa: E402

HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
SAMPLES = [pytest.param(name, marks=pytest.mark.skipif(
    "transformers" in needs and not HAS_TRANSFORMERS, reason="transformers is not installed"), id=name)
    for name, (_, _, needs) in TORCH_SAMPLES.items()]
# a module class each sample's graph must name: where its nodes came from
EXPECTED_MODULES = {"torch_resnet": ("layer2.0.downsample", "Sequential"), "torch_lstm_tagger": ("lstm", "LSTM"),
                    "torch_bert": ("bert.encoder.layer.1.attention.self", "BertSelfAttention")}


def test_the_torch_samples_are_listed_with_their_kind() -> None:
    listed = {s.name: s for s in list_samples() if s.kind == "torch"}
    assert set(listed) == set(available_torch_samples())
    assert {"torch_resnet", "torch_lstm_tagger"} <= set(listed)
    assert ("torch_bert" in listed) == HAS_TRANSFORMERS
    assert all(s.title.startswith("PyTorch: ") and s.description for s in listed.values())


@pytest.mark.parametrize("name", SAMPLES)
def test_a_torch_sample_computes_what_eager_does(name: str) -> None:
    module, inputs = FACTORIES[name]()
    graph = ge_core.load_onnx(sample_bytes(name))  # the bytes every sample user reads
    assert [n.name for n in graph.nodes] == [n.name for n in torch_sample_graph(name).nodes]
    path, kind = EXPECTED_MODULES[name]
    assert json.loads(graph.metadata["torch_modules"])[path] == kind
    compiled = ge_core.compile(graph, ge_core.CompileConfig(opt_level="O3"))
    outputs = compiled.run({n: t.numpy() for n, t in zip(graph.inputs, inputs, strict=True)})
    assert_close(list(outputs.values()), eager(module, inputs))


def test_the_bytes_are_cached_per_process() -> None:
    assert sample_bytes("torch_lstm_tagger") is get_sample("torch_lstm_tagger").read_bytes()


def test_listing_the_samples_does_not_import_torch() -> None:
    code = "import sys, ge_core.samples as s; s.list_samples(); print('torch' in sys.modules)"
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    assert out.stdout.strip() == "False"


def test_without_torch_no_torch_sample_is_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert not any(s.kind == "torch" for s in list_samples())
    assert any(s.kind == "sample" for s in list_samples())
