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

This script is only the command line; the models, exports and checks live in the ``exporters``
package next to it (``sample_models/exporters/``: ``paddle_ocr``, ``torch_bert``, ``verify``,
``provenance``).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
warnings.filterwarnings("ignore")
if str(Path(__file__).resolve().parent) not in sys.path:  # e.g. under `python -m`: find `exporters`
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from exporters.config import OUT_DIR, PADDLE_OPSET  # noqa: E402
from exporters.provenance import merge_with_previous, write_readme  # noqa: E402

MODELS = ("bert", "bert_dynamo", "det", "rec")


def export(what: str, paddle_opset: int) -> dict[str, Any]:
    """Export and check one model; torch or paddle is imported only for the models that need it."""
    if what in ("bert", "bert_dynamo"):
        from exporters.torch_bert import export_bert

        return export_bert(dynamo=what == "bert_dynamo")
    if what in ("det", "rec"):
        from exporters.paddle_ocr import export_paddle

        return export_paddle(what, paddle_opset)
    raise ValueError(f"unknown model {what!r}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(MODELS), help="comma list of: bert, bert_dynamo, det, rec")
    ap.add_argument(
        "--paddle-opset",
        type=int,
        default=PADDLE_OPSET,
        help="opset for paddle2onnx (default 11, as PaddleOCR documents; 14 gives HardSwish)",
    )
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    results, failures = [], []
    for what in wanted:
        print(f"== {what}")
        try:
            results.append(export(what, args.paddle_opset))
        except Exception as exc:
            traceback.print_exc()
            failures.append((what, exc))
            if what == "bert_dynamo":
                (OUT_DIR / "bert_encoder_torch_dynamo.onnx").unlink(missing_ok=True)
    if results:
        write_readme(merge_with_previous(results))
    for what, exc in failures:
        print(f"FAILED {what}: {exc!r}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
