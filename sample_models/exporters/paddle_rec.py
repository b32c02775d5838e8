"""A CRNN/SVTR-like text recogniser in PaddlePaddle: conv backbone with (2,1)-stride pools, an SVTR-like
neck of two transformer blocks, Im2Seq and a CTC head."""

from __future__ import annotations

import paddle
import paddle.nn.functional as F
from paddle import nn

from .paddle_blocks import ConvBNLayer, ResidualUnit


class Attention(nn.Layer):
    def __init__(self, dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.dim = dim

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        qkv = self.qkv(x).reshape((0, -1, 3, self.num_heads, self.head_dim)).transpose((2, 0, 3, 1, 4))
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = F.softmax(q.matmul(k.transpose((0, 1, 3, 2))), axis=-1)
        x = attn.matmul(v).transpose((0, 2, 1, 3)).reshape((0, -1, self.dim))
        return self.proj(x)


class Mlp(nn.Layer):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Layer):
    def __init__(self, dim: int, num_heads: int, mlp_ratio: float = 2.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mixer = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
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

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = self.pool1(self.block1(self.conv1(x)))
        x = self.pool2(self.block3(self.conv2(self.block2(x))))
        return self.pool3(self.conv3(x))


class Im2Seq(nn.Layer):
    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = x.squeeze(axis=2)  # [B, C, W]
        return x.transpose([0, 2, 1])  # [B, W, C]


class SVTRNeck(nn.Layer):
    def __init__(self, cin: int = 64, dim: int = 64, depth: int = 2, num_heads: int = 4):
        super().__init__()
        self.conv1 = ConvBNLayer(cin, dim, 1, act="hardswish")
        self.blocks = nn.LayerList([Block(dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, epsilon=1e-6)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = self.conv1(x)  # [B, C, 1, W]
        _, c, h, w = x.shape
        z = x.flatten(2).transpose([0, 2, 1])  # [B, W, C]
        for blk in self.blocks:
            z = blk(z)
        z = self.norm(z)
        return z.reshape([-1, h, w, c]).transpose([0, 3, 1, 2])


class CTCHead(nn.Layer):
    def __init__(self, cin: int, n_classes: int):
        super().__init__()
        self.fc = nn.Linear(cin, n_classes)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.softmax(self.fc(x), axis=2)


class CRNN(nn.Layer):
    def __init__(self, n_classes: int = 97):
        super().__init__()
        self.backbone = RecBackbone()
        self.neck = SVTRNeck()
        self.seq = Im2Seq()
        self.head = CTCHead(64, n_classes)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.head(self.seq(self.neck(self.backbone(x))))
