"""Every one of ONNX's 1,884 node conformance cases, end to end through ge_core.

The family test files run the cases of their own ops in detail; this file runs them all, including the
cases that mix families (expanded function bodies such as attention or LayerNorm), and checks that the
cases we deliberately do not run are *refused cleanly*: a GEError naming the node or the reason, never
a crash.

Every supported case is one of: refused on purpose (REFUSED), a known gap (GAPS: it runs, marked
xfail(strict=True), so a fix shows as XPASS and fails until the gap is removed here), or listed in
conformance_passing.txt and must pass. A case in none of these (a new ONNX release, a newly registered
op) fails with a note saying where it belongs; after a change that makes cases pass, regenerate the list
with `python3 -m tests.ops.update_conformance_list` and review its diff.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from onnx.backend.test.case.test_case import TestCase

import ge_core
from ge_core.errors import GEError
from ge_core.ops import REGISTRY
from tests.ops.conformance import all_cases, run_case

# Deliberate refusals, each with the words the refusal must contain.
_EXOTIC = re.compile(r"FLOAT8|FLOAT4|INT4|UINT4|INT2|UINT2|E8M0")
REFUSED: list[tuple[str, re.Pattern[str], str]] = [
    ("float8/int4/int2 data types", _EXOTIC, "not supported|must be one of"),
    ("training-mode Dropout and BatchNormalization", re.compile(r"training(?!_dropout_zero_ratio)"),
     "training mode"),
    ("sequence and optional inputs", re.compile(r"^test_identity_(sequence|opt)$"), "not a tensor"),
]
# bfloat16 results are held in float32 arrays (numpy has no bfloat16); values are right, container differs.
# (Cases that only read bfloat16, or take the container from a fed bfloat16 array, pass and are not here.)
_BF16_CONTAINER = "bfloat16 results are held in float32 arrays, the case expects an ml_dtypes bfloat16 array"
# Known numeric gaps, kept visible: they run as xfail(strict=True), so a fix fails until it is removed here.
GAPS: dict[str, str] = {
    **dict.fromkeys([
        "test_attention_3d_causal_bf16_expanded",
        "test_attention_4d_attn_mask_causal_bf16_expanded",
        "test_attention_4d_causal_bf16_expanded",
        "test_attention_4d_causal_padded_kv_bf16_expanded",
        "test_attention_4d_padded_kv_bf16_expanded",
        "test_cast_FLOAT_to_BFLOAT16",
        "test_castlike_FLOAT_to_BFLOAT16_expanded",
    ], _BF16_CONTAINER),
    # 2 of 192 values 1 fp16 ulp off (rtol 1.2e-3 > 1e-3): Softmax in float32 then rounded to float16
    # differs from the case's data, computed in float16.
    "test_attention_4d_causal_fp16_expanded": "float16 softmax rounding",
}
PASSING_LIST = Path(__file__).with_name("conformance_passing.txt")
UPDATE = "python3 -m tests.ops.update_conformance_list"


def supported(case: TestCase) -> bool:
    return all(REGISTRY.get(n.op_type, n.domain) is not None for n in case.model.graph.node)


def expected_refusal(case: TestCase) -> str | None:
    for _, pattern, words in REFUSED:
        if pattern.search(case.name):
            return words
    return None


def gap(case: TestCase) -> str | None:
    return GAPS.get(case.name)


def listed_passing() -> list[str]:
    """conformance_passing.txt: one case name a line, sorted ('#' starts a comment); none if it is missing."""
    if not PASSING_LIST.exists():
        return []
    lines = (line.split("#", 1)[0].strip() for line in PASSING_LIST.read_text().splitlines())
    return [line for line in lines if line]


SUPPORTED = [c for c in all_cases() if supported(c)]
UNSUPPORTED = [c for c in all_cases() if not supported(c)]
RUNS = [c for c in SUPPORTED if expected_refusal(c) is None and gap(c) is None]  # each must pass
LISTED = set(listed_passing())


def _param(case: TestCase) -> object:
    reason = gap(case)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason and expected_refusal(case) is None else []
    return pytest.param(case, marks=marks, id=case.name)


@pytest.mark.parametrize("case", [_param(c) for c in SUPPORTED])
def test_supported_case(case: TestCase) -> None:
    words = expected_refusal(case)
    if words is not None:
        with pytest.raises(GEError, match=words):
            run_case(case)
        return
    if gap(case) is not None or case.name in LISTED:
        run_case(case)
        return
    try:  # neither a known gap nor listed: a new case
        run_case(case)
    except Exception as err:
        err.add_note(f"{case.name} is new here: fix it, or add it to GAPS in {Path(__file__).name} with a reason")
        raise
    pytest.fail(f"{case.name} passes but is not in {PASSING_LIST.name}: run `{UPDATE}` and commit the list")


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


def where_it_went(name: str) -> str:
    """Why a listed case no longer runs as a must-pass case."""
    case = next((c for c in all_cases() if c.name == name), None)
    if case is None:
        return "no longer an ONNX conformance case"
    if not supported(case):
        missing = sorted({n.op_type for n in case.model.graph.node if REGISTRY.get(n.op_type, n.domain) is None})
        return f"now unsupported (no registry entry for {missing})"
    if expected_refusal(case) is not None:
        return "now matches a REFUSED pattern"
    return f"now listed in GAPS ({gap(case)})"


def test_the_passing_list_is_exact() -> None:
    """conformance_passing.txt names exactly the cases that run as must-pass (each its own test above), so
    a case that passed cannot drift into 'unsupported', 'refused' or 'gap' unnoticed."""
    names = listed_passing()
    assert names == sorted(set(names)), f"{PASSING_LIST.name} must be sorted, without repeats: run `{UPDATE}`"
    runs = {c.name for c in RUNS}
    moved = {name: where_it_went(name) for name in sorted(LISTED - runs)}
    assert moved == {}, f"cases listed as passing no longer run as must-pass cases: {moved}"
    new = sorted(runs - LISTED)
    assert new == [], (f"{len(new)} case(s) run but are not in {PASSING_LIST.name} (their own tests say whether "
                       f"they pass: then run `{UPDATE}`; if not, fix them or add them to GAPS): {new}")


def test_known_gaps_and_refusals_name_real_cases() -> None:
    names = {c.name for c in SUPPORTED}
    assert sorted(set(GAPS) - names) == [], "GAPS names cases that are not supported conformance cases"
    assert [n for n in GAPS if expected_refusal(next(c for c in SUPPORTED if c.name == n))] == []
    for reason, pattern, _ in REFUSED:
        assert any(pattern.search(n) for n in names), f"the REFUSED pattern for {reason} matches no case"


def test_coverage_of_the_conformance_suite() -> None:
    """The suite is all there, and the number of must-pass cases is the list's (reported with -rP)."""
    assert len(all_cases()) >= 1800
    print(f"conformance: {len(all_cases())} cases, {len(RUNS)} must pass ({PASSING_LIST.name}: {len(LISTED)}), "
          f"{len(GAPS)} known gaps (strict xfail), {len(SUPPORTED) - len(RUNS) - len(GAPS)} refused on purpose, "
          f"{len(UNSUPPORTED)} unsupported")
    assert len(RUNS) == len(LISTED)
