"""`model.py:factory`: a PyTorch model given as a Python file and a function in it (the CLI's MODEL).

The function takes no arguments and returns `(module, example_inputs)` or `(module, example_inputs,
dynamic_shapes)`, what `ge_core.from_torch` takes. Loading RUNS THE FILE'S CODE with this process's
rights: only for trusted local files (never an upload; the web page offers no such thing).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ge_core.errors import ModelError, UsageError, quote
from ge_core.frontend.torch import from_torch, require_torch

if TYPE_CHECKING:
    from ge_core.ir.graph import Graph

_SPEC = re.compile(r"^(?P<path>.+\.py):(?P<function>[A-Za-z_]\w*)$")
RETURN_FORM = "(module, example_inputs) or (module, example_inputs, dynamic_shapes)"


def is_factory_spec(model: str) -> bool:
    """True for `path/to/model.py:function`."""
    return _SPEC.match(model) is not None


def graph_from_factory(spec: str) -> Graph:
    """Run `model.py`, call its `factory()`, convert what it returns with from_torch."""
    match = _SPEC.match(spec)
    if match is None:
        raise UsageError(f"{quote(spec)} is not FILE.py:FUNCTION.", hint="Write it like models/cnn.py:build.")
    path, function = Path(match["path"]), match["function"]
    if not path.is_file():
        raise UsageError(f"Python file {quote(path)} not found.", hint="Give the path of a .py file, then ':' "
                                                                        "and the name of a function in it.")
    require_torch()
    factory = _function(_run_file(path), path, function)
    try:
        returned = factory()
    except Exception as exc:
        raise ModelError(f"{quote(f'{path}:{function}')}() raised {type(exc).__name__}: {exc}",
                         hint="Fix the function (rerun with --debug for the traceback).") from exc
    module, inputs, dynamic_shapes = _unpack(returned, f"{path}:{function}")
    return from_torch(module, inputs, dynamic_shapes)


def _run_file(path: Path) -> Any:
    """The file executed as a module of its own (its folder importable, for its sibling modules)."""
    name = f"ge_core_torch_model_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{quote(path)} cannot be loaded as a Python module.")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the file's own error (SyntaxError, ImportError, ...): ours to report, not a bug
        raise ModelError(f"running {quote(path)} raised {type(exc).__name__}: {exc}",
                         hint="Fix the file (rerun with --debug for the traceback).") from exc
    finally:
        sys.path.remove(folder)
    return module


def _function(module: Any, path: Path, function: str) -> Any:
    factory = getattr(module, function, None)
    if callable(factory):
        return factory
    functions = sorted(n for n, v in vars(module).items()
                       if callable(v) and not n.startswith("_") and getattr(v, "__module__", None) == module.__name__)
    what = "is not a function" if factory is not None else "is not defined"
    raise UsageError(f"{quote(function)} {what} in {quote(path)}.",
                     hint=f"Functions defined there: {', '.join(functions) or '(none)'}.")


def _unpack(returned: Any, where: str) -> tuple[Any, Any, Any]:
    import torch  # an optional package: imported once a factory has run (require_torch checked it is there)

    if not isinstance(returned, tuple | list) or len(returned) not in (2, 3):
        raise ModelError(f"{quote(where)}() returned {type(returned).__name__}; it must return {RETURN_FORM}.")
    module, inputs, *rest = returned
    if not isinstance(module, torch.nn.Module):
        raise ModelError(f"{quote(where)}() returned {type(module).__name__} as the module; expected a "
                         f"torch.nn.Module ({RETURN_FORM}).")
    tensors = (inputs,) if isinstance(inputs, torch.Tensor) else inputs
    if not isinstance(tensors, tuple | list) or not all(isinstance(t, torch.Tensor) for t in tensors):
        raise ModelError(f"{quote(where)}() returned {type(inputs).__name__} as the example inputs; expected a "
                         "tensor or a tuple of tensors for module.forward.")
    return module, tuple(tensors), rest[0] if rest else None
