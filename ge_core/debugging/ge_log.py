"""A GE plog or console log, read into the chain of errors it reports: in order, the first cause on top,
each message once (with how often it was repeated), each error code explained, and the op, op type and
kernel names the chain mentions (a page can mark them on a graph).

Order. plog lines are written as things happen, so their order is causal: the deepest failure first, the
callers that gave up after it. GE's error summary prints a coded headline (`E40021: Failed to compile Op
[...]`), GE's own `Possible Cause` / `Solution`, then `TraceBack (most recent call last):` with the failing
calls innermost first. The headline takes the place of its TraceBack entry when the two say the same thing,
else it goes before its TraceBack; a bare `EZ9999: Inner Error!` gives its code to the message after it.

Bounds. A log is read line by line and never whole: a file larger than MAX_FILE_BYTES is refused before it
is opened, at most `max_lines` lines are read (the rest is reported as not read), a line is cut at
MAX_LINE_CHARS, a message keeps at most MAX_DETAILS continuation lines and the chain MAX_ENTRIES messages.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pandas as pd

from ge_core.debugging.ge_codes import CodeExplanation, StatusExplanation, explain_code, explain_status
from ge_core.debugging.ge_log_lines import (
    ERROR_LEVELS,
    Line,
    Names,
    classify,
    is_key_phrase,
    key_of,
    names_in,
    statuses_in,
)
from ge_core.errors import ModelError, ResourceLimitError, quote

MAX_FILE_BYTES = 512 * 2**20  # a plog rotates at a few tens of MB; a bigger file is not one log
MAX_LINES = 1_000_000
MAX_LINE_CHARS = 16_384
MAX_DETAILS = 40
MAX_ENTRIES = 1_000
# An ATC console log (tests/debugging/ge_logs/SOURCES.md names its source), the Debug page's example.
EXAMPLE = Path(__file__).resolve().parent / "data" / "examples" / "atc_strided_slice.log"
CHAIN_COLUMNS = ["#", "line", "code", "module", "message", "times", "where", "ops", "op_types", "kernels", "status"]


@dataclass
class ChainEntry:
    """One message of the chain. `line` is where it first appears (1-based); `count` how often it appears."""

    message: str
    line: int
    code: str = ""
    module: str = ""  # the plog module that logged it (GE, FE, TEFUSION, RUNTIME, ...), when a plog line did
    where: str = ""  # source file:line and function, when the log says
    count: int = 1
    details: list[str] = field(default_factory=list)  # the lines continuing the message (a Python stack, ...)
    ge_cause: str = ""  # GE's "Possible Cause:" printed with it
    ge_solution: str = ""  # GE's "Solution:" printed with it
    names: Names = field(default_factory=Names)
    statuses: list[int] = field(default_factory=list)

    @property
    def explanation(self) -> CodeExplanation | None:
        return explain_code(self.code) if self.code else None

    @property
    def status_explanations(self) -> list[StatusExplanation]:
        return [s for s in (explain_status(v) for v in self.statuses) if s is not None]


@dataclass(frozen=True)
class GELog:
    """The chain of errors a log reports, the first cause on top."""

    name: str
    errors: tuple[ChainEntry, ...]
    lines_read: int
    other_lines: int  # WARNING / INFO / EVENT plog lines and text that is not GE's, read past
    truncated: bool  # the log had more lines than were read
    dropped: int  # distinct messages beyond MAX_ENTRIES, counted only

    @property
    def first_cause(self) -> ChainEntry | None:
        return self.errors[0] if self.errors else None

    @property
    def codes(self) -> list[str]:
        return list(dict.fromkeys(e.code for e in self.errors if e.code))

    @property
    def names(self) -> Names:
        every = Names()
        for error in self.errors:
            every.add(error.names)
        return every


@dataclass
class _Block:
    """GE's error summary being read: a headline (or a bare `Inner Error!` code) and what follows it."""

    slot: int  # the chain position reserved for the headline
    headline: Line | None = None
    headline_line: int = 0
    code: str = ""  # a banner's code, waiting for the message it belongs to
    details: list[str] = field(default_factory=list)
    cause: str = ""
    solution: str = ""
    in_traceback: bool = False
    entries: list[ChainEntry] = field(default_factory=list)


