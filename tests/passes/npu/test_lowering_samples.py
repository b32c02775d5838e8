"""The NPU lowering on real models: TransData only at format boundaries, outputs equal to the
target-independent compile, verify() and formats right after every pass, every kernel tiled."""

from __future__ import annotations

import pytest

import ge_core
from ge_core.ops import REGISTRY
from ge_core.passes.infra.instruments import relative_error
from ge_core.passes.npu import LOWERING_PASSES
from ge_core.passes.npu.check import format_problems
from ge_core.passes.npu.report import transdata_count
from ge_core.samples.registry import get_sample, sample_bytes
from tests.passes.npu.test_lowering_properties import leftovers

# sample -> TransData after lowering at O3: the network input into NC1HWC0, and back to NCHW where the
# feature maps meet the head (Reshape/Flatten before Gemm, Softmax) or a graph output. BERT has no feature map.
EXPECTED_TRANSDATA = {
    "resnet50": 2,
    "squeezenet": 2,
    "inception_v1": 2,
    "ocr_det_db_paddle": 2,  # a segmentation map out: its Sigmoid output goes back to NCHW
    "ocr_rec_crnn_paddle": 2,  # CNN backbone, then Reshape/Transpose into the sequence model
    "bert_encoder_torch": 0,
    "densenet121": 2,
    "shufflenet": 34,  # each channel shuffle (Reshape-Transpose-Reshape on 5-D views) is a real boundary
}


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPECTED_TRANSDATA)
def test_lowering_a_sample(name: str) -> None:
    shapes = get_sample(name).input_shapes or None
    plain = ge_core.compile(sample_bytes(name), input_shapes=shapes, opt_level="O3")
    lowered = ge_core.compile(plain.input_graph, opt_level="O3", hardware="ascend910", verify=True)
    assert all(r.verified for r in lowered.records)
    for record in lowered.records:
        if record.name in LOWERING_PASSES and record.snapshot is not None:
            assert format_problems(record.snapshot) == [], record.name
    assert transdata_count(lowered.graph) == EXPECTED_TRANSDATA[name]
    assert leftovers(lowered.graph) == []
    feeds = ge_core.random_feeds(plain.input_graph, seed=0)
    want, got = plain.run(feeds), lowered.run(feeds)
    assert max(relative_error(got[t], want[t]) for t in want) <= 1e-5
    kernels = {n.name for n in lowered.graph.nodes if not REGISTRY.lookup(n).view}
    assert {t["node"] for t in lowered.report["tiling"]} == kernels
    assert lowered.plan.kernels - plain.plan.kernels <= EXPECTED_TRANSDATA[name]
