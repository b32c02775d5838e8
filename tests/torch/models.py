"""PyTorch models the torch tests convert, compile and compare with eager (seeded random weights).

Each factory returns (module in eval mode, example inputs). Kept small so the whole torch suite runs in
well under a minute: export costs about a second a model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
from torch import nn

import ge_core
from ge_core.ir.graph import Graph

Sample = tuple[nn.Module, tuple[torch.Tensor, ...]]


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.body(x), dim=-1)


class SmallCNN(nn.Module):
    """Conv/BN/ReLU blocks with a residual, pooling, interpolation, and a Linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=2), nn.BatchNorm2d(8))
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(2)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = self.stem(x)
        y = torch.relu(y + self.block(y))
        small = self.avg(self.pool(y))
        up = nn.functional.interpolate(small, scale_factor=2, mode="nearest")
        return self.head(y), nn.functional.interpolate(up, size=(6, 6), mode="bilinear", align_corners=False)


class TransformerBlock(nn.Module):
    """Embedding + a pre-norm block: MultiheadAttention, LayerNorm, a GELU MLP; causal SDPA on top."""

    def __init__(self, vocab: int = 50, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim))
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.norm2(x))
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.transpose(1, 2).reshape(batch, seq, dim)


class Tagger(nn.Module):
    """An LSTM (or GRU) sequence tagger: Embedding -> recurrent layer -> Linear per token."""

    def __init__(self, cell: type[nn.LSTM] | type[nn.GRU] = nn.LSTM) -> None:
        super().__init__()
        self.embed = nn.Embedding(30, 8)
        self.rnn = cell(8, 12, batch_first=True)
        self.tag = nn.Linear(12, 5)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.tag(self.rnn(self.embed(ids))[0])


def _seeded(build: Callable[[], nn.Module], *inputs: torch.Tensor) -> Sample:
    module = build().eval()
    with torch.no_grad():  # BatchNorm statistics that are not the identity
        for name, buffer in module.named_buffers():
            if name.endswith("running_mean"):
                buffer.uniform_(-0.5, 0.5)
            elif name.endswith("running_var"):
                buffer.uniform_(0.5, 2.0)
    return module, inputs


def mlp() -> Sample:
    torch.manual_seed(0)
    return _seeded(MLP, torch.randn(4, 8))


def cnn() -> Sample:
    torch.manual_seed(1)
    return _seeded(SmallCNN, torch.randn(2, 3, 12, 12))


def transformer() -> Sample:
    torch.manual_seed(2)
    return _seeded(TransformerBlock, torch.randint(0, 50, (2, 7)))


def lstm_tagger() -> Sample:
    torch.manual_seed(3)
    return _seeded(lambda: Tagger(nn.LSTM), torch.randint(0, 30, (2, 6)))


def gru_tagger() -> Sample:
    torch.manual_seed(4)
    return _seeded(lambda: Tagger(nn.GRU), torch.randint(0, 30, (2, 6)))


SAMPLES: dict[str, Callable[[], Sample]] = {
    "mlp": mlp, "cnn": cnn, "transformer": transformer, "lstm": lstm_tagger, "gru": gru_tagger,
}


@functools.cache
def converted(name: str) -> tuple[nn.Module, tuple[torch.Tensor, ...], Graph]:
    """A sample and its GE Graph, exported once per test run (export is the slow part); tests must not
    edit the graph (compile copies it)."""
    module, inputs = SAMPLES[name]()
    return module, inputs, ge_core.from_torch(module, inputs)
