"""The sample registry and the committed sample models (ONNX Runtime is the oracle)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ge_core
from ge_core.errors import UsageError
from ge_core.passes.infra.manager import PassError
from ge_core.samples import calibrate
from ge_core.samples import registry as samples

REPO = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = REPO / "sample_models" / "build_samples.py"
# Light models with a big fully connected layer: hundreds of MB once randomized.
HEAVY_LIGHT = {"vgg19", "bvlc_alexnet", "zfnet512"}
ALL = samples.list_samples()


def _param(s: samples.Sample) -> object:
    marks = [pytest.mark.slow] if s.name in HEAVY_LIGHT else []
    return pytest.param(s.name, id=s.name, marks=marks)


def _run_ort(data: bytes, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds), strict=True))


def _image_feed(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    inits = {t.name for t in model.graph.initializer}
    (name,) = [i.name for i in model.graph.input if i.name not in inits]
    return {name: np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)}


def _class_probs(model: onnx.ModelProto, out: np.ndarray) -> np.ndarray:
    """The model's class probabilities: its output if it ends in Softmax, else softmax(logits)."""
    producer = next(n for n in model.graph.node if model.graph.output[0].name in n.output)
    logits = out.reshape(-1).astype(np.float64)
    if producer.op_type == "Softmax":
        return logits
    e = np.exp(logits - logits.max())
    return e / e.sum()


def _parse_spec(spec: str) -> dict[str, tuple[int, ...]]:
    pairs = (item.split(":") for item in spec.split(";") if item)
    return {name: tuple(int(d) for d in dims.split(",")) for name, dims in pairs}


# --- the registry ----------------------------------------------------------------------------------


def test_registry_covers_the_expected_samples() -> None:
    kinds = {s.name: s.kind for s in ALL}
    assert samples.DEFAULT_SAMPLE == "conv_bn_relu" and kinds["conv_bn_relu"] == "sample"
    for name in ("residual_block", "mlp", "transformer_encoder", "dead_branches_consts"):
        assert kinds[name] == "sample"
    assert kinds["unsupported_op"] == kinds["shape_mismatch"] == kinds["fails_in_a_pass"] == "broken"
    for name in ("resnet50", "densenet121", "inception_v1", "inception_v2", "squeezenet", "shufflenet",
                 "vgg19", "bvlc_alexnet", "zfnet512"):
        assert kinds[name] == "light"
        assert "random weights" in samples.get_sample(name).title
    assert kinds["synthetic_10k"] == "synthetic"
    assert len(kinds) == len(ALL), "sample names must be unique"
    assert all(s.title and s.description for s in ALL)


def test_exported_samples_are_only_the_files_present() -> None:
    exported = [s for s in ALL if s.kind == "exported"]
    assert {s.path for s in exported} == set(samples.EXPORTED_DIR.glob("*.onnx"))
    known = {"ocr_det_db_paddle", "ocr_rec_crnn_paddle", "bert_encoder_torch"}
    assert all(s.input_shapes for s in exported if s.name in known)


def test_unknown_sample_names_the_known_ones() -> None:
    with pytest.raises(UsageError) as info:
        samples.get_sample("no_such_model")
    text = str(info.value)
    assert "no_such_model" in text and "conv_bn_relu" in text and "squeezenet" in text
    assert info.value.exit_code == 2


def test_light_prefix_is_accepted() -> None:
    assert samples.get_sample("light_squeezenet").name == "squeezenet"


def test_synthetic_10k_is_built_by_the_bench_script_seeded_and_cached() -> None:
    """The scale sample: bench/synthetic.py's model of 10,000 nodes, the same bytes every time. Only its
    loading is checked here (test_every_sample_loads); its compile is tests/test_compile_scaling.py's
    business at 2k nodes, so no case of this file compiles 10k nodes."""
    from bench.synthetic import synthetic_model

    sample = samples.get_sample("synthetic_10k")
    assert sample.kind == "synthetic" and sample.path == samples.SYNTHETIC_SCRIPT and sample.nodes == 10_000
    assert sample.inputs_path is None and not sample.random_weights
    data = samples.sample_bytes("synthetic_10k")
    assert data is samples.sample_bytes("synthetic_10k")  # cached per process, like the light models
    assert data == synthetic_model(10_000, samples.SYNTHETIC_SEED).SerializeToString()
    assert len(onnx.load_from_string(data).graph.node) == 10_000


@pytest.mark.parametrize("name", [_param(s) for s in ALL])
def test_every_sample_loads(name: str) -> None:
    model = onnx.load_from_string(samples.sample_bytes(name))
    assert len(model.graph.node) > 0 and len(model.graph.output) > 0


