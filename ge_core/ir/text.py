"""Deterministic text and JSON forms of a Graph, used by tests, errors, dumps and the UI.

    graph mlp (%x: f32[1,64]) {
      const %w: f32[64,32]
      %h = MatMul(%x, %w) : f32[1,32]
      %y = Relu(%h) : f32[1,32]
      return %y
    }

A control-flow node lists its captured tensors after its inputs and its subgraphs in braces:

      %y = If(%c) captures [%x] : f32[1,64] {
        else_branch: graph else (captures %x: f32[1,64]) {
          ...
        }
        then_branch: graph then (captures %x: f32[1,64]) {
          ...
        }
      }
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ge_core.ir.graph import Graph
    from ge_core.ir.node import Node


def graph_to_text(graph: Graph) -> str:
    return "\n".join(_graph_lines(graph, ""))


def graph_text_lines(graph: Graph) -> Iterator[str]:
    """graph_to_text's lines one top-level node at a time (a dump writes them as they come)."""
    ins = [f"%{t}: {_desc_text(graph, t)}" for t in graph.inputs]
    ins += [f"captures %{t}: {_desc_text(graph, t)}" for t in graph.captures]
    yield f"graph {graph.name} ({', '.join(ins)}) {{"
    for t in graph.constants:
        yield f"  const %{t}: {_desc_text(graph, t)}"
    for n in graph.nodes:
        yield from _node_lines(graph, n, "  ")
    yield "  return " + ", ".join(f"%{t}" for t in graph.outputs)
    yield "}"


def _graph_lines(graph: Graph, indent: str, label: str = "") -> list[str]:
    ins = [f"%{t}: {_desc_text(graph, t)}" for t in graph.inputs]
    ins += [f"captures %{t}: {_desc_text(graph, t)}" for t in graph.captures]
    lines = [f"{indent}{label}graph {graph.name} ({', '.join(ins)}) {{"]
    lines += [f"{indent}  const %{t}: {_desc_text(graph, t)}" for t in graph.constants]
    for n in graph.nodes:
        lines += _node_lines(graph, n, indent + "  ")
    lines.append(f"{indent}  return " + ", ".join(f"%{t}" for t in graph.outputs))
    lines.append(f"{indent}}}")
    return lines


def _node_lines(graph: Graph, node: Node, indent: str) -> list[str]:
    """A node's line; a fused node's body, or a control-flow node's subgraphs, follow indented in braces."""
    line = indent + node_to_text(graph, node)
    if node.body is None and not node.subgraphs:
        return [line]
    lines = [line + " {"]
    if node.body is not None:
        for inner in node.body.nodes:
            lines += _node_lines(node.body, inner, indent + "    ")
    for attr, sub in sorted(node.subgraphs.items()):
        lines += _graph_lines(sub, indent + "  ", f"{attr}: ")
    return [*lines, indent + "}"]


def node_to_text(graph: Graph, node: Node) -> str:
    outs = ", ".join(f"%{t}" for t in node.outputs)
    args = ", ".join(f"%{t}" if t else "none" for t in node.explicit_inputs)
    attrs = ""
    if node.attrs:
        attrs = " {" + ", ".join(f"{k}={format_attr(v)}" for k, v in sorted(node.attrs.items())) + "}"
    if node.num_captures:
        attrs += " captures [" + ", ".join(f"%{t}" for t in node.captures) + "]"
    ctrl = f" after [{', '.join(node.control_inputs)}]" if node.control_inputs else ""
    types = ", ".join(_desc_text(graph, t) for t in node.outputs)
    op = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
    label = "" if node.outputs and node.name == node.outputs[0] else f"  # {node.name}"
    return f"{outs} = {op}({args}){attrs}{ctrl} : {types}{label}"


def format_attr(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 8:
            return f"tensor<{value.dtype.name}{list(value.shape)}>{_flat(value)}"
        return f"tensor<{value.dtype.name}{list(value.shape)}>"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bytes):
        return repr(value.decode("utf-8", "replace"))
    return str(value)


def graph_to_json(graph: Graph) -> dict[str, Any]:
    return {**_graph_head_json(graph), "nodes": [_node_json(graph, n) for n in graph.nodes]}


def graph_json_chunks(graph: Graph) -> Iterator[str]:
    """graph_to_json's JSON text, one node a line (each encoded by json's C encoder: a dump streams them)."""
    head = json.dumps(_graph_head_json(graph), separators=(",", ":"))
    nodes = graph.nodes
    yield head[:-1] + ',"nodes":[' + ("\n" if nodes else "")
    for i, n in enumerate(nodes):
        yield json.dumps(_node_json(graph, n), separators=(",", ":")) + (",\n" if i + 1 < len(nodes) else "\n")
    yield "]}\n"


def _graph_head_json(graph: Graph) -> dict[str, Any]:
    return {
        "name": graph.name,
        "opset": dict(graph.opset),
        "inputs": [{"name": t, **graph.descs[t].to_json()} for t in graph.inputs],
        **({"captures": [{"name": t, **graph.descs[t].to_json()} for t in graph.captures]} if graph.captures
           else {}),
        "outputs": [{"name": t, **graph.descs[t].to_json()} for t in graph.outputs if t in graph.descs],
        "constants": [{"name": t, **graph.descs[t].to_json()} for t in graph.constants],
    }


def _node_json(graph: Graph, n: Node) -> dict[str, Any]:
    return {
        "name": n.name,
        "op_type": n.op_type,
        "domain": n.domain,
        "inputs": list(n.inputs),
        "outputs": [{"name": t, **graph.descs[t].to_json()} for t in n.outputs if t in graph.descs],
        "attrs": {k: _json_attr(v) for k, v in sorted(n.attrs.items())},
        "control_inputs": list(n.control_inputs),
        **({"body": graph_to_json(n.body)} if n.body is not None else {}),
        # control flow: the captured inputs (also the last `inputs`) and the subgraphs by attribute
        **({"captures": list(n.captures)} if n.num_captures else {}),
        **({"subgraphs": {k: graph_to_json(g) for k, g in sorted(n.subgraphs.items())}} if n.subgraphs else {}),
    }


def _json_attr(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.size <= 64:
            return {"tensor": {"dtype": value.dtype.name, "shape": list(value.shape),
                               "values": value.tolist()}}
        return {"tensor": {"dtype": value.dtype.name, "shape": list(value.shape)}}
    if isinstance(value, list | tuple):
        return [_json_attr(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


def _desc_text(graph: Graph, tensor: str) -> str:
    desc = graph.descs.get(tensor)
    return desc.text() if desc is not None else "<no desc>"


def _flat(value: np.ndarray) -> str:
    return "[" + ", ".join(format_attr(v) for v in value.reshape(-1).tolist()) + "]"
