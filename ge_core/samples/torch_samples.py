"""The `torch` kind of sample: PyTorch modules built in code (torch_models.py), converted by from_torch.

They are listed only when PyTorch is importable (`torch_bert` also needs transformers); listing them
imports neither. `torch_sample_graph(name)` is the from_torch graph itself; `torch_sample_bytes(name)` is
that graph written as ONNX (ge_core.frontend.onnx_export), so every user of `sample_bytes` (the web page,
the sweep, Compare) takes a torch sample like any other: the node names and graph.metadata
["torch_modules"] (module path -> class) survive the trip. Both are cached per process: an export costs
seconds.
"""

from __future__ import annotations

import functools
import importlib.util

from ge_core.frontend.onnx_export import to_onnx
from ge_core.frontend.torch import from_torch, require_torch
from ge_core.ir.graph import Graph

# name -> (title, description, the packages it needs)
TORCH_SAMPLES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "torch_resnet": (
        "PyTorch: ResNet-style CNN (from_torch)",
        "A small ResNet written as a torch.nn.Module (seeded random weights): a Conv-BN-ReLU stem, two stages "
        "of basic blocks, one with a strided 1x1 projection skip, global pooling and a Linear head. Captured "
        "by torch.export, no ONNX file: node names follow the module tree (layer2.0.downsample).", ("torch",)),
    "torch_bert": (
        "PyTorch: small BERT from a transformers BertConfig (from_torch)",
        "transformers' BertForSequenceClassification from a small BertConfig (2 layers, hidden 32, 4 heads; "
        "seeded random weights, nothing downloaded), with a padded attention mask. LayerNorm, GELU and "
        "attention reach GE whole (scaled_dot_product_attention -> Attention).", ("torch", "transformers")),
    "torch_lstm_tagger": (
        "PyTorch: LSTM tagger (from_torch)",
        "A sequence tagger as a torch.nn.Module (seeded random weights): Embedding, a two-layer LSTM (one GE "
        "LSTM per layer), a Linear per token and log-softmax.", ("torch",)),
}


def available_torch_samples() -> dict[str, tuple[str, str]]:
    """The torch samples whose packages are installed here: name -> (title, description)."""
    return {name: (title, description) for name, (title, description, needs) in TORCH_SAMPLES.items()
            if all(importlib.util.find_spec(package) is not None for package in needs)}


@functools.lru_cache(maxsize=len(TORCH_SAMPLES))
def torch_sample_graph(name: str) -> Graph:
    """The sample's module through ge_core.from_torch (cached: do not edit it; compile copies it)."""
    require_torch()
    from ge_core.samples.torch_models import FACTORIES  # imports torch, an optional package

    module, inputs = FACTORIES[name]()
    return from_torch(module, inputs)


@functools.lru_cache(maxsize=len(TORCH_SAMPLES))
def torch_sample_bytes(name: str) -> bytes:
    """The sample's from_torch graph written as ONNX bytes."""
    return to_onnx(torch_sample_graph(name)).SerializeToString()
