"""Prefilled sizes for symbolic dims: sizes the model's shapes take (issue 40, friction 5)."""

from __future__ import annotations

import ge_core
from ge_core.samples import sample_bytes
from tests.app.models import audio_frames_model, symbolic_model, text_line_model


def prefilled(data: bytes) -> str:
    spec = ge_core.prefill_input_shapes(ge_core.import_onnx(data).graph)
    assert ge_core.import_onnx(data, spec).ok, spec  # what is prefilled imports
    return spec


def test_a_typical_size_when_the_model_takes_it_else_the_smallest_that_passes() -> None:
    assert prefilled(text_line_model()) == "x:1,3,32,224"  # an image's width: 224 (1 was refused by the pool)
    assert prefilled(audio_frames_model()) == "x:1,224,1"  # the smallest of SIZES an STFT of 256 (pad 64) takes
    assert prefilled(symbolic_model()) == "x:1,4"  # a batch: 1
    assert prefilled(sample_bytes("bert_encoder_torch")).startswith("input_ids:1,128;")  # a sequence: 128


def test_a_model_without_symbolic_dims_gets_no_spec() -> None:
    assert ge_core.prefill_input_shapes(ge_core.import_onnx(sample_bytes("conv_bn_relu")).graph) == ""
