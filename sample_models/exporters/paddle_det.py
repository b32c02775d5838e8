"""A DBNet-like text detector in PaddlePaddle: MobileNetV3-small-like backbone, DBFPN neck, DB head."""

from __future__ import annotations

import paddle
import paddle.nn.functional as F
from paddle import nn

from .paddle_blocks import ConvBNLayer, ResidualUnit


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
        self.out_channels: list[int] = []
        cin = 16
        blocks: list[nn.Layer] = []
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

    def forward(self, x: paddle.Tensor) -> list[paddle.Tensor]:
        x = self.conv(x)
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs


class DBFPN(nn.Layer):
    def __init__(self, in_channels: list[int], out_channels: int = 48):
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

    def forward(self, x: list[paddle.Tensor]) -> paddle.Tensor:
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
    def __init__(self, cin: int, k: int = 50):
        super().__init__()
        self.k = k
        self.conv1 = ConvBNLayer(cin, cin // 4, 3, act="relu")
        self.conv2 = nn.Conv2DTranspose(cin // 4, cin // 4, 2, stride=2)
        self.conv_bn2 = nn.BatchNorm2D(cin // 4)
        self.conv3 = nn.Conv2DTranspose(cin // 4, 1, 2, stride=2)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = self.conv1(x)
        x = F.relu(self.conv_bn2(self.conv2(x)))
        return F.sigmoid(self.conv3(x))


class DBNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.backbone = MobileNetV3Small()
        self.neck = DBFPN(self.backbone.out_channels)
        self.head = DBHead(self.neck.out_channels)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.head(self.neck(self.backbone(x)))
