"""Issue 6's bar on real models: every op at or above its roofline floor, totals consistent, a valid trace,
O3 faster than O0, and `run --backend npu` matching ONNX Runtime in fp32."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

import ge_core
from ge_core.cli.main import main
from ge_core.samples.registry import get_sample, sample_bytes
from ge_core.sim import SimResult, simulate
from tests.runtime.test_models import RELATIVE_TOLERANCE, ort_run, relative_error, with_pre_softmax_outputs

MODELS = ["resnet50", "squeezenet", "inception_v1", "bert_encoder_torch", "ocr_det_db_paddle", "ocr_rec_crnn_paddle"]
HARDWARE = {"resnet50": "ascend910", "squeezenet": "ascend310", "inception_v1": "ascend910b",
            "bert_encoder_torch": "ascend910", "ocr_det_db_paddle": "ascend910b", "ocr_rec_crnn_paddle": "ascend310"}


@pytest.fixture(scope="module", params=MODELS)
def simulated(request: pytest.FixtureRequest) -> tuple[str, SimResult, SimResult]:
    """One compile per model and level (timing only: the outputs are checked against ORT below)."""
    name = request.param
    shapes = get_sample(name).input_shapes or None
    results = [simulate(ge_core.compile(sample_bytes(name), input_shapes=shapes, opt_level=level,
                                        hardware=HARDWARE[name]), HARDWARE[name], run=False)
               for level in ("O0", "O3")]
    return name, results[0], results[1]


@pytest.mark.slow
def test_floors_totals_and_fusion_gain(simulated: tuple[str, SimResult, SimResult]) -> None:
    name, o0, o3 = simulated
    for result in (o0, o3):
        p = result.profile
        for r in result.ops:
            floor = max(r.flops / p.peak_flops, r.bytes / p.memory_bandwidth) * 1e6
            assert r.latency_us >= floor, f"{name} {result.opt_level} '{r.node}' below its roofline floor"
        assert result.total_us >= result.ops[-1].end_us - 1e-9
        assert result.total_us >= result.floor_us
    assert o3.total_us < o0.total_us, f"{name}: O3 {o3.total_us:.1f} us is not faster than O0 {o0.total_us:.1f} us"


@pytest.mark.slow
def test_trace_opens_as_chrome_trace(simulated: tuple[str, SimResult, SimResult], tmp_path: Path) -> None:
    _, _, o3 = simulated
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(o3.trace()), encoding="utf-8")
    events = json.loads(path.read_text())["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert {"name", "ph", "ts", "dur", "pid", "tid"} <= set(spans[0])
    kernels = sorted((e for e in spans if e["tid"] == 0), key=lambda e: e["ts"])
    assert len(kernels) == len(o3.ops)
    assert all(a["ts"] + a["dur"] <= b["ts"] + 1e-3 for a, b in itertools.pairwise(kernels))


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_run_backend_npu_matches_onnxruntime(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = get_sample(name)
    model = with_pre_softmax_outputs(onnx.load_from_string(sample_bytes(name)))
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    feeds = ge_core.random_feeds(ge_core.load_onnx(str(path), sample.input_shapes or None), seed=3)
    np.savez(tmp_path / "in.npz", **feeds)  # type: ignore[arg-type]
    args = ["run", str(path), "--backend", "npu", "--hardware", HARDWARE[name], "--opt-level", "O3",
            "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "out.npz"),
            "--precision-mode", "force_fp32"]  # exact numbers (ATC's default, force_fp16, rounds)
    if sample.input_shapes:
        args += ["--input-shape", sample.input_shapes]
    assert main(args) == 0, capsys.readouterr().err
    want = ort_run(model, feeds)
    with np.load(tmp_path / "out.npz") as got:
        assert sorted(got.files) == sorted(want)
        for output, ref in want.items():
            err = relative_error(got[output], ref)
            assert err <= RELATIVE_TOLERANCE, f"{name}: '{output}' relative error {err:.2e}"
