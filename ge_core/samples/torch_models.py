"""The PyTorch samples, built in code with seeded random weights (nothing downloaded).

Each factory returns (module in eval mode, example inputs), the form `python -m ge_core inspect
model.py:factory` takes. This module imports torch (and `torch_bert` transformers): the registry
imports it only when a torch sample is asked for.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

TorchSample = tuple[nn.Module, tuple[torch.Tensor, ...]]


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 Conv-BN, a 1x1 strided projection when the shape changes, then ReLU."""

    def __init__(self, channels_in: int, channels_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.downsample: nn.Module = nn.Identity()
        if stride != 1 or channels_in != channels_out:
            self.downsample = nn.Sequential(nn.Conv2d(channels_in, channels_out, 1, stride, bias=False),
                                            nn.BatchNorm2d(channels_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.downsample(x))


class ResNetStyle(nn.Module):
    """A small ResNet: stem Conv-BN-ReLU-MaxPool, two stages of basic blocks, global pooling, a classifier."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.MaxPool2d(2))
        self.layer1 = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 16, 1))
        self.layer2 = nn.Sequential(BasicBlock(16, 32, 2), BasicBlock(32, 32, 1))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(features), 1))


class LSTMTagger(nn.Module):
    """A part-of-speech style tagger: Embedding, a two-layer LSTM, a Linear per token, log-softmax."""

    def __init__(self, vocab: int = 100, embed: int = 16, hidden: int = 32, tags: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=2, batch_first=True)
        self.tag = nn.Linear(hidden, tags)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.tag(self.lstm(self.embed(ids))[0]), dim=-1)


def _with_batch_norm_statistics(module: nn.Module) -> nn.Module:
    """Seeded running statistics that are not the identity, so BatchNorm folding changes real numbers."""
    with torch.no_grad():
        for name, buffer in module.named_buffers():
            if name.endswith("running_mean"):
                buffer.uniform_(-0.5, 0.5)
            elif name.endswith("running_var"):
                buffer.uniform_(0.5, 2.0)
    return module.eval()


def torch_resnet() -> TorchSample:
    torch.manual_seed(0)
    return _with_batch_norm_statistics(ResNetStyle()), (torch.randn(1, 3, 32, 32),)


def torch_bert() -> TorchSample:
    """transformers' BertForSequenceClassification from a small BertConfig (2 layers, hidden 32)."""
    import transformers  # optional: this sample is listed only when it is installed

    torch.manual_seed(1)
    config = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=64, max_position_embeddings=32)
    config.num_labels = 3  # a PretrainedConfig field: set after construction, as its stubs allow
    ids = torch.randint(0, 100, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.long)
    mask[0, 12:] = 0  # four padding tokens: the attention mask matters
    return transformers.BertForSequenceClassification(config).eval(), (ids, mask)


def torch_lstm_tagger() -> TorchSample:
    torch.manual_seed(2)
    return LSTMTagger().eval(), (torch.randint(0, 100, (1, 12)),)


FACTORIES: dict[str, Callable[[], TorchSample]] = {
    "torch_resnet": torch_resnet, "torch_bert": torch_bert, "torch_lstm_tagger": torch_lstm_tagger,
}
