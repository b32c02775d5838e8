"""An ExportedProgram -> GE Graph, with a legality check that lists every problem at once.

Parameters and buffers become graph constants under their state-dict names (`encoder.layer.0.attention
.self.query.weight`); user inputs become graph inputs, a `torch.export.Dim` a symbolic dim (-1 in the desc,
its name in `input_dim_params`, its range in the desc's shape_range). Each ATen node is converted by its
row of the ATen table (aten_table.py) into nodes named after its module path (names.py); the graph's
metadata["torch_modules"] maps each module path to its class (JSON), where a node came from. A node whose
inputs are all constants is computed by PyTorch at import, as GE folds constants. Every ATen op without a
row is listed with the module that used it, in one UnsupportedOpError, like the ONNX legality check.
"""

from __future__ import annotations

import json
import operator
from typing import Any

import numpy as np
import torch

from ge_core.errors import ModelError, UnsupportedOpError, quote
from ge_core.frontend.torch.aten_table import ATEN_TABLE, IGNORED_OPS
from ge_core.frontend.torch.emit import ConversionProblem, DynamicShapes, Emitter
from ge_core.frontend.torch.names import module_path, node_name
from ge_core.frontend.torch.symbols import input_desc
from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY, infer_graph

OPSET = 23  # Attention (scaled_dot_product_attention) is an opset-23 op


def convert(program: torch.export.ExportedProgram, name: str,
            dynamic_shapes: DynamicShapes = None) -> Graph:
    converter = _Converter(program, name)
    converter.add_placeholders(dynamic_shapes)
    converter.add_nodes()
    converter.set_outputs()
    return converter.finish()


