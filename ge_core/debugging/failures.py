"""What went wrong, in plain words: a load, compile or run error turned into a `Failure` the UI can show.

A Failure names the phase (load, compile, run), the failing pass and its stage, the nodes the error
concerns and the graph to draw them in (as it was before the failing pass, or as imported), plus what to
do. Node names come from the errors themselves (`ShapeError.node`, `ExecutionError.node`, the import's
unsupported list) and, failing that, from the `node 'NAME'` phrases every error of ge_core uses.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from ge_core.errors import GEError, ModelError
from ge_core.frontend.onnx import ImportResult
from ge_core.ir.graph import Graph
from ge_core.passes.infra.manager import PassError

Phase = Literal["load", "compile", "run"]
PHASE_WORDS: dict[str, str] = {"load": "importing the model", "compile": "compiling", "run": "running"}
MAX_NAMED = 5  # nodes named in a headline; the full list is in `nodes`

_NODE_PHRASE = re.compile(r"\bnodes?\s+'([^']+)'")
_QUOTED = re.compile(r"'([^']+)'")


@dataclass(frozen=True)
class Failure:
    """One failure, ready to show: a headline in plain words, the full error text and what to do."""

    phase: Phase
    headline: str
    message: str  # the error's own text, as the CLI prints it
    hint: str = ""  # what to do next
    pass_name: str | None = None
    stage: str | None = None
    passes_before: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()  # the nodes the error concerns, to highlight
    graph: Graph | None = None  # where to draw them: the graph before the failing pass, or as imported
    bug: bool = False  # not the model's fault: a bug of ours
    error_type: str = ""


def import_failure(result: ImportResult) -> Failure:
    """The legality check's refusal: every unsupported op and shape problem, with the nodes concerned."""
    err = result.error()
    unsupported = [node for node, _ in result.unsupported]
    named = nodes_named(result.problems, result.graph)
    parts = []
    if result.unsupported:
        ops = sorted({op for _, op in result.unsupported})
        parts.append(f"{len(unsupported)} node(s) use operators without a kernel ({', '.join(ops)})")
    if result.problems:
        parts.append(f"{len(result.problems)} shape or structure problem(s)")
    nodes = _unique([*unsupported, *named])
    headline = f"The model was refused when importing it: {' and '.join(parts)}{_on_nodes(nodes)}."
    return Failure("load", headline, str(err), err.hint, nodes=tuple(nodes), graph=result.graph,
                   error_type=type(err).__name__)


def error_failure(err: BaseException, phase: Phase, graph: Graph | None = None) -> Failure:
    """Any error raised while loading, compiling or running; `graph` is where its nodes live."""
    if isinstance(err, PassError):
        return _pass_failure(err, graph)
    if not isinstance(err, GEError):
        return bug_failure(err, phase)
    nodes = nodes_of(err, graph)
    words = PHASE_WORDS[phase]
    headline = f"{words.capitalize()} failed{_on_nodes(nodes)}: {_first_line(err.message)}"
    return Failure(phase, headline, str(err), err.hint, nodes=tuple(nodes), graph=graph,
                   error_type=type(err).__name__)


def bug_failure(exc: BaseException, phase: Phase) -> Failure:
    """An exception ge_core did not raise on purpose: a bug of ours, with its traceback as the message."""
    text = "".join(traceback.format_exception(exc)).strip()
    return Failure(phase, f"Internal error while {PHASE_WORDS[phase]} ({type(exc).__name__}: {exc}). This is a "
                   "bug in GE Workbench, not in your model.", text,
                   "Please report it with the reproducer (Debug page) and the traceback.", bug=True,
                   error_type=type(exc).__name__)


def _pass_failure(err: PassError, graph: Graph | None) -> Failure:
    before = err.graph_before if err.graph_before is not None else graph
    nodes = nodes_of(err.cause, before)
    is_bug = not isinstance(err.cause, GEError)  # a pass crashing is our bug, not the model's
    cause = _first_line(str(err.cause)) or type(err.cause).__name__
    headline = f"Pass {err.pass_name} (stage {err.stage}) failed{_on_nodes(nodes)}: {cause}"
    hint = (f"Switch {err.pass_name} off (sidebar, or '{err.pass_name}:off' in a --fusion-switch-file) to "
            "compile without it" + (", and please report this bug." if is_bug else "."))
    return Failure("compile", headline, str(err), hint, err.pass_name, str(err.stage), tuple(err.passes_before),
                   tuple(nodes), before, is_bug, type(err.cause).__name__)


def nodes_of(err: BaseException, graph: Graph | None) -> list[str]:
    """Nodes an error concerns: `.node` attributes along its cause chain, then `node 'NAME'` phrases."""
    found = [node for e in _chain(err) if isinstance(node := getattr(e, "node", None), str)]
    texts: list[str] = []
    for e in _chain(err):
        texts += [str(e), *(e.problems if isinstance(e, ModelError) else ())]
    found += nodes_named(texts, graph)
    return _unique(found)


def nodes_named(texts: Iterable[str], graph: Graph | None) -> list[str]:
    """Names after `node '...'` in the texts; with a graph, quoted names that are its nodes too."""
    names: list[str] = []
    for text in texts:
        names += _NODE_PHRASE.findall(text)
        if graph is not None:
            names += [n for n in _QUOTED.findall(text) if graph.has_node(n)]
    if graph is not None:
        names = [n for n in names if graph.has_node(n)]
    return _unique(names)


def _chain(err: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.cause if isinstance(current, PassError) else current.__cause__ or current.__context__


def _on_nodes(nodes: list[str]) -> str:
    if not nodes:
        return ""
    shown = ", ".join(f"'{n}'" for n in nodes[:MAX_NAMED])
    more = f" and {len(nodes) - MAX_NAMED} more" if len(nodes) > MAX_NAMED else ""
    return f" at node{'s' if len(nodes) > 1 else ''} {shown}{more}"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0].rstrip(":") if text.strip() else ""


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))
