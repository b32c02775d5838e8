"""Models written for ai.onnx opsets below the ones GE Workbench reads are converted, not refused.

`onnx.version_converter` rewrites a model op by op to a later opset (Softmax's axis semantics, Upsample ->
Resize, the old broadcast attributes...). A model it cannot convert is refused naming the op that blocks
it, with the converter's own words.
"""

from __future__ import annotations

import re

import onnx
from onnx import version_converter

from ge_core.errors import ModelError, quote

MIN_OPSET = 9  # the oldest ai.onnx opset the op registry implements directly
UPGRADE_TO = 13  # old models are converted to this opset: every op of theirs has an adapter up to it


def ai_onnx_version(model: onnx.ModelProto) -> int | None:
    versions = [int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if versions else None


def upgrade_old_opset(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str | None]:
    """`model` unchanged when its opset is recent enough, else converted to UPGRADE_TO, with a note saying so."""
    version = ai_onnx_version(model)
    if version is None or version >= MIN_OPSET:
        return model, None
    refuse = (f"model uses ai.onnx opset {version}, older than GE Workbench reads ({MIN_OPSET}+), and "
              f"onnx.version_converter cannot convert it to opset {UPGRADE_TO}")
    gone = sorted({(n.op_type, n.name) for n in model.graph.node
                   if n.domain in ("", "ai.onnx") and not onnx.defs.has(n.op_type)})
    if gone:  # experimental ops of the first opsets (Affine, Crop, ImageScaler...) have no schema any more
        ops = ", ".join(f"{quote(op)} (node {quote(name)})" for op, name in gone[:5])
        raise ModelError(f"{refuse}: {ops} is not an ONNX operator any more.",
                         hint="Re-export the model at a recent opset, or replace that op.")
    try:
        converted = version_converter.convert_version(model, UPGRADE_TO)
    except Exception as exc:  # the converter's C++ assertions surface as RuntimeError
        raise ModelError(f"{refuse}: {_blocking(exc, model)}.",
                         hint="Re-export the model at a recent opset, or replace the op named above.") from None
    return converted, f"converted from ai.onnx opset {version} to {UPGRADE_TO} with onnx.version_converter"


def _blocking(exc: Exception, model: onnx.ModelProto) -> str:
    """The converter's reason without its source-file prefix, led by the op it concerns when it names one
    (`adapt_scan_8_9: ...` or `... for BatchNormalization`)."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    named = re.search(r"adapt_([a-z]+)_\d+_\d+", text) or re.search(r"\bfor ([A-Z][A-Za-z0-9]+)", text)
    reason = re.sub(r"^.*?failed:\s*", "", text)
    if named is None:
        return reason
    ops = {n.op_type.lower(): n.op_type for n in model.graph.node}
    op = ops.get(named.group(1).lower(), named.group(1))
    return f"op {quote(op)}: {reason}"
