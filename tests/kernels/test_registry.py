"""The fast-path registry (ge_core/kernels/registry.py): which paths a process takes and why not, the
switches, the CPU-feature gate, and that a declined or absent path leaves the reference kernel."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ge_core.ir.node import Node
from ge_core.kernels import FAST_PATHS, cpu, jit
from ge_core.kernels.registry import SWITCH, BodyPath, FastPath, FastPaths
from ge_core.ops import REGISTRY

RELU = REGISTRY.get("Relu")
assert RELU is not None


def _path(name: str, result: list[np.ndarray] | None, needs: tuple[str, ...] = ()) -> FastPath:
    return FastPath(name, name.partition(".")[0], lambda node, args: result, "a test path", needs=needs)


def _registry(monkeypatch: pytest.MonkeyPatch, switch: str, *paths: FastPath) -> FastPaths:
    monkeypatch.setenv(SWITCH, switch)
    registry = FastPaths()
    registry.register_all(paths)
    return registry


def test_every_built_in_path_is_registered_once_with_a_reason() -> None:
    decisions = FAST_PATHS.decisions()
    names = [d.path.name for d in decisions]
    assert len(names) == len(set(names)) and {"Conv.depthwise", "Softmax.rows", "FusedBody.epilogue"} <= set(names)
    for decision in decisions:
        assert decision.reason
        op = decision.path.op_type if isinstance(decision.path, FastPath) else None
        assert op is None or REGISTRY.get(op) is not None, f"{decision.path.name}: no op {op} in the registry"


def test_a_path_that_declines_leaves_the_reference_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = _registry(monkeypatch, "", _path("Relu.never", None))
    x = np.array([-1.0, 2.0], np.float32)
    (y,) = registry.call(Node("r", "Relu", ("x",), ("y",)), RELU, [x])
    np.testing.assert_array_equal(y, [0.0, 2.0])


def test_the_first_path_that_takes_the_inputs_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    marker = [np.array([42.0])]
    registry = _registry(monkeypatch, "", _path("Relu.no", None), _path("Relu.yes", marker), _path("Relu.late", None))
    assert registry.call(Node("r", "Relu", ("x",), ("y",)), RELU, [np.zeros(2)]) is marker


@pytest.mark.parametrize("switch", ["off", "-Relu.yes", "-Relu", "  -Relu.yes ,-Other"])
def test_switches_turn_paths_off(monkeypatch: pytest.MonkeyPatch, switch: str) -> None:
    registry = _registry(monkeypatch, switch, _path("Relu.yes", [np.zeros(1)]))
    assert registry.for_op("Relu") == () and not registry.taken("Relu.yes")
    (decision,) = registry.decisions()
    assert SWITCH in decision.reason


def test_a_path_needing_a_cpu_feature_the_target_lacks_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = _registry(monkeypatch, "", _path("Relu.avx1024", [np.zeros(1)], needs=("avx1024f",)))
    (decision,) = registry.decisions()
    assert not decision.taken and "avx1024f" in decision.reason


def test_without_numba_compiled_paths_are_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jit, "ENABLED", False)
    registry = _registry(monkeypatch, "", _path("Relu.yes", [np.zeros(1)]))
    assert not registry.taken("Relu.yes")


def test_body_paths_plan_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SWITCH, "")
    registry = FastPaths()
    registry.register_all([BodyPath("FusedBody.none", lambda body, reg: None, "declines"),
                           BodyPath("FusedBody.some", lambda body, reg: "plan", "plans")])  # type: ignore[arg-type,return-value]
    assert registry.plan_body(None, REGISTRY) == "plan"  # type: ignore[arg-type,comparison-overlap]


def test_fast_paths_only_run_default_domain_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = _registry(monkeypatch, "", _path("Relu.yes", [np.array([42.0])]))
    other = dataclasses.replace(RELU, domain="ge")
    (y,) = registry.call(Node("r", "Relu", ("x",), ("y",), domain="ge"), other, [np.array([-1.0])])
    np.testing.assert_array_equal(y, [0.0])


def test_the_avx2_environment_names_no_avx512_feature() -> None:
    env = cpu.avx2_environment()
    enabled = {f[1:] for f in env["NUMBA_CPU_FEATURES"].split(",") if f.startswith("+")}
    assert not any(f.startswith("avx512") for f in enabled) and env["NUMBA_CPU_NAME"]
