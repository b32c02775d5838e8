"""The graph-fusion passes on the real samples: what each fuses (decision counts) through ge_core.compile at O3
with verify() after every pass, and outputs within 1e-4 of the unoptimized graph on the small models."""

from __future__ import annotations

from collections import Counter

import pytest

import ge_core
from ge_core.passes.infra.instruments import relative_error
from ge_core.samples.registry import get_sample, sample_bytes

LN, GELU, HARD, MM, CONV, ATTN = ("LayerNormFusionPass", "GeluFusionPass", "HardActivationFusionPass",
                                  "MatMulAddFusionPass", "ConvActivationFusionPass", "AttentionFusionPass")
# sample -> accepted decisions per pass (every candidate on these samples is fused: no rejections)
EXPECTED = {
    "transformer_encoder": {LN: 1, GELU: 1, MM: 6, ATTN: 1},
    "bert_encoder_torch": {LN: 5, GELU: 2, MM: 12, ATTN: 2},          # decomposed LayerNorm, Erf GELU
    "bert_encoder_torch_dynamo": {GELU: 2, MM: 12, ATTN: 2},          # LayerNormalization already
    "ocr_rec_crnn_paddle": {LN: 5, GELU: 2, HARD: 7, MM: 9, CONV: 15, ATTN: 2},  # scale on Q, no mask
    "ocr_det_db_paddle": {HARD: 12, CONV: 37},                        # x * HardSigmoid(x) at opset 11
    "mlp": {MM: 3},
    "conv_bn_relu": {CONV: 2},
    "residual_block": {CONV: 4},
}
CNN_EXPECTED = {"resnet50": 49, "squeezenet": 26, "vgg19": 16, "bvlc_alexnet": 5, "inception_v1": 57}
FUSION = {LN, GELU, HARD, MM, CONV, ATTN}


def fused_counts(name: str, check_numerics: bool) -> tuple[Counter[str], list[dict[str, object]]]:
    compiled = ge_core.compile(sample_bytes(name), input_shapes=get_sample(name).input_shapes or None, verify=True)
    decisions = [d for d in compiled.report["fusion"]["decisions"] if d["pass"] in FUSION]
    if check_numerics:
        feeds = ge_core.random_feeds(compiled.input_graph, seed=0)
        want, got = ge_core.execute(compiled.input_graph, feeds), compiled.run(feeds)
        assert max(relative_error(got[t], want[t]) for t in want) <= 1e-4
    return Counter(str(d["pass"]) for d in decisions if d["accepted"]), [d for d in decisions if not d["accepted"]]


@pytest.mark.parametrize("name", list(EXPECTED))
def test_small_samples(name: str) -> None:
    counts, rejected = fused_counts(name, check_numerics=True)
    assert dict(counts) == EXPECTED[name]
    assert rejected == []


@pytest.mark.parametrize("name", list(CNN_EXPECTED))
def test_cnn_samples(name: str) -> None:
    counts, rejected = fused_counts(name, check_numerics=False)
    assert dict(counts) == {CONV: CNN_EXPECTED[name]}
    assert rejected == []


def test_bert_fused_graph_shape() -> None:
    """What a BERT layer becomes: LayerNormalization, FullyConnection(+Gelu), FusedAttention; no primitives."""
    compiled = ge_core.compile(sample_bytes("bert_encoder_torch"), disabled=["UbFusionPass"], verify=True)
    ops = Counter(n.op_type for n in compiled.graph.nodes)
    assert ops["LayerNormalization"] == 5 and ops["FullyConnection"] == 12 and ops["FusedAttention"] == 2
    assert not {"Erf", "Sqrt", "Softmax", "Pow"} & set(ops)
    gelu_fc = [n for n in compiled.graph.nodes if n.attrs.get("activation") == "Gelu"]
    assert len(gelu_fc) == 2 and all(n.body is not None for n in gelu_fc)