def test_symbolic_samples_have_a_default_shape_spec_matching_their_inputs() -> None:
    for s in ALL:
        if s.kind != "sample" or s.inputs_path is None:
            continue
        symbolic = any(d.dim_param for i in s.load().graph.input for d in i.type.tensor_type.shape.dim)
        assert bool(s.input_shapes) == symbolic, s.name
        if s.input_shapes:
            with np.load(s.inputs_path) as feeds:
                assert _parse_spec(s.input_shapes) == {k: feeds[k].shape for k in feeds.files}


# --- built samples -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [s.name for s in ALL if s.kind == "sample"])
def test_built_sample_matches_committed_outputs(name: str) -> None:
    sample = samples.get_sample(name)
    assert sample.inputs_path is not None and sample.outputs_path is not None
    assert sample.path.stat().st_size < 1 << 20
    model = sample.load()
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 8 and model.opset_import[0].version == 17
    with np.load(sample.inputs_path) as f:
        feeds = {k: f[k] for k in f.files}
    with np.load(sample.outputs_path) as f:
        expected = {k: f[k] for k in f.files}
    assert set(expected) == {o.name for o in model.graph.output}
    got = _run_ort(sample.read_bytes(), feeds)
    for key, want in expected.items():
        np.testing.assert_allclose(got[key], want, rtol=1e-4, atol=1e-5, err_msg=f"{name}:{key}")


def test_broken_samples_are_broken_as_advertised() -> None:
    ops = {(n.domain, n.op_type) for n in samples.get_sample("unsupported_op").load().graph.node}
    assert {("", "SplitToSequence"), ("", "TfIdfVectorizer"), ("com.example", "FancyOp")} <= ops
    with pytest.raises(onnx.shape_inference.InferenceError) as info:
        onnx.checker.check_model(samples.get_sample("shape_mismatch").load(), full_check=True)
    assert "MatMul" in str(info.value) and "Add" in str(info.value)
    late = samples.sample_bytes("fails_in_a_pass")  # imports; only a pass finds its error
    assert ge_core.import_onnx(late).ok
    with pytest.raises(PassError, match=r"(?s)ConstantFoldingPass.*cannot reshape 6 elements into \[4, 4\]"):
        ge_core.compile(late, verify=True)


def test_build_script_is_deterministic(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BUILD_SCRIPT), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    built = sorted(p for p in tmp_path.iterdir() if p.is_file())
    assert len(built) == 5 * 3 + 3  # model, inputs, outputs per valid sample + three broken models
    for path in built:
        committed = REPO / "sample_models" / path.name
        if path.name.endswith(".outputs.npz"):  # ORT's last bits may differ from machine to machine
            with np.load(path) as new, np.load(committed) as old:
                assert new.files == old.files
                for key in new.files:
                    np.testing.assert_allclose(new[key], old[key], rtol=1e-5, atol=1e-6)
        else:
            assert path.read_bytes() == committed.read_bytes(), f"{path.name} differs from the committed file"


# --- randomized light models ---------------------------------------------------------------------------


def test_randomize_weights_is_seeded_and_keeps_the_model_valid() -> None:
    original = onnx.load(str(samples.get_sample("squeezenet").path))
    before = original.SerializeToString()
    a = samples.randomize_weights(original, seed=0)
    assert original.SerializeToString() == before, "the input model must not be modified"
    assert a.SerializeToString() == samples.randomize_weights(original, seed=0).SerializeToString()
    assert a.SerializeToString() != samples.randomize_weights(original, seed=1).SerializeToString()
    onnx.checker.check_model(a)
    assert a.ir_version == original.ir_version == 3
    names = {t.name for t in a.graph.initializer}
    assert names <= {i.name for i in a.graph.input}, "IR 3: every initializer is a graph input"
    assert not any(n.op_type == "ConstantOfShape" for n in a.graph.node)
    assert not any(name.endswith("__SHAPE") for name in names | {i.name for i in a.graph.input})


def test_light_sample_bytes_are_randomized_and_cached() -> None:
    data = samples.sample_bytes("squeezenet")
    assert data is samples.sample_bytes("squeezenet")
    original = onnx.load(str(samples.get_sample("squeezenet").path))
    assert data == samples.light_model(original, samples.LIGHT_SEED).SerializeToString()
    # squeezenet has no BatchNormalization: calibration leaves the randomized model as it is
    assert data == samples.randomize_weights(original, samples.LIGHT_SEED).SerializeToString()


LIGHT_FAST = ["squeezenet", "resnet50"]
LIGHT_SLOW = ["densenet121", "inception_v1", "inception_v2", "shufflenet", *sorted(HEAVY_LIGHT)]


@pytest.mark.parametrize("name", [*LIGHT_FAST, *(pytest.param(n, marks=pytest.mark.slow) for n in LIGHT_SLOW)])
def test_randomized_light_model_is_not_uniform(name: str) -> None:
    model = onnx.load_from_string(samples.sample_bytes(name))
    (out,) = _run_ort(samples.sample_bytes(name), _image_feed(model)).values()
    assert np.isfinite(out).all()
    probs = _class_probs(model, out)
    assert probs.size == 1000
    assert probs.max() > 0.001 + 1e-3, f"{name}: class probabilities are (nearly) uniform"


