"""`ge_core.runtime.backend.GEBackend`: an onnx.backend.base.Backend, so ONNX's conformance runner can drive ge_core.

    import onnx.backend.test
    backend_test = onnx.backend.test.BackendTest(GEBackend, __name__)
    globals().update(backend_test.enable_report().test_cases)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from ge_core.errors import GEError
from ge_core.frontend import import_onnx, load_onnx
from ge_core.ir.graph import Graph
from ge_core.runtime import Executor


class GEBackendRep(BackendRep):
    """A prepared model: the imported graph and its planned executor."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.executor = Executor(graph)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            values = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            feeds = dict(zip(self.graph.inputs, values, strict=False))
        outputs = self.executor.run(feeds).outputs
        return namedtupledict("Outputs", self.graph.outputs)(*[outputs[t] for t in self.graph.outputs])


class GEBackend(Backend):
    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        try:
            return cls.supports_device(device) and import_onnx(model).ok
        except GEError:
            return False

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> GEBackendRep:
        # No onnx.checker pass (the base class's): our legality check is stricter and names every problem.
        return GEBackendRep(load_onnx(model))

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[Any, Any]] | None = None, **kwargs: Any) -> tuple[Any, ...]:
        """Wrap one node in a model whose inputs take the fed arrays' types and shapes."""
        values = list(inputs.values()) if isinstance(inputs, Mapping) else list(inputs)
        names = [n for n in node.input if n]
        graph_inputs = [_value_info(n, np.asarray(v)) for n, v in zip(names, values, strict=False)]
        graph_outputs = [helper.make_empty_tensor_value_info(n) for n in node.output if n]
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        model = helper.make_model(helper.make_graph([node], "run_node", graph_inputs, graph_outputs),
                                  opset_imports=[helper.make_opsetid("", opset)])
        return cls.run_model(model, values, device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU


def _value_info(name: str, value: np.ndarray) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape))


prepare = GEBackend.prepare
run_model = GEBackend.run_model
run_node = GEBackend.run_node
supports_device = GEBackend.supports_device
