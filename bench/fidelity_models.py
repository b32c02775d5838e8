"""The architectures of bench_fidelity.py's published figures, with seeded random weights (nothing downloaded).

torchvision cannot be imported here, so its CNNs are written out as plain torch modules (the same layers,
channels and strides: ResNet-18/50/101 and Wide ResNet-50-2 as torchvision builds them, ResNet-50 with the
stride on the 3x3 conv as MLPerf's v1.5 is, VGG-16/19, MobileNet-v1, SqueezeNet 1.1); BERT-base is
transformers' BertModel from BERT-base's config; DenseNet-121 and GoogLeNet are onnx's light models (the
weights re-seeded as ge_core's samples are). Each builder returns ONNX bytes for `ge_core.load_onnx`.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import torch
from torch import nn

from ge_core.samples.registry import sample_bytes

OPSET = 17


def _conv_bn(cin: int, cout: int, k: int, stride: int = 1, groups: int = 1, relu: bool = True) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU()) if relu else nn.Sequential(*layers)


class Block(nn.Module):
    """ResNet's basic block (two 3x3) or bottleneck (1x1, 3x3 with the stride, 1x1 x4), torchvision's layout."""

    def __init__(self, cin: int, width: int, cout: int, stride: int, bottleneck: bool) -> None:
        super().__init__()
        if bottleneck:
            self.body = nn.Sequential(_conv_bn(cin, width, 1), _conv_bn(width, width, 3, stride),
                                      _conv_bn(width, cout, 1, relu=False))
        else:
            self.body = nn.Sequential(_conv_bn(cin, cout, 3, stride), _conv_bn(cout, cout, 3, relu=False))
        self.skip = _conv_bn(cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


class ResNet(nn.Module):
    def __init__(self, depths: tuple[int, ...], bottleneck: bool, width_factor: int = 1) -> None:
        super().__init__()
        layers: list[nn.Module] = [_conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for stage, blocks in enumerate(depths):
            planes = 64 * 2 ** stage
            cout = planes * 4 if bottleneck else planes
            for i in range(blocks):
                layers.append(Block(cin, planes * width_factor, cout, 2 if i == 0 and stage else 1, bottleneck))
                cin = cout
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


VGG_CONFIGS = {16: (2, 2, 3, 3, 3), 19: (2, 2, 4, 4, 4)}


class VGG(nn.Module):
    def __init__(self, depth: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for stage, convs in enumerate(VGG_CONFIGS[depth]):
            cout = min(64 * 2 ** stage, 512)
            for _ in range(convs):
                layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU()]
                cin = cout
            layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                                        nn.Linear(4096, 1000))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))


class MobileNetV1(nn.Module):
    """Howard et al. 2017: a 3x3 stem, then 13 depthwise 3x3 + pointwise 1x1 pairs, pooling, a classifier."""

    PLAN = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1),
            (512, 1), (1024, 2), (1024, 1))

    def __init__(self) -> None:
        super().__init__()
        layers: list[nn.Module] = [_conv_bn(3, 32, 3, 2)]
        cin = 32
        for cout, stride in self.PLAN:
            layers += [_conv_bn(cin, cin, 3, stride, groups=cin), _conv_bn(cin, cout, 1)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(1024, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class Fire(nn.Module):
    def __init__(self, cin: int, squeeze: int, expand: int) -> None:
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU())
        self.e1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.squeeze(x)
        return torch.cat([self.e1(s), self.e3(s)], 1)


class SqueezeNet11(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        pool = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.features = nn.Sequential(nn.Conv2d(3, 64, 3, 2), nn.ReLU(), pool, Fire(64, 16, 64), Fire(128, 16, 64),
                                      pool, Fire(128, 32, 128), Fire(256, 32, 128), pool, Fire(256, 48, 192),
                                      Fire(384, 48, 192), Fire(384, 64, 256), Fire(512, 64, 256))
        self.classifier = nn.Sequential(nn.Conv2d(512, 1000, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(self.classifier(self.features(x)), 1)


class Bert(nn.Module):
    """transformers' BertModel with BERT-base's config (12 layers, hidden 768, 12 heads, FFN 3072)."""

    def __init__(self) -> None:
        super().__init__()
        import transformers  # only for the BERT rows

        config = transformers.BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                                         num_attention_heads=12, intermediate_size=3072)
        self.bert = transformers.BertModel(config, add_pooling_layer=False)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        return self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state


def _export(module: nn.Module, args: tuple[torch.Tensor, ...], names: list[str]) -> bytes:
    buffer = io.BytesIO()
    torch.onnx.export(module.eval(), args, buffer, input_names=names, opset_version=OPSET, dynamo=False)
    return buffer.getvalue()


def _image(module: Callable[[], nn.Module], size: int = 224) -> Callable[[int], bytes]:
    def build(batch: int) -> bytes:
        torch.manual_seed(0)
        return _export(module(), (torch.randn(batch, 3, size, size),), ["image"])
    return build


def bert(seq: int) -> Callable[[int], bytes]:
    def build(batch: int) -> bytes:
        torch.manual_seed(0)
        ids = torch.zeros(batch, seq, dtype=torch.long)
        return _export(Bert(), (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                       ["input_ids", "attention_mask", "token_type_ids"])
    return build


def light(name: str) -> Callable[[int], bytes]:
    """An onnx light model (batch 1 only: its input shape is fixed in the file)."""
    def build(batch: int) -> bytes:
        assert batch == 1, f"{name}: the light model's input is batch 1"
        return sample_bytes(name)
    return build


BUILDERS: dict[str, Callable[[int], bytes]] = {
    "resnet18": _image(lambda: ResNet((2, 2, 2, 2), bottleneck=False)),
    "resnet50": _image(lambda: ResNet((3, 4, 6, 3), bottleneck=True)),
    "resnet101": _image(lambda: ResNet((3, 4, 23, 3), bottleneck=True)),
    "wide_resnet50_2": _image(lambda: ResNet((3, 4, 6, 3), bottleneck=True, width_factor=2)),
    "vgg16": _image(lambda: VGG(16)),
    "vgg19": _image(lambda: VGG(19)),
    "mobilenet_v1": _image(MobileNetV1),
    "squeezenet1_1": _image(SqueezeNet11),
    "densenet121": light("densenet121"),
    "googlenet": light("inception_v1"),
    "bert_base_seq128": bert(128),
    "bert_base_seq384": bert(384),
    "bert_base_seq512": bert(512),
}