class _Chain:
    def __init__(self) -> None:
        self.by_key: dict[str, tuple[int, ChainEntry]] = {}
        self.next_slot = 0
        self.dropped = 0
        self.other = 0

    def slot(self) -> int:
        self.next_slot += 1
        return self.next_slot

    def add(self, line: Line, number: int, slot: int | None = None) -> ChainEntry | None:
        key = key_of(line.message)
        if not key:
            return None
        if key in self.by_key:
            entry = self.by_key[key][1]
            entry.count += 1
        elif len(self.by_key) >= MAX_ENTRIES:
            self.dropped += 1
            return None
        else:
            entry = ChainEntry(line.message, number, module=line.module, where=line.where)
            self.by_key[key] = (self.slot() if slot is None else slot, entry)
        entry.code = entry.code or line.code
        entry.names.add(names_in(line.text))
        entry.statuses.extend(s for s in statuses_in(line.text) if s not in entry.statuses)
        return entry

    def errors(self) -> tuple[ChainEntry, ...]:
        return tuple(entry for _, entry in sorted(self.by_key.values(), key=lambda pair: pair[0]))


def parse_ge_log(lines: Iterable[str], name: str = "log", *, truncated: bool = False) -> GELog:
    """The chain of errors in `lines` (str lines, any line ending, colours and other loggers' prefixes allowed)."""
    chain = _Chain()
    block: _Block | None = None
    count = 0
    for count, raw in enumerate(lines, start=1):
        line = classify(raw[:MAX_LINE_CHARS])
        block = _step(chain, block, line, count)
    _close(chain, block)
    return GELog(name, chain.errors(), count, chain.other, truncated, chain.dropped)


def _step(chain: _Chain, block: _Block | None, line: Line, number: int) -> _Block | None:
    """Read one line; returns the summary block still open after it."""
    kind = line.kind
    if kind in ("headline", "banner"):
        _close(chain, block)
        block = _Block(chain.slot())
        if kind == "banner":
            block.code = line.code
        else:
            block.headline, block.headline_line = line, number
        return block
    if kind == "plog":
        _close(chain, block)
        if line.level in ERROR_LEVELS:
            chain.add(line, number)
        else:
            chain.other += 1
        return None
    if block is not None and kind in ("cause", "solution", "traceback", "detail", "frame"):
        return _in_block(chain, block, line, number)
    if kind in ("detail", "frame", "traceback"):  # a summary whose headline was not pasted
        return _in_block(chain, _Block(chain.slot()), line, number)
    return _text(chain, block, line, number)


def _in_block(chain: _Chain, block: _Block, line: Line, number: int) -> _Block:
    if line.kind == "cause":
        block.cause = block.cause or line.message
    elif line.kind == "solution":
        block.solution = block.solution or line.message
    elif line.kind == "traceback":
        block.in_traceback = True
    else:
        entry = chain.add(line, number)
        if entry is not None:
            if block.code and not line.code and not any(e.code for e in block.entries):
                entry.code = entry.code or block.code
            block.entries.append(entry)
    return block


def _text(chain: _Chain, block: _Block | None, line: Line, number: int) -> _Block | None:
    """A line in no format of GE's: a headline's continuation, a banner's indented message, or noise."""
    if block is not None and line.message:
        continues = block.headline is not None and not block.in_traceback and not (block.cause or block.solution)
        if continues and len(block.details) < MAX_DETAILS:  # past that, the text is not the headline's any more
            block.details.append(line.message)
            return block
        if line.indented and (block.in_traceback or block.code):
            _in_block(chain, block, Line("frame", line.text, line.message, indented=True), number)
            return block
    if block is not None and (not line.message or not line.indented or len(block.details) >= MAX_DETAILS):
        _close(chain, block)
        block = None
    if block is None and is_key_phrase(line.text):
        chain.add(Line("frame", line.text, line.message), number)
    else:
        chain.other += 1
    return block