class _Converter:
    def __init__(self, program: torch.export.ExportedProgram, name: str) -> None:
        self.program = program
        self.graph = Graph(name, {"": OPSET})
        self.graph.metadata["producer"] = f"torch.export (torch {torch.__version__})"
        self.values: dict[str, str] = {}
        self.multi: dict[str, list[str]] = {}  # FX node -> GE tensors of a multi-output op
        self.folded: dict[str, Any] = {}  # FX node -> its value when known at import (weights, folded nodes)
        self.failed: set[str] = set()  # FX nodes not converted: their users are skipped, not listed again
        self.unsupported: list[tuple[str, str, str]] = []  # (GE node name, ATen op, module path)
        self.problems: list[str] = []
        self.modules: dict[str, str] = {}  # module path -> class name, from nn_module_stack
        shapes = {n.name: _shape(n) for n in program.graph.nodes}
        dtypes = {n.name: _dtype(n) for n in program.graph.nodes}
        self.emit = Emitter(self.graph, self.values, shapes, dtypes)

    # ---- placeholders ------------------------------------------------------------------------------
    def add_placeholders(self, dynamic_shapes: DynamicShapes) -> None:
        signature = self.program.graph_signature
        weights = {**signature.inputs_to_parameters, **signature.inputs_to_buffers,
                   **signature.inputs_to_lifted_tensor_constants}
        state = {**self.program.state_dict, **self.program.constants}
        user = list(signature.user_inputs)
        for n in self.program.graph.nodes:
            if n.op != "placeholder":
                continue
            if n.name in weights and not n.users:
                continue  # a buffer the forward never reads (BatchNorm's num_batches_tracked)
            if n.name in weights:
                target = weights[n.name]
                tensor = state[target].detach()
                self.graph.add_constant(target, _to_numpy(tensor))
                self.values[n.name], self.folded[n.name] = target, tensor
            elif n.name in user and isinstance(n.meta.get("val"), torch.Tensor):
                desc, params = input_desc(n, user.index(n.name), self.program, dynamic_shapes)
                self.graph.add_input(n.name, desc, params)
                for axis, dim in enumerate(n.meta["val"].shape):
                    if not isinstance(dim, int):
                        self.emit.sym_sources.setdefault(str(dim), (n.name, axis))
                self.values[n.name] = n.name
            else:
                self.problems.append(f"input {quote(n.name)} is not a tensor ({type(n.meta.get('val')).__name__}); "
                                     "pass tensors only (other values are baked in at export)")

    # ---- nodes -------------------------------------------------------------------------------------
    def add_nodes(self) -> None:
        for n in self.program.graph.nodes:
            if n.op != "call_function" or str(n.target) in IGNORED_OPS:
                continue
            for path, kind in (n.meta.get("nn_module_stack") or {}).values():
                self.modules[str(path)] = str(getattr(kind, "__name__", kind)).rsplit(".", 1)[-1]
            if n.target is operator.getitem:
                self._getitem(n)
            elif not _is_tensor_node(n):
                continue  # a symbolic size (sym_size, its arithmetic): read by the rows through shapes
            elif any(i.name in self.failed for i in n.all_input_nodes):
                self._skip(n)
            elif all(i.name in self.folded for i in n.all_input_nodes):
                self._fold(n)
            else:
                self._convert(n)

    def _skip(self, n: Any) -> None:
        """An input failed: not converted, but an op without a row is still listed (all of them at once)."""
        self.failed.add(n.name)
        if str(n.target) not in ATEN_TABLE:
            self.unsupported.append((node_name(n), str(n.target), module_path(n)))

    def _convert(self, n: Any) -> None:
        op = str(n.target)
        base = node_name(n)
        row = ATEN_TABLE.get(op)
        if row is None:
            self.unsupported.append((base, op, module_path(n)))
            self.failed.add(n.name)
            return
        self.emit.start(base, n.name)
        try:
            out = row(self.emit, n)
        except ConversionProblem as problem:
            where = f" in module {quote(module_path(n))}" if module_path(n) else ""
            self.problems.append(f"node {quote(base)} ({op}){where}: {problem}")
            self.failed.add(n.name)
            return
        if isinstance(out, list):
            self.multi[n.name] = out
        else:
            self.values[n.name] = out

    def _getitem(self, n: Any) -> None:
        source, index = n.args
        if source.name in self.failed:
            self.failed.add(n.name)
        elif source.name in self.folded:
            self._fold(n)
        elif index < len(self.multi.get(source.name, [])):
            self.values[n.name] = self.multi[source.name][index]
        elif n.users:
            self.problems.append(f"node {quote(n.name)} reads output {index} of {quote(source.name)} "
                                 f"({source.target}), which GE does not compute (only its result)")
            self.failed.add(n.name)

    def _fold(self, n: Any) -> None:
        """Every input is known: compute the value with PyTorch now, as GE's constant folding would."""
        args, kwargs = torch.fx.node.map_arg((n.args, n.kwargs), lambda i: self.folded[i.name])
        with torch.no_grad():
            value = n.target(*args, **kwargs)
        self.folded[n.name] = value
        if isinstance(value, torch.Tensor):
            name = self.graph.unique_tensor_name(node_name(n))
            self.graph.add_constant(name, _to_numpy(value))
            self.values[n.name] = name

    # ---- outputs -----------------------------------------------------------------------------------
    def set_outputs(self) -> None:
        (output,) = [n for n in self.program.graph.nodes if n.op == "output"]
        kinds = [spec.kind.name for spec in self.program.graph_signature.output_specs]
        results = [r for r, kind in zip(output.args[0], kinds, strict=True) if kind == "USER_OUTPUT"]
        names: list[str] = []
        for index, result in enumerate(results):
            if not hasattr(result, "name") or result.name not in self.values:
                if result is None or not hasattr(result, "name") or result.name not in self.failed:
                    self.problems.append(f"output {index} is not a tensor GE computes ({result!r})")
                continue
            tensor = self.values[result.name]
            if tensor in names or tensor in self.graph.inputs or tensor in self.graph.constants:
                name = f"output_{index}"
                tensor = self.graph.add_node("Identity", [tensor], [name], name=name).outputs[0]
            names.append(tensor)
        self.graph.set_outputs(names)

    def finish(self) -> Graph:
        self.graph.metadata["torch_modules"] = json.dumps(dict(sorted(self.modules.items())))
        if not self.unsupported and not self.problems:
            self.problems += infer_graph(self.graph, REGISTRY).problems
        if self.unsupported:
            ops = sorted({op for _, op, _ in self.unsupported})
            raise UnsupportedOpError(
                f"module {quote(self.graph.name)} cannot be converted: {len(self.unsupported)} node(s) use ATen "
                f"operators GE has no row for ({', '.join(ops)}), and {len(self.problems)} other problem(s):",
                problems=_group(self.unsupported) + self.problems,
                hint="Rewrite those calls with supported operations, or add a row to "
                     "ge_core/frontend/torch/aten_table.py; ge_core.frontend.torch.supported_aten_ops() lists them.")
        if self.problems:
            raise ModelError(f"module {quote(self.graph.name)} cannot be converted: {len(self.problems)} "
                             "problem(s) found:", problems=self.problems,
                             hint="Change the model where the problems point, or export it with static shapes.")
        return self.graph


def _group(unsupported: list[tuple[str, str, str]]) -> list[str]:
    """One line per ATen op, naming the nodes and the modules that use it."""
    by_op: dict[str, list[str]] = {}
    for node, op, path in unsupported:
        by_op.setdefault(op, []).append(f"{quote(node)} (module {quote(path or '<root>')})")
    lines = []
    for op, uses in by_op.items():
        shown = ", ".join(uses[:3]) + (f" and {len(uses) - 3} more" if len(uses) > 3 else "")
        lines.append(f"unsupported ATen operator {quote(op)} used by {len(uses)} node(s): {shown}")
    return lines


def _is_tensor_node(n: Any) -> bool:
    value = n.meta.get("val")
    return isinstance(value, torch.Tensor) or (isinstance(value, list | tuple) and
                                               any(isinstance(v, torch.Tensor) for v in value))


def _shape(n: Any) -> tuple[Any, ...]:
    value = n.meta.get("val")
    return tuple(value.shape) if isinstance(value, torch.Tensor) else ()


def _dtype(n: Any) -> str:
    value = n.meta.get("val")
    return str(value.dtype).removeprefix("torch.") if isinstance(value, torch.Tensor) else ""


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes  # a dependency of ge_core: numpy's bfloat16

        return tensor.detach().float().numpy().astype(ml_dtypes.bfloat16)
    return tensor.detach().contiguous().numpy().copy()
