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
    """Base of every error the project raises on purpose."""

    exit_code = 3

    def __init__(self, message: str, *, hint: str = "") -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip()


class UsageError(GEError):
    """The user asked for something malformed (a bad --input-shape spec, a missing feed file)."""

    exit_code = 2


class ModelError(GEError):
    """The model cannot be read or is malformed; may carry several problems found at once."""

    def __init__(self, message: str, *, hint: str = "", problems: Sequence[str] = ()) -> None:
        self.problems = list(problems)
        super().__init__(message, hint=hint)

    def __str__(self) -> str:
        text = self.message
        if self.problems:
            shown = self.problems[:20]
            more = len(self.problems) - len(shown)
            text += "\n" + "\n".join(f"  - {p}" for p in shown)
            if more > 0:
                text += f"\n  ... and {more} more"
        return f"{text}\n{self.hint}".strip() if self.problems else f"{text} {self.hint}".strip()


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
        self.problems = list(problems)
        listed = "\n".join(f"  - {p}" for p in self.problems[:20])
        super().__init__(f"graph '{graph_name}' failed verification:\n{listed}")


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
