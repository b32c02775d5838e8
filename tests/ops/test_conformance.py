"""Every one of ONNX's 1,884 node conformance cases, end to end through ge_core.

The family test files run the cases of their own ops in detail; this file runs them all, including the
cases that mix families (expanded function bodies such as attention or LayerNorm), and checks that the
cases we deliberately do not run are *refused cleanly*: a GEError naming the node or the reason, never
a crash.
"""

from __future__ import annotations

import re

import pytest
from onnx.backend.test.case.test_case import TestCase

import ge_core
from ge_core.errors import GEError
from ge_core.ops import REGISTRY
from tests.ops.conformance import all_cases, run_case

# Deliberate refusals, each with the words the refusal must contain.
_EXOTIC = re.compile(r"FLOAT8|FLOAT4|INT4|UINT4|INT2|UINT2|E8M0")
REFUSED: list[tuple[str, re.Pattern[str], str]] = [
    ("opset below 9", re.compile(r"^test_(and|or|xor|not)_?(\d|bcast)"), "opset"),
    ("float8/int4/int2 data types", _EXOTIC, "not supported|must be one of"),
    ("training-mode Dropout and BatchNormalization", re.compile(r"training(?!_dropout_zero_ratio)"),
     "training mode"),
    ("sequence and optional inputs", re.compile(r"^test_identity_(sequence|opt)$"), "not a tensor"),
]
# Known numeric gaps, kept visible.
GAPS = {
    # bfloat16 results are held in float32 arrays (numpy has no bfloat16); values are right, container differs.
    "bfloat16 container": re.compile(r"BFLOAT16|bf16"),
    # Softmax in float32 then rounded to float16 differs by 2 ulps from data computed in float16.
    "float16 softmax rounding": re.compile(r"^test_attention_4d_causal_fp16_expanded$"),
}


def supported(case: TestCase) -> bool:
    return all(REGISTRY.get(n.op_type, n.domain) is not None for n in case.model.graph.node)


def expected_refusal(case: TestCase) -> str | None:
    for _, pattern, words in REFUSED:
        if pattern.search(case.name):
            return words
    return None


def gap(case: TestCase) -> str | None:
    return next((reason for reason, pattern in GAPS.items() if pattern.search(case.name)), None)


SUPPORTED = [c for c in all_cases() if supported(c)]
UNSUPPORTED = [c for c in all_cases() if not supported(c)]


@pytest.mark.parametrize("case", SUPPORTED, ids=lambda c: c.name)
def test_supported_case(case: TestCase) -> None:
    words = expected_refusal(case)
    if words is not None:
        with pytest.raises(GEError, match=words):
            run_case(case)
        return
    reason = gap(case)
    if reason is not None:
        pytest.xfail(reason)
    run_case(case)


@pytest.mark.parametrize("case", UNSUPPORTED, ids=lambda c: c.name)
def test_unsupported_case_is_refused_naming_the_operator(case: TestCase) -> None:
    try:
        result = ge_core.import_onnx(case.model)
    except GEError as err:  # refused before the op check: an opset we do not read
        assert "opset" in str(err)
        return
    missing = sorted({n.op_type for n in case.model.graph.node if REGISTRY.get(n.op_type, n.domain) is None})
    assert {op.split("::")[-1] for _, op in result.unsupported} == set(missing)
    message = str(result.error())
    assert all(f"'{op}'" in message or f"::{op}'" in message for op in missing)


def test_coverage_of_the_conformance_suite() -> None:
    """A floor, so that a regression in the registry shows up as a number."""
    passing = [c for c in SUPPORTED if expected_refusal(c) is None and gap(c) is None]
    assert len(all_cases()) >= 1800
    assert len(passing) >= 1000
