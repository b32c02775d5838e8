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
from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from onnx.backend.test.case.test_case import TestCase

import ge_core
from ge_core.errors import GEError
from ge_core.ops import REGISTRY
from tests.ops.conformance import all_cases, run_case

# Deliberate refusals, each with the words the refusal must contain.
REFUSED: list[tuple[str, re.Pattern[str], str]] = [
    ("training-mode Dropout and BatchNormalization", re.compile(r"training(?!_dropout_zero_ratio)"),
     "training mode"),
    ("sequence and optional inputs", re.compile(r"^test_identity_(sequence|opt)$"), "not a tensor"),
    # a desc has a rank: an If whose branches give different ranks (the expanded AffineGrid does) is refused
    ("If branches of different ranks", re.compile(r"^test_affine_grid_3d_align_corners_expanded$"), "same rank"),
]
# Known numeric gaps, kept visible: they run as xfail(strict=True), so a fix fails until it is removed here.
GAPS: dict[str, str] = {
    # 2 of 192 values 1 fp16 ulp off (rtol 1.2e-3 > 1e-3): Softmax in float32 then rounded to float16
    # differs from the case's data, computed in float16.
    "test_attention_4d_causal_fp16_expanded": "float16 softmax rounding",
    # ONNX's data places I against the default unpooled shape, then pads to output_shape; ONNX Runtime (our
    # oracle) and the spec index output_shape itself, and so do we.
    "test_maxunpool_export_with_output_shape": "ONNX's data and ONNX Runtime disagree; we follow ONNX Runtime",
    # opset 8 Scan has a batch axis; after onnx.version_converter's Scan 8->9 adapter the state input is
    # declared without it while the case feeds [1, 2].
    "test_scan_sum": "opset-8 Scan's batch axis after version conversion",
}
PASSING_LIST = Path(__file__).with_name("conformance_passing.txt")
UPDATE = "python3 -m tests.ops.update_conformance_list"


def _nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node, those in subgraphs (If/Loop/Scan bodies) too."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                yield from _nodes(sub)


def supported(case: TestCase) -> bool:
    return all(REGISTRY.get(n.op_type, n.domain) is not None for n in _nodes(case.model.graph))


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
    missing = sorted({n.op_type for n in _nodes(case.model.graph) if REGISTRY.get(n.op_type, n.domain) is None})
    assert {op.split("::")[-1] for _, op in result.unsupported} == set(missing)
    message = str(result.error())
    assert all(f"'{op}'" in message or f"::{op}'" in message for op in missing)


def where_it_went(name: str) -> str:
    """Why a listed case no longer runs as a must-pass case."""
    case = next((c for c in all_cases() if c.name == name), None)
    if case is None:
        return "no longer an ONNX conformance case"
    if not supported(case):
        missing = sorted({n.op_type for n in _nodes(case.model.graph) if REGISTRY.get(n.op_type, n.domain) is None})
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