def _close(chain: _Chain, block: _Block | None) -> None:
    """Place the block's headline: on its own TraceBack entry when they say the same, else before the TraceBack."""
    if block is None or block.headline is None:
        return
    headline = block.headline
    text = "\n".join([headline.text, *block.details])
    entry = chain.add(Line(headline.kind, text, headline.message, headline.code, headline.level, headline.module,
                           headline.where), block.headline_line, slot=block.slot)
    if entry is None:
        return
    entry.details = entry.details or block.details[:MAX_DETAILS]
    entry.ge_cause = entry.ge_cause or block.cause
    entry.ge_solution = entry.ge_solution or block.solution


def read_ge_log_file(path: str | Path, *, max_lines: int = MAX_LINES) -> GELog:
    """Read a log file line by line; a file over MAX_FILE_BYTES or one that is not text is refused."""
    file = Path(path)
    size = file.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ResourceLimitError(
            f"log {quote(file.name)} is {size / 2**20:,.0f} MB, more than the {MAX_FILE_BYTES // 2**20} MB read here.",
            hint="Keep its error lines: grep -E 'ERROR|E[0-9A-Z][0-9]{4}|TraceBack|FUNC:' plog-*.log > errors.log")
    with file.open("rb") as stream:
        return read_ge_log_stream(stream, file.name, max_lines=max_lines)


def read_ge_log_stream(stream: BinaryIO, name: str, *, max_lines: int = MAX_LINES) -> GELog:
    """Read a log from a binary stream (an upload, a file) line by line, at most `max_lines` lines."""
    lines = _text_lines(stream, name)
    read = _capped(lines, max_lines)
    log = parse_ge_log(read, name)
    truncated = next(lines, None) is not None
    return GELog(log.name, log.errors, log.lines_read, log.other_lines, truncated, log.dropped)


def parse_ge_log_text(text: str | bytes, name: str = "pasted log", *, max_lines: int = MAX_LINES) -> GELog:
    """Read pasted text (or bytes), with the same bounds as a file."""
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    return read_ge_log_stream(io.BytesIO(data), name, max_lines=max_lines)


def _capped(lines: Iterator[str], limit: int) -> Iterator[str]:
    for number, line in enumerate(lines, start=1):
        yield line
        if number >= limit:
            return


def _text_lines(stream: BinaryIO, name: str) -> Iterator[str]:
    """Lines as text, each read with a length limit (a line without end is cut, its rest skipped)."""
    number = 0
    while True:
        chunk = stream.readline(MAX_LINE_CHARS)
        if not chunk:
            return
        number += 1
        if b"\x00" in chunk and number <= 10:  # a log is text; NULs at its start mean a binary file
            raise ModelError(f"{quote(name)} line {number} holds binary data: this is not a GE log.",
                             hint="Upload the plog text file (plog-*.log) or paste the console output.")
        while not chunk.endswith(b"\n"):
            more = stream.readline(MAX_LINE_CHARS)
            if not more:
                break
            if more.endswith(b"\n"):
                break
        yield chunk.decode("utf-8", "replace")


def example_ge_log() -> tuple[str, str]:
    """(file name, text) of the example log: a failed ATC compile, quoted from a public issue."""
    return EXAMPLE.name, EXAMPLE.read_text(encoding="utf-8")


def chain_frame(log: GELog) -> pd.DataFrame:
    """The chain as a table (CHAIN_COLUMNS), first cause first; names joined by ", "."""
    rows = [{"#": number, "line": e.line, "code": e.code, "module": e.module, "message": e.message,
             "times": e.count, "where": e.where, "ops": ", ".join(e.names.ops),
             "op_types": ", ".join(e.names.op_types), "kernels": ", ".join(e.names.kernels),
             "status": "; ".join(f"{s.name} ({s.signed})" for s in e.status_explanations)}
            for number, e in enumerate(log.errors, start=1)]
    return pd.DataFrame(rows, columns=CHAIN_COLUMNS)
