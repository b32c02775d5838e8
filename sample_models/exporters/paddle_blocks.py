"""PaddleOCR-style building blocks shared by the OCR detector and recogniser (MobileNetV3 parts)."""

from __future__ import annotations

import paddle
import paddle.nn.functional as F
from paddle import nn


class ConvBNLayer(nn.Layer):
    def __init__(
        self,
        cin: int,
        cout: int,
        k: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        groups: int = 1,
        act: str | None = None,
    ):
        super().__init__()
        pad = (k - 1) // 2 if isinstance(k, int) else tuple((kk - 1) // 2 for kk in k)
        self.conv = nn.Conv2D(cin, cout, k, stride=stride, padding=pad, groups=groups, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)
        self.act = act

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = self.bn(self.conv(x))
        if self.act == "hardswish":
            x = F.hardswish(x)
        elif self.act == "relu":
            x = F.relu(x)
        return x


class SEModule(nn.Layer):
    def __init__(self, c: int, reduction: int = 4):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.conv1 = nn.Conv2D(c, c // reduction, 1)
        self.conv2 = nn.Conv2D(c // reduction, c, 1)

    def forward(self, inputs: paddle.Tensor) -> paddle.Tensor:
        x = self.avg_pool(inputs)
        x = F.relu(self.conv1(x))
        x = F.hardsigmoid(self.conv2(x), slope=0.2, offset=0.5)
        return inputs * x


class ResidualUnit(nn.Layer):
    """MobileNetV3 bneck: expand 1x1, depthwise kxk, optional SE, project 1x1."""

    def __init__(self, cin: int, cmid: int, cout: int, k: int, stride: int, use_se: bool, act: str | None):
        super().__init__()
        self.if_shortcut = stride == 1 and cin == cout
        self.expand_conv = ConvBNLayer(cin, cmid, 1, act=act)
        self.bottleneck_conv = ConvBNLayer(cmid, cmid, k, stride=stride, groups=cmid, act=act)
        self.mid_se = SEModule(cmid) if use_se else None
        self.linear_conv = ConvBNLayer(cmid, cout, 1, act=None)

    def forward(self, inputs: paddle.Tensor) -> paddle.Tensor:
        x = self.bottleneck_conv(self.expand_conv(inputs))
        if self.mid_se is not None:
            x = self.mid_se(x)
        x = self.linear_conv(x)
        if self.if_shortcut:
            x = paddle.add(inputs, x)
        return x
