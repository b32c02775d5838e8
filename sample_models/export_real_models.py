#!/usr/bin/env python
"""Regenerate the real-exporter ONNX fixtures in ``sample_models/exported/``.

What it builds (all weights random but seeded, models in eval mode):

* ``ocr_det_db_paddle.onnx`` -- a DBNet-like text detector written in PaddlePaddle:
  MobileNetV3-small-like backbone (conv-BN-hardswish, depthwise convs, SE blocks with
  AdaptiveAvgPool2D + hardsigmoid), a DBFPN-like neck (1x1 convs, nearest
  ``F.upsample(scale_factor=2)`` + add, 3x3 convs, upsample to 1/4 and concat) and a DB head
  (conv-BN-relu, two ConvTranspose x2, sigmoid).  Input ``x`` is ``[-1, 3, -1, -1]``
  (symbolic batch, height, width; H and W must be multiples of 32), exported with paddle2onnx.
* ``ocr_rec_crnn_paddle.onnx`` -- a CRNN/SVTR-like text recogniser in PaddlePaddle: conv
  backbone with (2,1)-stride pools, Im2Seq (squeeze + transpose), an SVTR-like neck of two
  transformer blocks (LayerNorm, MatMul attention with Softmax, MLP with GELU) and a CTC head
  (Linear + softmax).  Input ``x`` is ``[-1, 3, 32, -1]`` (symbolic batch and width).
* ``bert_encoder_torch.onnx`` -- a HuggingFace ``transformers.BertModel`` built from a small
  ``BertConfig`` (2 layers, hidden 64, 4 heads, intermediate 128, vocab 1000, 128 positions,
  eager attention) exported with the legacy TorchScript exporter
  (``torch.onnx.export(..., dynamo=False)``).  Inputs ``input_ids``, ``attention_mask``,
  ``token_type_ids``: int64 ``[batch, sequence]``; outputs ``last_hidden_state`` and
  ``pooler_output``.
* ``bert_encoder_torch_dynamo.onnx`` -- the same model through the dynamo exporter
  (``torch.onnx.export(..., dynamo=True)``, needs onnxscript), when that works.  Only its
  per-node ``pkg.torch.onnx.stack_trace`` metadata (local paths, script line numbers) is stripped.

Every model is checked with onnxruntime at two concrete values of its symbolic dims against the
framework's own output, and ``sample_models/exported/README.md`` is rewritten with provenance
(framework / exporter versions, opset, inputs, op histogram).

The outputs are committed, so neither CI nor the tests ever need torch or paddle.  To regenerate
(these packages are NOT project requirements; install them only for this script):

    pip install paddlepaddle==3.2.1 paddle2onnx==2.1.0   # CPU build (see note below)
    pip install torch==2.13.0                            # CPU build
    pip install transformers onnxscript
    pip install "onnx==<the project's version>"          # paddle2onnx downgrades onnx to 1.17
    HF_HUB_OFFLINE=1 python sample_models/export_real_models.py [--only bert,bert_dynamo,det,rec]

Notes:
* paddlepaddle 3.3.x + paddle2onnx 2.1.0 fail on every interpolate op ("the 0th elementwise MUST be
  ir::FloatAttribute", Paddle issue #77757); paddlepaddle 3.2.1 works.
* paddle2onnx declares onnx<=1.17 but runs fine (same bytes out) with the project's newer onnx.
* The Paddle models use opset 11 (the opset of PaddleOCR's documented paddle2onnx command): there
  hardswish is exported as HardSigmoid + Mul.  ``--paddle-opset 14`` gives native HardSwish nodes.
* Output is deterministic: rerunning reproduces the committed files byte for byte.

No weights are downloaded: the BERT model is constructed from a config only.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent / "exported"
SEED = 20240601
ATOL = 1e-4
RTOL = 1e-4

# opset used for the Paddle models: PaddleOCR's documented paddle2onnx command uses 11.
PADDLE_OPSET = 11
BERT_OPSET = 14
GAIN_DET = 5.0  # last-layer gains: logits std ~2-4, so sigmoid/softmax outputs are far from uniform
GAIN_REC = 4.0
DYNAMO_OPSET = 18


# --------------------------------------------------------------------------------------------
# common helpers
# --------------------------------------------------------------------------------------------
def op_histogram(path: Path) -> dict[str, int]:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    counts: collections.Counter[str] = collections.Counter()

    def walk(graph):
        for node in graph.node:
            key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
            counts[key] += 1
            for attr in node.attribute:
                if attr.g is not None and attr.g.node:
                    walk(attr.g)
                for g in attr.graphs:
                    walk(g)

    walk(model.graph)
    for fn in model.functions:  # dynamo exporter may emit local functions
        for node in fn.node:
            counts[f"(function {fn.name}) {node.op_type}"] += 1
    return dict(sorted(counts.items()))


def describe_io(path: Path) -> dict:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    init_names = {i.name for i in model.graph.initializer}

    def vi(v):
        t = v.type.tensor_type
        dims = []
        for d in t.shape.dim:
            if d.HasField("dim_param"):
                dims.append(d.dim_param)
            elif d.HasField("dim_value"):
                dims.append(d.dim_value)
            else:
                dims.append("?")
        return {"name": v.name, "dtype": onnx.TensorProto.DataType.Name(t.elem_type).lower(), "shape": dims}

    opsets = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
    return {
        "inputs": [vi(v) for v in model.graph.input if v.name not in init_names],
        "outputs": [vi(v) for v in model.graph.output],
        "opsets": opsets,
        "ir_version": model.ir_version,
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "n_nodes": len(model.graph.node),
        "n_initializers": len(model.graph.initializer),
    }


def ort_run(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def compare(name: str, shape_desc: str, ref: list[np.ndarray], got: list[np.ndarray]) -> dict:
    assert len(ref) == len(got), f"{name}: {len(ref)} reference outputs vs {len(got)} ORT outputs"
    rows = []
    for i, (r, g) in enumerate(zip(ref, got, strict=True)):
        assert r.shape == g.shape, f"{name} out{i}: shape {r.shape} vs ORT {g.shape}"
        err = float(np.max(np.abs(r.astype(np.float64) - g.astype(np.float64)))) if r.size else 0.0
        ok = bool(np.allclose(g, r, atol=ATOL, rtol=RTOL))
        rows.append(
            {
                "output": i,
                "shape": list(g.shape),
                "max_abs_err": err,
                "ok": ok,
                "ref_std": float(np.std(r)) if r.size else 0.0,
            }
        )
        status = "OK " if ok else "BAD"
        print(
            f"  [{status}] {name} {shape_desc} out{i} shape={tuple(g.shape)} "
            f"max|diff|={err:.2e} std(ref)={rows[-1]['ref_std']:.3g}"
        )
        if not ok:
            raise AssertionError(f"{name} {shape_desc}: ORT output {i} differs from framework by {err}")
    return {"case": shape_desc, "outputs": rows}


# --------------------------------------------------------------------------------------------
# BERT (PyTorch / transformers)
# --------------------------------------------------------------------------------------------
BERT_CFG = dict(
    vocab_size=1000,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=128,
    max_position_embeddings=128,
    type_vocab_size=2,
)


def build_bert():
    import torch

    torch.manual_seed(SEED)
    try:
        from transformers import BertConfig, BertModel

        cfg = BertConfig(**BERT_CFG, hidden_act="gelu", attn_implementation="eager")
        model = BertModel(cfg, add_pooling_layer=True)
        impl = f"transformers {_version('transformers')} BertModel (eager attention), torch {torch.__version__}"
    except Exception as exc:  # pragma: no cover - fallback when transformers is unavailable
        print(f"transformers unavailable ({exc!r}); using the plain torch.nn BERT mirror")
        model = TorchBert(**BERT_CFG)
        impl = "plain torch.nn mirror of BertModel"
    # Non-trivial random weights: HF init leaves LayerNorm at (1, 0) and biases at 0.
    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm.weight" in name or name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.05 * torch.randn(p.shape, generator=g))
            elif "embeddings" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
    model.eval()
    return model, impl


def _make_torch_bert_class():
    import math

    import torch
    from torch import nn

    class Embeddings(nn.Module):
        def __init__(self, vocab_size, hidden_size, max_position_embeddings, type_vocab_size):
            super().__init__()
            self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
            self.position_embeddings = nn.Embedding(max_position_embeddings, hidden_size)
            self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
            self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
            self.register_buffer("position_ids", torch.arange(max_position_embeddings).unsqueeze(0))

        def forward(self, input_ids, token_type_ids):
            pos = self.position_ids[:, : input_ids.shape[1]]
            x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
            return self.LayerNorm(x + self.position_embeddings(pos))

    class Layer(nn.Module):
        def __init__(self, hidden_size, num_attention_heads, intermediate_size):
            super().__init__()
            self.h, self.d = num_attention_heads, hidden_size // num_attention_heads
            self.query = nn.Linear(hidden_size, hidden_size)
            self.key = nn.Linear(hidden_size, hidden_size)
            self.value = nn.Linear(hidden_size, hidden_size)
            self.attn_out = nn.Linear(hidden_size, hidden_size)
            self.attn_norm = nn.LayerNorm(hidden_size, eps=1e-12)
            self.intermediate = nn.Linear(hidden_size, intermediate_size)
            self.output = nn.Linear(intermediate_size, hidden_size)
            self.out_norm = nn.LayerNorm(hidden_size, eps=1e-12)

        def split(self, x):
            b, s, _ = x.shape
            return x.view(b, s, self.h, self.d).permute(0, 2, 1, 3)

        def forward(self, x, ext_mask):
            q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d) + ext_mask
            ctx = torch.matmul(scores.softmax(-1), v).permute(0, 2, 1, 3)
            ctx = ctx.reshape(x.shape[0], x.shape[1], -1)
            x = self.attn_norm(self.attn_out(ctx) + x)
            y = self.output(nn.functional.gelu(self.intermediate(x)))
            return self.out_norm(y + x)

    class TorchBert(nn.Module):
        def __init__(
            self,
            vocab_size,
            hidden_size,
            num_hidden_layers,
            num_attention_heads,
            intermediate_size,
            max_position_embeddings,
            type_vocab_size,
        ):
            super().__init__()
            self.embeddings = Embeddings(vocab_size, hidden_size, max_position_embeddings, type_vocab_size)
            self.layers = nn.ModuleList(
                Layer(hidden_size, num_attention_heads, intermediate_size) for _ in range(num_hidden_layers)
            )
            self.pooler = nn.Linear(hidden_size, hidden_size)

        def forward(self, input_ids, attention_mask, token_type_ids):
            ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
            x = self.embeddings(input_ids, token_type_ids)
            for layer in self.layers:
                x = layer(x, ext)
            return x, torch.tanh(self.pooler(x[:, 0]))

    return TorchBert


def TorchBert(**kw):
    """Plain torch.nn mirror of HF BertModel (fallback when transformers is missing)."""
    return _make_torch_bert_class()(**kw)


class _BertWrapper:
    """Wrap BertModel so that export sees positional (input_ids, attention_mask, token_type_ids)
    and a plain (last_hidden_state, pooler_output) tuple."""

    @staticmethod
    def make(model):
        import torch

        class Wrapper(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, token_type_ids):
                out = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
                if isinstance(out, tuple):
                    return out[0], out[1]
                return out.last_hidden_state, out.pooler_output

        return Wrapper(model).eval()


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _strip_stack_traces(path: Path) -> None:
    """Drop the dynamo exporter's per-node ``pkg.torch.onnx.stack_trace`` metadata.

    It holds absolute paths of this machine and line numbers of this script, so it changes with
    every edit; everything else (graph, names, other metadata) is kept as the exporter wrote it.
    """
    import onnx

    model = onnx.load(str(path))
    for node in model.graph.node:
        keep = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(keep)
    onnx.save(model, str(path))


def bert_inputs(batch: int, seq: int, seed: int, pad: bool):
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, BERT_CFG["vocab_size"], size=(batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    tt = np.zeros((batch, seq), dtype=np.int64)
    for b in range(batch):
        tt[b, seq // 2 :] = 1
    if pad:
        for b in range(batch):
            n_pad = (b * 5 + 3) % max(seq // 2, 1)
            if n_pad:
                mask[b, seq - n_pad :] = 0
                ids[b, seq - n_pad :] = 0
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt}


BERT_CASES = [(1, 7, False), (2, 16, True)]


def export_bert(dynamo: bool) -> dict:
    import torch

    model, impl = build_bert()
    wrapper = _BertWrapper.make(model)
    name = "bert_encoder_torch_dynamo.onnx" if dynamo else "bert_encoder_torch.onnx"
    path = OUT_DIR / name
    example = bert_inputs(2, 16, SEED, pad=True)
    args = tuple(torch.from_numpy(example[k]) for k in ("input_ids", "attention_mask", "token_type_ids"))
    input_names = ["input_ids", "attention_mask", "token_type_ids"]
    output_names = ["last_hidden_state", "pooler_output"]
    if dynamo:
        batch = torch.export.Dim("batch", min=1, max=64)
        seq = torch.export.Dim("sequence", min=2, max=BERT_CFG["max_position_embeddings"])
        dyn = {k: {0: batch, 1: seq} for k in input_names}
        prog = torch.onnx.export(
            wrapper,
            args,
            dynamo=True,
            input_names=input_names,
            output_names=output_names,
            opset_version=DYNAMO_OPSET,
            dynamic_shapes=dyn,
            external_data=False,
        )
        prog.save(str(path), external_data=False)
        _strip_stack_traces(path)
        opset = DYNAMO_OPSET
        exporter = (
            f"torch.onnx.export(dynamo=True) torch {torch.__version__}, onnxscript {_version('onnxscript')}"
            " (node metadata pkg.torch.onnx.stack_trace stripped)"
        )
    else:
        dyn_axes = {k: {0: "batch", 1: "sequence"} for k in input_names}
        dyn_axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
        dyn_axes["pooler_output"] = {0: "batch"}
        torch.onnx.export(
            wrapper,
            args,
            str(path),
            dynamo=False,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dyn_axes,
            opset_version=BERT_OPSET,
            do_constant_folding=True,
        )
        opset = BERT_OPSET
        exporter = f"torch.onnx.export(dynamo=False, TorchScript) torch {torch.__version__}"

    checks = []
    for batch_n, seq_n, pad in BERT_CASES:
        feeds = bert_inputs(batch_n, seq_n, SEED + batch_n * 100 + seq_n, pad)
        with torch.no_grad():
            ref = [t.numpy() for t in wrapper(*(torch.from_numpy(feeds[k]) for k in input_names))]
        got = ort_run(path, feeds)
        desc = f"batch={batch_n} seq={seq_n}" + (" (padded mask)" if pad else "")
        checks.append(compare(name, desc, ref, got))
    return {"file": name, "framework": impl, "exporter": exporter, "requested_opset": opset, "checks": checks}


# --------------------------------------------------------------------------------------------
# Paddle OCR models
# --------------------------------------------------------------------------------------------
def _paddle_layers():
    import paddle
    import paddle.nn.functional as F
    from paddle import nn

    class ConvBNLayer(nn.Layer):
        def __init__(self, cin, cout, k, stride=1, groups=1, act=None):
            super().__init__()
            pad = (k - 1) // 2 if isinstance(k, int) else tuple((kk - 1) // 2 for kk in k)
            self.conv = nn.Conv2D(cin, cout, k, stride=stride, padding=pad, groups=groups, bias_attr=False)
            self.bn = nn.BatchNorm2D(cout)
            self.act = act

        def forward(self, x):
            x = self.bn(self.conv(x))
            if self.act == "hardswish":
                x = F.hardswish(x)
            elif self.act == "relu":
                x = F.relu(x)
            return x

    class SEModule(nn.Layer):
        def __init__(self, c, reduction=4):
            super().__init__()
            self.avg_pool = nn.AdaptiveAvgPool2D(1)
            self.conv1 = nn.Conv2D(c, c // reduction, 1)
            self.conv2 = nn.Conv2D(c // reduction, c, 1)

        def forward(self, inputs):
            x = self.avg_pool(inputs)
            x = F.relu(self.conv1(x))
            x = F.hardsigmoid(self.conv2(x), slope=0.2, offset=0.5)
            return inputs * x

    class ResidualUnit(nn.Layer):
        """MobileNetV3 bneck: expand 1x1, depthwise kxk, optional SE, project 1x1."""

        def __init__(self, cin, cmid, cout, k, stride, use_se, act):
            super().__init__()
            self.if_shortcut = stride == 1 and cin == cout
            self.expand_conv = ConvBNLayer(cin, cmid, 1, act=act)
            self.bottleneck_conv = ConvBNLayer(cmid, cmid, k, stride=stride, groups=cmid, act=act)
            self.mid_se = SEModule(cmid) if use_se else None
            self.linear_conv = ConvBNLayer(cmid, cout, 1, act=None)

        def forward(self, inputs):
            x = self.bottleneck_conv(self.expand_conv(inputs))
            if self.mid_se is not None:
                x = self.mid_se(x)
            x = self.linear_conv(x)
            if self.if_shortcut:
                x = paddle.add(inputs, x)
            return x

    class MobileNetV3Small(nn.Layer):
        """MobileNetV3-small (scale ~0.5) returning the 1/4, 1/8, 1/16, 1/32 feature maps."""

        # k, exp, c, se, act, stride
        CFG = (
            [3, 16, 16, True, "relu", 2],  # 1/4
            [3, 40, 24, False, "relu", 2],  # 1/8
            [3, 48, 24, False, "relu", 1],
            [5, 48, 24, True, "hardswish", 2],  # 1/16
            [5, 96, 24, True, "hardswish", 1],
            [5, 72, 32, True, "hardswish", 1],
            [5, 144, 48, True, "hardswish", 2],  # 1/32
            [5, 144, 48, True, "hardswish", 1],
        )

        def __init__(self):
            super().__init__()
            self.conv = ConvBNLayer(3, 16, 3, stride=2, act="hardswish")
            self.stages = nn.LayerList()
            self.out_channels = []
            cin, blocks = 16, []
            for i, (k, exp, c, se, act, s) in enumerate(self.CFG):
                if s == 2 and i > 0:
                    self.stages.append(nn.Sequential(*blocks))
                    self.out_channels.append(cin)
                    blocks = []
                blocks.append(ResidualUnit(cin, exp, c, k, s, se, act))
                cin = c
            blocks.append(ConvBNLayer(cin, 96, 1, act="hardswish"))
            self.stages.append(nn.Sequential(*blocks))
            self.out_channels.append(96)

        def forward(self, x):
            x = self.conv(x)
            outs = []
            for stage in self.stages:
                x = stage(x)
                outs.append(x)
            return outs

    class DBFPN(nn.Layer):
        def __init__(self, in_channels, out_channels=48):
            super().__init__()
            self.in2_conv = nn.Conv2D(in_channels[0], out_channels, 1, bias_attr=False)
            self.in3_conv = nn.Conv2D(in_channels[1], out_channels, 1, bias_attr=False)
            self.in4_conv = nn.Conv2D(in_channels[2], out_channels, 1, bias_attr=False)
            self.in5_conv = nn.Conv2D(in_channels[3], out_channels, 1, bias_attr=False)
            self.p5_conv = nn.Conv2D(out_channels, out_channels // 4, 3, padding=1, bias_attr=False)
            self.p4_conv = nn.Conv2D(out_channels, out_channels // 4, 3, padding=1, bias_attr=False)
            self.p3_conv = nn.Conv2D(out_channels, out_channels // 4, 3, padding=1, bias_attr=False)
            self.p2_conv = nn.Conv2D(out_channels, out_channels // 4, 3, padding=1, bias_attr=False)
            self.out_channels = out_channels

        def forward(self, x):
            c2, c3, c4, c5 = x
            in5 = self.in5_conv(c5)
            in4 = self.in4_conv(c4)
            in3 = self.in3_conv(c3)
            in2 = self.in2_conv(c2)
            out4 = in4 + F.upsample(in5, scale_factor=2, mode="nearest", align_mode=1)
            out3 = in3 + F.upsample(out4, scale_factor=2, mode="nearest", align_mode=1)
            out2 = in2 + F.upsample(out3, scale_factor=2, mode="nearest", align_mode=1)
            p5 = F.upsample(self.p5_conv(in5), scale_factor=8, mode="nearest", align_mode=1)
            p4 = F.upsample(self.p4_conv(out4), scale_factor=4, mode="nearest", align_mode=1)
            p3 = F.upsample(self.p3_conv(out3), scale_factor=2, mode="nearest", align_mode=1)
            p2 = self.p2_conv(out2)
            return paddle.concat([p5, p4, p3, p2], axis=1)

    class DBHead(nn.Layer):
        def __init__(self, cin, k=50):
            super().__init__()
            self.k = k
            self.conv1 = ConvBNLayer(cin, cin // 4, 3, act="relu")
            self.conv2 = nn.Conv2DTranspose(cin // 4, cin // 4, 2, stride=2)
            self.conv_bn2 = nn.BatchNorm2D(cin // 4)
            self.conv3 = nn.Conv2DTranspose(cin // 4, 1, 2, stride=2)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(self.conv_bn2(self.conv2(x)))
            return F.sigmoid(self.conv3(x))

    class DBNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self.backbone = MobileNetV3Small()
            self.neck = DBFPN(self.backbone.out_channels)
            self.head = DBHead(self.neck.out_channels)

        def forward(self, x):
            return self.head(self.neck(self.backbone(x)))

    # ---------------- recogniser ----------------
    class Attention(nn.Layer):
        def __init__(self, dim, num_heads):
            super().__init__()
            self.num_heads = num_heads
            self.head_dim = dim // num_heads
            self.scale = self.head_dim**-0.5
            self.qkv = nn.Linear(dim, dim * 3)
            self.proj = nn.Linear(dim, dim)
            self.dim = dim

        def forward(self, x):
            qkv = self.qkv(x).reshape((0, -1, 3, self.num_heads, self.head_dim)).transpose((2, 0, 3, 1, 4))
            q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
            attn = F.softmax(q.matmul(k.transpose((0, 1, 3, 2))), axis=-1)
            x = attn.matmul(v).transpose((0, 2, 1, 3)).reshape((0, -1, self.dim))
            return self.proj(x)

    class Mlp(nn.Layer):
        def __init__(self, dim, hidden):
            super().__init__()
            self.fc1 = nn.Linear(dim, hidden)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(hidden, dim)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class Block(nn.Layer):
        def __init__(self, dim, num_heads, mlp_ratio=2.0):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
            self.mixer = Attention(dim, num_heads)
            self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
            self.mlp = Mlp(dim, int(dim * mlp_ratio))

        def forward(self, x):
            x = x + self.mixer(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class RecBackbone(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv1 = ConvBNLayer(3, 16, 3, stride=2, act="hardswish")  # H/2, W/2
            self.block1 = ResidualUnit(16, 32, 24, 3, 1, True, "relu")
            self.pool1 = nn.MaxPool2D(kernel_size=(2, 1), stride=(2, 1))  # H/4
            self.block2 = ResidualUnit(24, 64, 32, 3, 1, False, "hardswish")
            self.conv2 = ConvBNLayer(32, 48, 3, stride=(2, 1), act="hardswish")  # H/8
            self.block3 = ResidualUnit(48, 96, 48, 5, 1, True, "hardswish")
            self.pool2 = nn.MaxPool2D(kernel_size=(2, 1), stride=(2, 1))  # H/16
            self.conv3 = ConvBNLayer(48, 64, 1, act="relu")
            self.pool3 = nn.MaxPool2D(kernel_size=2, stride=2)  # H/32, W/4

        def forward(self, x):
            x = self.pool1(self.block1(self.conv1(x)))
            x = self.pool2(self.block3(self.conv2(self.block2(x))))
            return self.pool3(self.conv3(x))

    class Im2Seq(nn.Layer):
        def forward(self, x):
            x = x.squeeze(axis=2)  # [B, C, W]
            return x.transpose([0, 2, 1])  # [B, W, C]

    class SVTRNeck(nn.Layer):
        def __init__(self, cin=64, dim=64, depth=2, num_heads=4):
            super().__init__()
            self.conv1 = ConvBNLayer(cin, dim, 1, act="hardswish")
            self.blocks = nn.LayerList([Block(dim, num_heads) for _ in range(depth)])
            self.norm = nn.LayerNorm(dim, epsilon=1e-6)

        def forward(self, x):
            x = self.conv1(x)  # [B, C, 1, W]
            _, c, h, w = x.shape
            z = x.flatten(2).transpose([0, 2, 1])  # [B, W, C]
            for blk in self.blocks:
                z = blk(z)
            z = self.norm(z)
            return z.reshape([-1, h, w, c]).transpose([0, 3, 1, 2])

    class CTCHead(nn.Layer):
        def __init__(self, cin, n_classes):
            super().__init__()
            self.fc = nn.Linear(cin, n_classes)

        def forward(self, x):
            return F.softmax(self.fc(x), axis=2)

    class CRNN(nn.Layer):
        def __init__(self, n_classes=97):
            super().__init__()
            self.backbone = RecBackbone()
            self.neck = SVTRNeck()
            self.seq = Im2Seq()
            self.head = CTCHead(64, n_classes)

        def forward(self, x):
            return self.head(self.seq(self.neck(self.backbone(x))))

    return DBNet, CRNN


def _randomise_paddle(model, seed: int, calib_shape: tuple[int, ...], head_gain: dict[str, float]):
    """Give the model trained-looking, non-trivial parameters.

    Paddle's default init plus BN statistics drawn at random leaves activations shrinking layer by
    layer (a near-constant output says little about numerics).  So: randomise BN affine params and
    LayerNorm params, calibrate every BN's running mean/var on a random batch (momentum 0 for one
    train-mode pass), then perturb those statistics at random (var stays positive) so they are not
    exactly the batch statistics, and scale the last layer up so the head produces confident,
    varied probabilities.
    """
    import paddle
    from paddle import nn

    rng = np.random.default_rng(seed)
    bns = [m for m in model.sublayers() if isinstance(m, nn.BatchNorm2D)]
    for layer in model.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value((1.0 + 0.2 * rng.standard_normal(c)).astype("float32"))
            layer.bias.set_value((0.2 * rng.standard_normal(c)).astype("float32"))
        elif isinstance(layer, nn.LayerNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value((1.0 + 0.1 * rng.standard_normal(c)).astype("float32"))
            layer.bias.set_value((0.05 * rng.standard_normal(c)).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv2D, nn.Conv2DTranspose)) and layer.bias is not None:
            b = layer.bias
            b.set_value((0.05 * rng.standard_normal(b.shape)).astype("float32"))
    # calibrate BN statistics on one random batch
    for bn in bns:
        bn._momentum = 0.0
    model.train()
    with paddle.no_grad():
        model(paddle.to_tensor(rng.standard_normal(calib_shape).astype("float32")))
    for bn in bns:
        bn._momentum = 0.9
        c = bn._mean.shape[0]
        mean, var = bn._mean.numpy(), bn._variance.numpy()
        std = np.sqrt(np.maximum(var, 1e-4))
        bn._mean.set_value((mean + 0.1 * std * rng.standard_normal(c)).astype("float32"))
        bn._variance.set_value((np.maximum(var, 1e-4) * rng.uniform(0.8, 1.25, c)).astype("float32"))
    for name, gain in head_gain.items():
        w = dict(model.named_parameters())[name]
        w.set_value(w.numpy() * gain)
    model.eval()


def export_paddle(kind: str) -> dict:
    import paddle
    import paddle2onnx

    paddle.seed(SEED)
    np.random.seed(SEED)
    DBNet, CRNN = _paddle_layers()
    if kind == "det":
        model = DBNet()
        name = "ocr_det_db_paddle.onnx"
        spec = [paddle.static.InputSpec(shape=[-1, 3, -1, -1], dtype="float32", name="x")]
        cases = [(1, 3, 64, 96), (2, 3, 96, 128)]
        gain = {"head.conv3.weight": GAIN_DET}
    else:
        model = CRNN()
        name = "ocr_rec_crnn_paddle.onnx"
        spec = [paddle.static.InputSpec(shape=[-1, 3, 32, -1], dtype="float32", name="x")]
        cases = [(1, 3, 32, 100), (3, 3, 32, 160)]
        gain = {"head.fc.weight": GAIN_REC}
    _randomise_paddle(model, SEED + (1 if kind == "det" else 2), calib_shape=(4, *cases[1][1:]), head_gain=gain)
    path = OUT_DIR / name

    # The PaddleOCR flow: save a static inference model with jit.save, then paddle2onnx it.
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "inference")
        static_model = paddle.jit.to_static(model, input_spec=spec, full_graph=True)
        paddle.jit.save(static_model, prefix)
        model_file = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
        paddle2onnx.export(
            model_file, prefix + ".pdiparams", str(path), opset_version=PADDLE_OPSET, enable_onnx_checker=True
        )
        saved_format = "PIR json" if model_file.endswith(".json") else "pdmodel"

    checks = []
    rng = np.random.default_rng(SEED + 7)
    for shape in cases:
        x = rng.standard_normal(shape).astype("float32")
        with paddle.no_grad():
            ref = model(paddle.to_tensor(x))
        ref = [r.numpy() for r in (ref if isinstance(ref, (list, tuple)) else [ref])]
        got = ort_run(path, {"x": x})
        checks.append(compare(name, "x=" + "x".join(map(str, shape)), ref, got))
    return {
        "file": name,
        "framework": f"PaddlePaddle {paddle.__version__} (dygraph -> paddle.jit.save, {saved_format})",
        "exporter": f"paddle2onnx {paddle2onnx.__version__} (paddle2onnx.export, default optimisation)",
        "requested_opset": PADDLE_OPSET,
        "checks": checks,
    }


# --------------------------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------------------------
def write_readme(results: list[dict]) -> None:
    import onnx
    import onnxruntime as ort

    lines = [
        "# Real-exporter ONNX fixtures",
        "",
        "Small but real models produced by the real exporters (paddle2onnx, torch.onnx), with random",
        "seeded weights (no pretrained weights are downloaded). They exist so GE Workbench can be",
        "tested on graphs that look like what those exporters really emit: Shape/Gather/Unsqueeze/",
        "Concat/Reshape chains, masks, Erf GELU, decomposed LayerNorm, HardSigmoid, Resize, ConvTranspose...",
        "",
        "**Generated by** `sample_models/export_real_models.py`; do not edit by hand. The files are",
        "committed, so CI and the tests never need torch or paddle. To regenerate:",
        "",
        "```bash",
        "pip install paddlepaddle==3.2.1 paddle2onnx==2.1.0  # 3.3.x breaks paddle2onnx 2.1.0 on Resize",
        "pip install torch==2.13.0                           # CPU build",
        "pip install transformers onnxscript",
        'pip install "onnx==<the project\'s version>"         # paddle2onnx downgrades onnx to 1.17',
        "HF_HUB_OFFLINE=1 python sample_models/export_real_models.py",
        "```",
        "",
        f"Verification: each model was run with onnxruntime {ort.__version__} at two concrete values of",
        f"its symbolic dims and compared with the framework's own eager output (atol={ATOL}, rtol={RTOL}).",
        f"onnx python package used while exporting: {onnx.__version__}.",
        "",
        "Things worth knowing when loading these graphs:",
        "",
        "- Paddle models (opset 11): paddle2onnx writes hardswish as `HardSigmoid(alpha=1/6, beta=0.5)` +",
        "  `Mul` and hardsigmoid(slope=0.2) as `HardSigmoid(alpha=0.2)`; BatchNormalization is not folded",
        "  into Conv and carries a `momentum` attribute; upsampling is `Resize(mode=nearest,",
        "  coordinate_transformation_mode=asymmetric, nearest_mode=floor)` with an empty `roi` and",
        "  constant `scales`; LayerNorm is decomposed (ReduceMean/Sub/Pow/Sqrt/Div); GELU is Erf-based;",
        "  `ReduceMean`/`Squeeze`/`Unsqueeze` use the pre-13 `axes` attribute; `Softmax` uses opset-11",
        "  (coerce-to-2D) semantics, always on the last axis here; many `Identity` nodes remain.",
        "  Output is named `fetch_name_0`, symbolic dims `DynamicDimension.N` (exporter naming).",
        "  The det model needs H and W divisible by 32 (FPN adds), the rec model any width >= 4.",
        "- `bert_encoder_torch.onnx` (TorchScript exporter, opset 14): transformers 5.x builds the",
        "  padding mask with Range/GreaterOrEqual/And/Expand/Where (boolean mask -> Where with the",
        "  float32 minimum); LayerNorm is decomposed, GELU is Erf-based, many `Constant` nodes and",
        "  Shape/Gather/Unsqueeze/Concat/Reshape chains. (The script's plain-torch fallback, used",
        "  only without transformers, gives the classic `(1 - mask) * finfo.min` Cast/Sub/Mul form.)",
        "- `bert_encoder_torch_dynamo.onnx` (dynamo exporter, opset 18): fused `LayerNormalization`,",
        "  `Shape` with `start`/`end`, `Reshape(allowzero=1)`, a `GatherND`, far fewer nodes.",
        "",
    ]
    for r in results:
        path = OUT_DIR / r["file"]
        io = describe_io(path)
        hist = op_histogram(path)
        size = path.stat().st_size
        lines += [
            f"## `{r['file']}`",
            "",
            f"- framework: {r['framework']}",
            f"- exporter: {r['exporter']}",
            f"- producer field: `{io['producer']}`; IR version {io['ir_version']}",
            f"- opset imports: {', '.join(f'{d} {v}' for d, v in io['opsets'].items())}"
            f" (requested {r['requested_opset']})",
            f"- size: {size} bytes; {io['n_nodes']} nodes, {io['n_initializers']} initializers",
            "- inputs:",
        ]
        lines += [f"  - `{v['name']}`: {v['dtype']} {v['shape']}" for v in io["inputs"]]
        lines += ["- outputs:"]
        lines += [f"  - `{v['name']}`: {v['dtype']} {v['shape']}" for v in io["outputs"]]
        lines += ["- checked against the framework:"]
        for c in r["checks"]:
            errs = ", ".join(
                f"out{o['output']} {tuple(o['shape'])} max|diff| {o['max_abs_err']:.1e}" for o in c["outputs"]
            )
            lines.append(f"  - {c['case']}: {errs}")
        lines += ["", f"Op histogram ({sum(hist.values())} nodes):", "", "| op_type | count |", "| --- | --- |"]
        lines += [f"| {k} | {v} |" for k, v in hist.items()]
        lines.append("")
    (OUT_DIR / "README.md").write_text("\n".join(lines))
    (OUT_DIR / "provenance.json").write_text(
        json.dumps(
            [
                {
                    **r,
                    "io": describe_io(OUT_DIR / r["file"]),
                    "op_histogram": op_histogram(OUT_DIR / r["file"]),
                    "size_bytes": (OUT_DIR / r["file"]).stat().st_size,
                }
                for r in results
            ],
            indent=2,
        )
        + "\n"
    )


ORDER = [
    "ocr_det_db_paddle.onnx",
    "ocr_rec_crnn_paddle.onnx",
    "bert_encoder_torch.onnx",
    "bert_encoder_torch_dynamo.onnx",
]


def _merge_with_previous(results: list[dict]) -> list[dict]:
    """Keep README entries of models not regenerated in this run (e.g. with --only)."""
    prov = OUT_DIR / "provenance.json"
    merged = {}
    if prov.exists():
        for r in json.loads(prov.read_text()):
            if (OUT_DIR / r["file"]).exists():
                merged[r["file"]] = {k: r[k] for k in ("file", "framework", "exporter", "requested_opset", "checks")}
    for r in results:
        merged[r["file"]] = r
    return sorted(merged.values(), key=lambda r: ORDER.index(r["file"]) if r["file"] in ORDER else 99)


def main(argv: list[str] | None = None) -> int:
    global PADDLE_OPSET
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="bert,bert_dynamo,det,rec", help="comma list of: bert, bert_dynamo, det, rec")
    ap.add_argument(
        "--paddle-opset",
        type=int,
        default=PADDLE_OPSET,
        help="opset for paddle2onnx (default 11, as PaddleOCR documents; 14 gives HardSwish)",
    )
    args = ap.parse_args(argv)
    PADDLE_OPSET = args.paddle_opset
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    results, failures = [], []
    for what in wanted:
        print(f"== {what}")
        try:
            if what == "bert":
                results.append(export_bert(dynamo=False))
            elif what == "bert_dynamo":
                results.append(export_bert(dynamo=True))
            elif what in ("det", "rec"):
                results.append(export_paddle(what))
            else:
                raise ValueError(f"unknown model {what!r}")
        except Exception as exc:
            import traceback

            traceback.print_exc()
            failures.append((what, exc))
            if what == "bert_dynamo":
                (OUT_DIR / "bert_encoder_torch_dynamo.onnx").unlink(missing_ok=True)
    if results:
        write_readme(_merge_with_previous(results))
    for what, exc in failures:
        print(f"FAILED {what}: {exc!r}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