@pytest.mark.parametrize("name", [s.name for s in ALL if s.kind == "exported" and s.input_shapes])
def test_exported_sample_runs_at_its_default_input_shapes(name: str) -> None:
    sample = samples.get_sample(name)
    data = sample.read_bytes()
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    shapes = _parse_spec(sample.input_shapes)
    assert set(shapes) == {i.name for i in sess.get_inputs()}
    rng = np.random.default_rng(0)
    feeds = {i.name: (np.ones(shapes[i.name], np.int64) if i.type == "tensor(int64)"
                      else rng.standard_normal(shapes[i.name]).astype(np.float32)) for i in sess.get_inputs()}
    assert all(np.isfinite(out).all() for out in _run_ort(data, feeds).values())


# --- calibrated BatchNorm statistics --------------------------------------------------------------------


def _logits(data: bytes) -> np.ndarray:
    """A light model's logits on the seed-0 image: its Softmax input if it ends in Softmax, else its output."""
    model = onnx.load_from_string(data)
    out = model.graph.output[0].name
    producer = next(n for n in model.graph.node if out in n.output)
    if producer.op_type == "Softmax":
        out = producer.input[0]
        model.graph.output.append(onnx.helper.make_empty_tensor_value_info(out))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (logits,) = sess.run([out], _image_feed(model))
    return logits.reshape(-1).astype(np.float64)


def _bn_stats(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    bn_inputs = {name for n in model.graph.node if n.op_type == "BatchNormalization" for name in n.input[3:5]}
    return {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer if t.name in bn_inputs}


@pytest.mark.parametrize("name", ["resnet50", "shufflenet", *(pytest.param(n, marks=pytest.mark.slow)
                                                             for n in ("densenet121", "inception_v2"))])
def test_calibrated_light_model_is_not_saturated(name: str) -> None:
    # Uncalibrated, resnet50's logits reach ~2e5 and shufflenet's ~5e6: the softmax is exactly one-hot.
    logits = _logits(samples.sample_bytes(name))
    assert np.isfinite(logits).all() and logits.size == 1000
    assert np.abs(logits).max() < 50, f"{name}: logits up to {np.abs(logits).max():.3g}"
    assert logits.std() > 0.1, f"{name}: logits barely differ"
    e = np.exp(logits - logits.max())
    assert (e / e.sum()).max() < 0.999, f"{name}: the softmax is saturated"


def test_calibration_is_seeded_and_matches_the_batch_norm_inputs() -> None:
    original = samples.get_sample("conv_bn_relu").load()
    before = original.SerializeToString()
    a = calibrate.calibrate_batch_norms(original, seed=0)
    assert original.SerializeToString() == before, "the input model must not be modified"
    assert a.SerializeToString() == calibrate.calibrate_batch_norms(original, seed=0).SerializeToString()
    b = calibrate.calibrate_batch_norms(original, seed=1)
    stats_a, stats_b = _bn_stats(a), _bn_stats(b)
    assert len(stats_a) == 4 and all(not np.array_equal(stats_a[k], stats_b[k]) for k in stats_a)
    assert all((v > 0).all() for k, v in stats_a.items() if "var" in k)
    onnx.checker.check_model(a)
    # ONNX Runtime on the calibration batch sees each BN input with exactly the written statistics.
    feeds = calibrate.calibration_feeds(ge_core.load_onnx(a), seed=0)
    probe = onnx.ModelProto()
    probe.CopyFrom(a)
    bns = [n for n in probe.graph.node if n.op_type == "BatchNormalization"]
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(n.input[0]) for n in bns)
    got = _run_ort(probe.SerializeToString(), feeds)
    for node in bns:
        x = got[node.input[0]].astype(np.float64)
        np.testing.assert_allclose(stats_a[node.input[3]], x.mean(axis=(0, 2, 3)), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(stats_a[node.input[4]], x.var(axis=(0, 2, 3)), rtol=1e-4, atol=1e-5)


def test_light_model_calibration_is_deterministic() -> None:
    original = onnx.load(str(samples.get_sample("shufflenet").path))
    a = samples.light_model(original, seed=0)
    assert a.SerializeToString() == samples.sample_bytes("shufflenet")
    assert a.SerializeToString() == samples.light_model(original, seed=0).SerializeToString()
    randomized = _bn_stats(samples.randomize_weights(original, seed=0))
    calibrated = _bn_stats(a)
    assert calibrated.keys() == randomized.keys() and len(calibrated) == 2 * 49
    assert all(not np.array_equal(calibrated[k], randomized[k]) for k in calibrated)
