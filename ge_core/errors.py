"""The error family of GE Workbench.

Every error raised on purpose derives from `GEError` and says *what* it concerns (node, tensor, pass,
input) and *what to do*. The CLI prints `str(error)` as one short paragraph and exits with
`error.exit_code`; the UI shows the same text. Several problems found in one sweep (the legality check)
travel together in one `ModelError` with `.problems`, so a user sees all of them at once.
"""

from __future__ import annotations

from collections.abc import Sequence


def printable(text: str) -> str:
    """`text` with every character that is not printable escaped as repr() would (\\n, \\x00, \\u200b):
    a name taken from a model can then never start a line of its own or hide in a message."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def quote(name: object) -> str:
    """A name from a model as messages print it: in quotes, escaped (see `printable`)."""
    return "'" + printable(str(name)).replace("'", "\\'") + "'"


class GEError(Exception):
    """Base of every error the project raises on purpose.

    Printed as one paragraph: the message, the problems found with it (one per line), then what to do.
    Every part is passed through `printable`, so no name a model carries can forge a line of its own.
    """

    exit_code = 3
    max_problems_shown = 20

    def __init__(self, message: str, *, hint: str = "", problems: Sequence[str] = ()) -> None:
        self.message = message
        self.hint = hint
        self.problems = list(problems)
        super().__init__(self.__str__())

    def __str__(self) -> str:
        text = printable(self.message)
        if not self.problems:
            return f"{text} {printable(self.hint)}".strip()
        shown = self.problems[: self.max_problems_shown]
        text += "\n" + "\n".join(f"  - {printable(p)}" for p in shown)
        if len(self.problems) > len(shown):
            text += f"\n  ... and {len(self.problems) - len(shown)} more"
        return f"{text}\n{printable(self.hint)}".strip()


class UsageError(GEError):
    """The user asked for something malformed (a bad --input-shape spec, a missing feed file)."""

    exit_code = 2


class ModelError(GEError):
    """The model cannot be read or is malformed; may carry several problems found at once."""


class UnsupportedOpError(ModelError):
    """One or more nodes use operators the workbench has no kernel for."""


class ShapeError(GEError):
    """Shape or dtype inference failed for one node: names the node, its op, input shapes, expectation."""

    def __init__(self, node: str, op_type: str, input_shapes: Sequence[object], message: str) -> None:
        self.node = node
        self.op_type = op_type
        self.input_shapes = list(input_shapes)
        shapes = ", ".join(_fmt_shape(s) for s in input_shapes)
        super().__init__(
            f"node '{node}' ({op_type}) with inputs [{shapes}]: {message}.",
            hint="Fix the model or pass matching --input-shape values.",
        )


class VerifyError(GEError):
    """graph.verify() found broken invariants; lists every one."""

    def __init__(self, graph_name: str, problems: Sequence[str]) -> None:
        super().__init__(f"graph {quote(graph_name)} failed verification:", problems=problems)


class GraphEditError(GEError):
    """An IR edit was refused (erasing a node that still has users, duplicate names...)."""


class ExecutionError(GEError):
    """A kernel failed while running; names the node, its op and its input shapes."""

    def __init__(self, node: str, op_type: str, input_shapes: Sequence[object], cause: str) -> None:
        self.node = node
        self.op_type = op_type
        shapes = ", ".join(_fmt_shape(s) for s in input_shapes)
        super().__init__(
            f"running node '{node}' ({op_type}) on inputs [{shapes}] failed: {cause}",
            hint="Check the inputs fed to the model; `inspect` lists the expected shapes.",
        )


class ResourceLimitError(GEError):
    """A tensor would exceed the memory budget; raised before anything is allocated."""


def _fmt_shape(shape: object) -> str:
    if shape is None:
        return "-"
    if isinstance(shape, tuple | list):
        return "[" + ",".join("?" if (isinstance(d, int) and d < 0) else str(d) for d in shape) + "]"
    return str(shape)
