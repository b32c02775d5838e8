"""Whole real models through `python -m ge_core run` match ONNX Runtime within 1e-3 of the output's magnitude.

Covers the built samples, the nine light models onnx ships (with seeded random weights, comparing the
logits before Softmax as well as the probabilities: with their constant weights every class comes out
0.001 whatever a backend computes) and the models exported from PaddlePaddle and PyTorch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

import ge_core
from ge_core.cli.main import main
from ge_core.runtime import relative_error
from ge_core.samples.registry import Sample, list_samples, sample_bytes

RELATIVE_TOLERANCE = 1e-3

RUNNABLE = [s for s in list_samples() if s.kind in ("sample", "light", "exported")]


def with_pre_softmax_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """Also output the logits feeding each output Softmax, so a comparison sees more than 1/1000."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    outputs = {o.name for o in model.graph.output}
    for node in model.graph.node:
        if node.op_type == "Softmax" and node.output[0] in outputs and node.input[0] not in outputs:
            model.graph.output.append(helper.make_empty_tensor_value_info(node.input[0]))
            model.graph.output[-1].type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    return model


def ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("sample", RUNNABLE, ids=lambda s: s.name)
def test_cli_run_matches_onnxruntime(sample: Sample, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`run --opt-level O0` (as imported) and `--opt-level O3` (every pass) both match ONNX Runtime."""
    model = with_pre_softmax_outputs(onnx.load_from_string(sample_bytes(sample.name)))
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    graph = ge_core.load_onnx(str(path), sample.input_shapes or None)
    feeds = ge_core.random_feeds(graph, seed=3)
    np.savez(tmp_path / "in.npz", **feeds)  # type: ignore[arg-type]
    want = ort_run(model, feeds)
    for level in ("O0", "O3"):
        out = tmp_path / f"out_{level}.npz"
        args = ["run", str(path), "--opt-level", level, "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out)]
        if sample.input_shapes:
            args += ["--input-shape", sample.input_shapes]
        assert main(args) == 0, capsys.readouterr().err
        with np.load(out) as got:
            assert sorted(got.files) == sorted(want)
            for name, ref in want.items():
                assert got[name].shape == ref.shape and got[name].dtype == ref.dtype, name
                err = relative_error(got[name], ref)
                assert err <= RELATIVE_TOLERANCE, f"{sample.name} {level}: '{name}' relative error {err:.2e}"
                if ref.dtype.kind == "f" and ref.size > 1:
                    assert float(np.std(ref)) > 0, f"{sample.name}: '{name}' is constant; the test proves nothing"


@pytest.mark.slow
@pytest.mark.parametrize("sample", RUNNABLE, ids=lambda s: s.name)
def test_compiles_at_o3_with_a_record_per_pass(sample: Sample) -> None:
    from ge_core.passes.infra.pipeline import default_pipeline

    compiled = ge_core.compile(sample_bytes(sample.name), input_shapes=sample.input_shapes or None,
                               opt_level="O3", verify=True)
    steps = default_pipeline("O3")
    assert [r.name for r in compiled.records] == [s.name for s in steps]
    assert all(r.verified for r in compiled.records)
    report = compiled.report
    assert len(report["passes"]) == len(steps) and report["kernels"] <= report["nodes"]
    assert report["nodes"] <= report["nodes_before"]


def test_every_light_model_and_exported_model_is_covered() -> None:
    names = {s.name for s in RUNNABLE}
    for light in ("resnet50", "densenet121", "inception_v1", "inception_v2", "squeezenet", "shufflenet",
                  "vgg19", "bvlc_alexnet", "zfnet512"):
        assert any(light in n for n in names), light
    for exported in ("ocr_det_db_paddle", "ocr_rec_crnn_paddle", "bert_encoder_torch"):
        assert exported in names


@pytest.mark.slow
def test_python_dash_m_ge_core_run_in_a_real_process(tmp_path: Path) -> None:
    """The literal command a user types, on a Paddle export with symbolic dims."""
    import subprocess
    import sys

    spec = "x:2,3,32,120"
    out = tmp_path / "out.npz"
    proc = subprocess.run([sys.executable, "-m", "ge_core", "run", "sample:ocr_rec_crnn_paddle", "--input-shape", spec,
                           "--seed", "5", "--outputs", str(out)], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    graph = ge_core.load_onnx(sample_bytes("ocr_rec_crnn_paddle"), spec)
    want = ort_run(onnx.load_from_string(sample_bytes("ocr_rec_crnn_paddle")), ge_core.random_feeds(graph, seed=5))
    with np.load(out) as got:
        for name, ref in want.items():
            assert relative_error(got[name], ref) <= RELATIVE_TOLERANCE


def ort_optimized_nodes(data: bytes, tmp_path: Path) -> int:
    """Nodes in the model ONNX Runtime runs after its ORT_ENABLE_EXTENDED optimisations."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp_path / "ort_optimized.onnx")
    ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return len(onnx.load(str(tmp_path / "ort_optimized.onnx"), load_external_data=False).graph.node)


@pytest.mark.slow
@pytest.mark.parametrize("sample", [s for s in RUNNABLE if s.kind in ("light", "exported")], ids=lambda s: s.name)
def test_o3_launches_no_more_kernels_than_onnxruntime_runs_nodes(sample: Sample, tmp_path: Path) -> None:
    """Issue 4's bar: after fusion, our kernel count is at most ORT's node count after its own fusions."""
    data = sample_bytes(sample.name)
    compiled = ge_core.compile(data, input_shapes=sample.input_shapes or None, opt_level="O3")
    assert compiled.plan.kernels <= ort_optimized_nodes(data, tmp_path)
    decisions = compiled.report["fusion"]["decisions"]
    assert any(d["accepted"] for d in decisions)
    assert all(d["reason"] for d in decisions)  # every decision explains itself
