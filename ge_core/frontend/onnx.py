"""ONNX -> GE Graph, with a legality check that reports every problem at once.

`import_onnx` is lenient: it builds whatever graph it can and returns the problems it found (unsupported
ops, dangling tensors, cycles, shape errors), which is what `inspect` and the UI show. `load_onnx` is the
strict contract: the same import, refused with one error listing every problem if there is any.
Constant nodes become graph constants, as GE's parser turns them into Const nodes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx

from ge_core.errors import ModelError, UnsupportedOpError, UsageError, quote
from ge_core.frontend.input_shapes import InputShapes, parse_input_shapes
from ge_core.frontend.onnx_graphs import UNDEFINED, ScopeBuilder, fill_undefined
from ge_core.frontend.onnx_reader import read_model, tensor_dtype_name
from ge_core.frontend.onnx_schema import declared_output_problems
from ge_core.frontend.onnx_tensors import tensor_to_array
from ge_core.frontend.opset_upgrade import MIN_OPSET, upgrade_old_opset
from ge_core.ir.graph import Graph
from ge_core.ir.tensor import TensorDesc, default_format
from ge_core.ops import REGISTRY, infer_graph
from ge_core.ops.registry import OpRegistry

MAX_OPSET = onnx.defs.onnx_opset_version()
UNKNOWN_DIM = "?"  # an input dim written as -1, 0 or nothing: set it with --input-shape like a named one

Source = str | os.PathLike[str] | bytes


@dataclass
class ImportResult:
    graph: Graph
    problems: list[str] = field(default_factory=list)
    unsupported: list[tuple[str, str]] = field(default_factory=list)  # (node name, op type)
    values: dict[str, np.ndarray] = field(default_factory=dict)  # small tensors known before running

    @property
    def ok(self) -> bool:
        return not self.problems and not self.unsupported

    def error(self) -> ModelError:
        lines = _group_unsupported(self.unsupported) + self.problems
        if self.unsupported:
            ops = sorted({op for _, op in self.unsupported})
            return UnsupportedOpError(
                f"model '{self.graph.name}' cannot run: {len(self.unsupported)} node(s) use unsupported "
                f"operators ({', '.join(ops)}), and {len(self.problems)} other problem(s):",
                problems=lines, hint="Replace those operators when exporting (or remove the nodes); "
                                     "`inspect --json` lists the supported operators.")
        dynamic = any(not self.graph.desc(t).is_static for t in self.graph.inputs)
        hint = "Fix the model" + (", or set its symbolic dims with --input-shape." if dynamic else ".")
        return ModelError(f"model '{self.graph.name}' is refused: {len(lines)} problem(s) found:",
                          problems=lines, hint=hint)


def load_onnx(source: Source | onnx.ModelProto, input_shapes: str | Mapping[str, Sequence[int]] | None = None,
              *, registry: OpRegistry = REGISTRY, max_tensor_bytes: int | None = None) -> Graph:
    """Load an ONNX model as a verified GE Graph, or raise one error that lists every problem."""
    result = import_onnx(source, input_shapes, registry=registry, max_tensor_bytes=max_tensor_bytes)
    if not result.ok:
        raise result.error()
    return result.graph


def import_onnx(source: Source | onnx.ModelProto, input_shapes: str | Mapping[str, Sequence[int]] | None = None,
                *, registry: OpRegistry = REGISTRY, max_tensor_bytes: int | None = None) -> ImportResult:
    """Convert as much as possible; unreadable models still raise (nothing to show)."""
    model = source if isinstance(source, onnx.ModelProto) else read_model(source)
    model, converted = upgrade_old_opset(model)
    shapes = parse_input_shapes(input_shapes)
    builder = _Builder(model, shapes, registry)
    result = builder.build()
    if converted is not None:
        result.graph.metadata["converted"] = converted  # the summary says so
    inferred = infer_graph(result.graph, registry, max_tensor_bytes=max_tensor_bytes)
    result.problems += inferred.problems
    result.values = inferred.values
    fill_undefined(result.graph)  # tensors left without a desc: unsupported or failed upstream
    result.problems += declared_output_problems(model, result.graph)
    return result


class _Builder(ScopeBuilder):
    """The main graph: opsets, initializers, inputs (with --input-shape), its nodes (onnx_graphs.py, which
    builds subgraphs too), outputs and metadata."""

    def __init__(self, model: onnx.ModelProto, shapes: InputShapes, registry: OpRegistry) -> None:
        super().__init__(model.graph, _opsets(model), registry)
        self.model = model
        self.shapes = dict(shapes)

    def build(self) -> ImportResult:
        self._check_opset()
        self._add_constants()
        self._add_inputs()
        self.build_nodes()
        self._set_outputs()
        for key, value in ((p.key, p.value) for p in self.model.metadata_props):
            self.graph.metadata[key] = value
        producer = f"{self.model.producer_name} {self.model.producer_version}".strip()
        if producer:
            self.graph.metadata["producer"] = producer
        return ImportResult(self.graph, self.problems, self.unsupported)

    def _check_opset(self) -> None:
        if "" not in self.opset:  # only other domains (ai.onnx.ml, training...): their nodes are listed
            return
        version = self.opset[""]
        if not MIN_OPSET <= version <= MAX_OPSET:
            raise ModelError(f"model uses ai.onnx opset {version}; GE Workbench reads opsets {MIN_OPSET} to "
                             f"{MAX_OPSET}.", hint="Convert it with onnx.version_converter.convert_version "
                                                   "(e.g. to opset 13) and try again.")

    def _add_constants(self) -> None:
        for init in self.model.graph.initializer:
            what = f"initializer '{init.name}'"
            if not init.name:
                self.problems.append("an initializer has no name")
                continue
            if init.name in self.graph.descs:
                self.problems.append(f"{what} is defined twice")
                continue
            self.graph.add_constant(init.name, tensor_to_array(init, what))
        for sparse in self.model.graph.sparse_initializer:
            self.problems.append(f"sparse initializer '{sparse.values.name}' is not supported; densify it")

    def _add_inputs(self) -> None:
        known = [i.name for i in self.model.graph.input if i.name not in self.graph.constants]
        unknown = sorted(set(self.shapes) - set(known))
        if unknown:
            raise UsageError(f"--input-shape names {unknown}, which are not inputs of the model.",
                             hint=f"The model's inputs are: {', '.join(known) or '(none)'}.")
        for value in self.model.graph.input:
            if value.name in self.graph.constants:  # IR < 4: initializers are listed as inputs too
                continue
            if value.name in self.graph.descs:
                self.problems.append(f"graph input '{value.name}' is declared twice")
                continue
            desc, params = self._input_desc(value)
            self.graph.add_input(value.name, desc, params)

    def _input_desc(self, value: onnx.ValueInfoProto) -> tuple[TensorDesc, list[int | str]]:
        ttype = value.type.tensor_type
        if not value.type.HasField("tensor_type"):
            self.problems.append(f"graph input '{value.name}' is not a tensor (sequences, maps and optionals "
                                 "are not supported)")
            return UNDEFINED, []
        dtype = tensor_dtype_name(ttype.elem_type) or "undefined"
        if dtype == "undefined":
            self.problems.append(f"graph input '{value.name}' has an unsupported or missing element type")
        params: list[int | str] = []
        for i, dim in enumerate(ttype.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                params.append(int(dim.dim_value))
            elif dim.HasField("dim_value") and dim.dim_value < -1:
                self.problems.append(f"graph input {quote(value.name)} has negative dim {dim.dim_value} "
                                     f"at axis {i}")
                params.append(int(dim.dim_value))
            else:  # -1 (Paddle, GE and ATC write unknown dims so), 0 as unknown, or an empty dim_param
                params.append(dim.dim_param or UNKNOWN_DIM)
        given = self.shapes.get(value.name)
        shape = [p if isinstance(p, int) else -1 for p in params]
        if given is not None:
            shape = self._apply_given(value.name, params, given)
        elif not ttype.HasField("shape"):
            self.problems.append(f"graph input '{value.name}' has no shape; give one with --input-shape")
        desc = TensorDesc(tuple(shape), dtype, default_format(len(shape)), origin_shape=tuple(shape),
                          origin_format=default_format(len(shape)))
        return desc, params

    def _apply_given(self, name: str, params: list[int | str], given: tuple[int, ...]) -> list[int]:
        if params and len(params) != len(given):
            raise UsageError(f"--input-shape gives input '{name}' {len(given)} dims {list(given)}, but the "
                             f"model declares rank {len(params)}: {params}.")
        for axis, (p, g) in enumerate(zip(params, given, strict=False)):
            if isinstance(p, int) and p != g:
                raise UsageError(f"--input-shape gives input '{name}' dim {g} at axis {axis}, but the model "
                                 f"fixes it to {p}.", hint="Only symbolic or unknown (-1) dims can be set.")
        return list(given)

    def _set_outputs(self) -> None:
        seen: set[str] = set()
        outputs = []
        for value in self.model.graph.output:
            if value.name in seen:
                self.problems.append(f"graph output '{value.name}' is listed twice")
                continue
            seen.add(value.name)
            if not self.graph.has_tensor(value.name):
                self.problems.append(f"graph output '{value.name}' is not produced by any node, input or "
                                     "initializer")
                continue
            outputs.append(value.name)
        if not outputs:
            self.problems.append("the model has no usable graph outputs")
        self.graph.set_outputs(outputs)


def _group_unsupported(unsupported: list[tuple[str, str]]) -> list[str]:
    """One line per unsupported operator, naming the nodes that use it."""
    by_op: dict[str, list[str]] = {}
    for node, op in unsupported:
        by_op.setdefault(op, []).append(node)
    lines = []
    for op, nodes in by_op.items():
        shown = ", ".join(f"'{n}'" for n in nodes[:3]) + (f" and {len(nodes) - 3} more" if len(nodes) > 3 else "")
        lines.append(f"unsupported operator '{op}' used by {len(nodes)} node(s): {shown}")
    return lines


def _opsets(model: onnx.ModelProto) -> dict[str, int]:
    """Domain -> opset version. A model must say which operator versions it uses (ONNX Runtime and
    onnx.checker refuse one that does not): guessing would change results, e.g. ReduceSum's axes."""
    opset = {("" if o.domain in ("", "ai.onnx") else o.domain): int(o.version) for o in model.opset_import}
    if not opset:
        if model.ir_version >= 3:
            raise ModelError("the model declares no opset_import, so which version of each operator it uses is "
                             "unknown.", hint="Export it again with its opset (onnx.helper.make_model(..., "
                                              "opset_imports=[onnx.helper.make_opsetid('', 17)])).")
        opset[""] = 1  # IR versions 1 and 2 predate opset_import: their operators are opset 1 by definition
    return opset
