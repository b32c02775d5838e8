"""ONNX's node conformance cases (onnx.backend.test.case.node) run through ge_core's frontend and executor.

    from tests.ops.conformance import cases_for, run_case
    @pytest.mark.parametrize("case", cases_for({"Relu", "Add"}), ids=lambda c: c.name)
    def test_conformance(case): run_case(case)

Known failures are marked at collection time, strict, so a fix shows (XPASS fails until it is unlisted):
    @pytest.mark.parametrize("case", with_xfails(cases_for({"Relu"}), XFAIL))
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Mapping

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx.backend.test.case.test_case import TestCase

import ge_core


@functools.cache
def all_cases() -> tuple[TestCase, ...]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(c for c in collect_testcases(None) if c.model is not None)


def cases_for(op_types: Iterable[str]) -> list[TestCase]:
    """Cases whose every node (ignoring Constant) is one of `op_types`."""
    requested = set(op_types)
    wanted = requested | {"Constant"}
    picked = []
    for case in all_cases():
        ops = {n.op_type for n in case.model.graph.node if n.domain in ("", "ai.onnx")}
        domains = {n.domain for n in case.model.graph.node}
        only_constant = ops == {"Constant"} and "Constant" not in requested
        if ops and ops <= wanted and domains <= {"", "ai.onnx"} and not only_constant:
            picked.append(case)
    return picked


def with_xfails(cases: Iterable[TestCase], xfail: Mapping[str, str]) -> list[object]:
    """One param per case, id the case's name; a case named in `xfail` runs marked xfail(strict=True) with
    its reason. A name in `xfail` that is not one of `cases` is an error (a stale entry hides nothing)."""
    cases = list(cases)
    stale = sorted(set(xfail) - {c.name for c in cases})
    if stale:
        raise ValueError(f"XFAIL names cases that are not among these conformance cases: {stale}")
    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True, reason=xfail[c.name])]
                         if c.name in xfail else []) for c in cases]


def run_case(case: TestCase) -> None:
    """Load the case's model with ge_core, run every data set, compare like ONNX's backend runner."""
    graph = ge_core.load_onnx(case.model)
    for inputs, expected in case.data_sets:
        feeds = dict(zip(graph.inputs, [_array(v) for v in inputs], strict=True))
        outputs = ge_core.execute(graph, feeds)
        for name, want in zip(graph.outputs, expected, strict=True):
            got = outputs[name]
            want = _array(want)
            assert got.dtype == want.dtype, f"{case.name}: output '{name}' dtype {got.dtype} != {want.dtype}"
            assert got.shape == want.shape, f"{case.name}: output '{name}' shape {got.shape} != {want.shape}"
            if want.dtype == object:
                assert got.tolist() == want.tolist()
            else:
                rtol = case.rtol
                if want.dtype.name == "bfloat16":  # as ONNX's runner compares them: in float32, 2 bf16 ulps
                    got, want, rtol = got.astype(np.float32), want.astype(np.float32), max(rtol, 2**-6)
                np.testing.assert_allclose(got, want, rtol=rtol, atol=case.atol, equal_nan=True,
                                           err_msg=f"{case.name}: output '{name}'")


def _array(value: object) -> np.ndarray:
    """Some cases (Cast) store their data as TensorProtos; decode them like ONNX's runner does."""
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)
