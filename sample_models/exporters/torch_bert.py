"""BERT encoder: a small transformers ``BertModel`` exported with torch.onnx (TorchScript and dynamo)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from .config import BERT_OPSET, DYNAMO_OPSET, OUT_DIR, SEED, version
from .verify import compare, ort_run

BERT_CFG = dict(
    vocab_size=1000,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=128,
    max_position_embeddings=128,
    type_vocab_size=2,
)
BERT_CASES = [(1, 7, False), (2, 16, True)]  # (batch, sequence, padded mask) checked with onnxruntime
INPUT_NAMES = ["input_ids", "attention_mask", "token_type_ids"]
OUTPUT_NAMES = ["last_hidden_state", "pooler_output"]


def build_bert() -> tuple[torch.nn.Module, str]:
    """The model in eval mode with seeded random weights, and a description of its implementation."""
    torch.manual_seed(SEED)
    model: torch.nn.Module
    try:
        from transformers import BertConfig, BertModel

        cfg = BertConfig(**BERT_CFG, hidden_act="gelu", attn_implementation="eager")
        model = BertModel(cfg, add_pooling_layer=True)
        impl = f"transformers {version('transformers')} BertModel (eager attention), torch {torch.__version__}"
    except Exception as exc:  # pragma: no cover - fallback when transformers is unavailable
        print(f"transformers unavailable ({exc!r}); using the plain torch.nn BERT mirror")
        from .torch_bert_mirror import TorchBert

        model = TorchBert(**BERT_CFG)
        impl = "plain torch.nn mirror of BertModel"
    _randomise(model)
    model.eval()
    return model, impl


def _randomise(model: torch.nn.Module) -> None:
    """Non-trivial random weights: HF init leaves LayerNorm at (1, 0) and biases at 0."""
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


class BertWrapper(torch.nn.Module):
    """Wrap BertModel so that export sees positional (input_ids, attention_mask, token_type_ids)
    and a plain (last_hidden_state, pooler_output) tuple."""

    # The dynamo exporter writes this class's module and qualified name into every node's metadata
    # (`namespace`, `pkg.torch.onnx.class_hierarchy`). These are the names the wrapper had when it was
    # defined inside the single-file script; they keep bert_encoder_torch_dynamo.onnx byte-identical.
    __module__ = "__main__"
    __qualname__ = "_BertWrapper.make.<locals>.Wrapper"

    def __init__(self, m: torch.nn.Module):
        super().__init__()
        self.m = m

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        if isinstance(out, tuple):
            return out[0], out[1]
        return out.last_hidden_state, out.pooler_output


def _strip_stack_traces(path: Path) -> None:
    """Drop the dynamo exporter's per-node ``pkg.torch.onnx.stack_trace`` metadata.

    It holds absolute paths of this machine and line numbers of the exporter scripts, so it changes with
    every edit; everything else (graph, names, other metadata) is kept as the exporter wrote it.
    """
    import onnx

    model = onnx.load(str(path))
    for node in model.graph.node:
        keep = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(keep)
    onnx.save(model, str(path))


def bert_inputs(batch: int, seq: int, seed: int, pad: bool) -> dict[str, np.ndarray]:
    """Seeded token ids, a mask (padded at the end of some rows when `pad`) and two token types."""
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


def _export_dynamo(wrapper: torch.nn.Module, args: tuple[torch.Tensor, ...], path: Path) -> tuple[int, str]:
    batch = torch.export.Dim("batch", min=1, max=64)
    seq = torch.export.Dim("sequence", min=2, max=BERT_CFG["max_position_embeddings"])
    dyn = {k: {0: batch, 1: seq} for k in INPUT_NAMES}
    prog = torch.onnx.export(
        wrapper,
        args,
        dynamo=True,
        input_names=INPUT_NAMES,
        output_names=OUTPUT_NAMES,
        opset_version=DYNAMO_OPSET,
        dynamic_shapes=dyn,
        external_data=False,
    )
    prog.save(str(path), external_data=False)
    _strip_stack_traces(path)
    exporter = (
        f"torch.onnx.export(dynamo=True) torch {torch.__version__}, onnxscript {version('onnxscript')}"
        " (node metadata pkg.torch.onnx.stack_trace stripped)"
    )
    return DYNAMO_OPSET, exporter


def _export_torchscript(wrapper: torch.nn.Module, args: tuple[torch.Tensor, ...], path: Path) -> tuple[int, str]:
    dyn_axes = {k: {0: "batch", 1: "sequence"} for k in INPUT_NAMES}
    dyn_axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    dyn_axes["pooler_output"] = {0: "batch"}
    torch.onnx.export(
        wrapper,
        args,
        str(path),
        dynamo=False,
        input_names=INPUT_NAMES,
        output_names=OUTPUT_NAMES,
        dynamic_axes=dyn_axes,
        opset_version=BERT_OPSET,
        do_constant_folding=True,
    )
    return BERT_OPSET, f"torch.onnx.export(dynamo=False, TorchScript) torch {torch.__version__}"


def _check(wrapper: torch.nn.Module, path: Path, batch: int, seq: int, pad: bool) -> dict[str, Any]:
    """Compare the ONNX file under onnxruntime with the torch model on one (batch, sequence) case."""
    feeds = bert_inputs(batch, seq, SEED + batch * 100 + seq, pad)
    with torch.no_grad():
        ref = [t.numpy() for t in wrapper(*(torch.from_numpy(feeds[k]) for k in INPUT_NAMES))]
    got = ort_run(path, feeds)
    desc = f"batch={batch} seq={seq}" + (" (padded mask)" if pad else "")
    return compare(path.name, desc, ref, got)


def export_bert(dynamo: bool) -> dict[str, Any]:
    """Export with the dynamo (True) or TorchScript (False) exporter, check it, return its provenance."""
    model, impl = build_bert()
    wrapper = BertWrapper(model).eval()
    name = "bert_encoder_torch_dynamo.onnx" if dynamo else "bert_encoder_torch.onnx"
    path = OUT_DIR / name
    example = bert_inputs(2, 16, SEED, pad=True)
    args = tuple(torch.from_numpy(example[k]) for k in INPUT_NAMES)
    opset, exporter = (_export_dynamo if dynamo else _export_torchscript)(wrapper, args, path)
    checks = [_check(wrapper, path, batch, seq, pad) for batch, seq, pad in BERT_CASES]
    return {"file": name, "framework": impl, "exporter": exporter, "requested_opset": opset, "checks": checks}
