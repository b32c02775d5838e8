"""The CPU executor: checks feeds, then runs a GE Graph through the interpreter with the registry's numpy kernels.

The interpreter frees each activation right after its last use, times every node, and turns any failure
inside a kernel into an ExecutionError naming the node, its op and its input shapes. A graph with unknown
dims is specialised to the fed shapes first (shapes re-inferred, sizes checked) before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY
from ge_core.ops.registry import OpRegistry
from ge_core.runtime.feeds import check_feeds
from ge_core.runtime.interpreter import ExecutionResult, Interpreter, NodeTiming
from ge_core.runtime.specialise import Specialisations, is_dynamic

__all__ = ["ExecutionResult", "Executor", "InterpreterFactory", "NodeTiming", "execute"]

InterpreterFactory = Callable[[Graph, OpRegistry], Interpreter]  # an Interpreter subclass, or one bound to options


class Executor:
    """Plans a graph once (kernel lookup, last uses) and runs it on many feeds.

    `interpreter` makes the interpreter that runs it (and each shape-specialised copy of it): a subclass
    overriding a hook, e.g. a precision mode's kernel calls."""

    def __init__(self, graph: Graph, registry: OpRegistry = REGISTRY, *,
                 interpreter: InterpreterFactory = Interpreter) -> None:
        self.graph = graph
        self.registry = registry
        self._make = interpreter
        self._dynamic = is_dynamic(graph)
        self._interpreter = interpreter(graph, registry)  # planned now: an unsupported op is refused here
        self._specialised: Specialisations[Interpreter] = Specialisations(registry)

    def run(self, feeds: Mapping[str, object]) -> ExecutionResult:
        checked = check_feeds(self.graph, feeds)
        if self._dynamic:
            specialised = self._specialised.get(self.graph, checked, lambda g: self._make(g, self.registry))
            return specialised.run(checked)
        return self._interpreter.run(checked)


def execute(graph: Graph, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Run `graph` on the CPU; outputs keyed by graph output names."""
    return Executor(graph).run(feeds).outputs
