"""Capture: torch.export, then the decomposition to core ATen that keeps GE's one-op layers whole.

torch.export traces the module into an ExportedProgram (inference: eval mode, no autograd). The
decomposition runs PyTorch's default table minus KEPT_OPS (aten_nn.py and aten_rnn.py say why each is
kept). What torch.export refuses comes back as an ExportError in plain words: data-dependent control flow
(an `if` on a tensor's value) says to use `torch.cond` or a static path, with the line of the model that
did it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import torch
from torch._dynamo.exc import UserError
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

from ge_core.errors import ModelError, quote
from ge_core.frontend.torch.emit import DynamicShapes

# ATen ops GE computes as one op: left out of the decomposition table so they reach the converter whole.
KEPT_OPS: tuple[str, ...] = (
    "linear.default", "layer_norm.default", "group_norm.default", "batch_norm.default",
    "scaled_dot_product_attention.default", "gelu.default", "softmax.int", "log_softmax.int",
    "conv1d.default", "conv2d.default", "conv3d.default", "lstm.input", "gru.input",
)


class ExportError(ModelError):
    """torch.export could not capture the module; says why in plain words and what to do."""


def capture(module: torch.nn.Module, example_inputs: Sequence[Any] | torch.Tensor,
            dynamic_shapes: DynamicShapes = None) -> torch.export.ExportedProgram:
    """The module as an ExportedProgram of core ATen ops (plus KEPT_OPS), in eval mode. A lone tensor
    is taken as the one input (a tuple of it), not iterated."""
    name = type(module).__name__
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            inputs = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else tuple(example_inputs)
            program = torch.export.export(module, inputs, dynamic_shapes=dynamic_shapes)
            return program.run_decompositions(_decomposition_table())
    except GuardOnDataDependentSymNode as exc:
        raise _data_dependent(name, str(exc)) from exc
    except UserError as exc:  # bad dynamic_shapes, constraint violations
        raise ExportError(f"torch.export refused module {quote(name)}: {_first_lines(str(exc))}",
                          hint="Check dynamic_shapes: each Dim's range must hold for the model (torch.export "
                               "suggests fixes in the message above).") from exc
    except RuntimeError as exc:
        unknown = _unknown_output(str(exc))
        if unknown is None:
            raise
        raise _cache_output(name, unknown) from exc
    finally:
        module.train(was_training)


def _decomposition_table() -> dict[Any, Any]:
    table = torch.export.default_decompositions()
    for op in KEPT_OPS:
        packet, overload = op.rsplit(".", 1)
        table.pop(getattr(getattr(torch.ops.aten, packet), overload), None)
    return dict(table)


def _data_dependent(name: str, message: str) -> ExportError:
    where = _user_line(message)
    return ExportError(
        f"module {quote(name)} branches on the value of a tensor{where}, and torch.export captures one graph "
        "for every input, so it cannot choose a branch at capture time.",
        hint="Write the branch with torch.cond(pred, true_fn, false_fn, operands), compute both sides and "
             "pick with torch.where, or take the branch on a Python value (a shape or a flag) instead.")


def _unknown_output(message: str) -> str | None:
    """The class torch.export found in the outputs and cannot flatten ('Found <class '...DynamicCache'> in
    output, which is not a known type'), or None for another RuntimeError."""
    match = re.search(r"Found <class '([^']+)'> in output, which is not a known type", message)
    return match.group(1) if match else None


def _cache_output(name: str, unknown: str) -> ExportError:
    short = unknown.rsplit(".", 1)[-1]
    return ExportError(
        f"module {quote(name)} returns a {short} (a key-value cache for the next generation step), which "
        "torch.export cannot flatten into tensors: GE compiles one forward pass, with no cache between calls.",
        hint="Build or call the model with use_cache=False (for a transformers model: "
             "model.config.use_cache = False, or from_pretrained(..., use_cache=False)), or wrap it in a module "
             "that returns only its tensors (e.g. the logits).")


def _user_line(message: str) -> str:
    """' (at model.py:12: `if x.sum() > 0:`)' from torch's 'The following call raised this error' part."""
    match = re.search(r'The following call raised this error:\s*File "([^"]+)", line (\d+), in \w+\s*\n\s*(.+)',
                      message)
    if match is None:
        return ""
    path, line, code = match.groups()
    return f" (at {path.rsplit('/', 1)[-1]}:{line}: `{code.strip()}`)"


def _first_lines(message: str, count: int = 3) -> str:
    return " ".join(line.strip() for line in message.strip().splitlines()[:count] if line.strip())
