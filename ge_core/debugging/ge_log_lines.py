"""One line of a GE log, read: what kind of line it is, its message, the key that finds its repeats, the op,
op type and kernel names it mentions, and the GE Status numbers it carries.

The shapes come from real logs (the fixtures in tests/debugging/ge_logs name their sources):

    [ERROR] GE(39944,demo):2021-11-18-01:09:39.548.671 [ge_generator.cc:624]39944 GenerateModel: ErrorNo: ...
    E40021: [PID: 2544330] 2025-07-04-14:50:35.119.251 Failed to compile Op [QuantBatchMatmulV3]. (oppath: ...
    Failure_to_Compile_Op(E40021): Failed to compile Op [trans_Cast_2,]. (oppath: ...
    EZ9999: Inner Error!
    EZ9999[PID: 110830] 2026-04-15-11:19:38.491.647 (EZ9999):  The error from device(...)[FUNC:...][FILE:...][LINE:580]
            TraceBack (most recent call last):
            build graph failed, graph id:0, ret:4294967295[FUNC:BuildModelWithGraphId][FILE:ge_generator.cc][LINE:1622]

plog lines are GE's own log (slog); the others are the error summary GE's error manager prints. Lines another
program wrapped (vLLM's `ERROR 03-04 12:57:08 [engine.py:409] `, ray's `(Worker pid=17096) `, docker
compose's `server  | `) are unwrapped first; ANSI colours and carriage returns are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ge_core.debugging.ge_codes import explain_status

ERROR_LEVELS = frozenset({"ERROR", "EXCEPTION", "CRITICAL", "FATAL"})
MAX_NAMES = 20  # per kind and message: a log listing thousands of nodes must not grow without bound

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_WRAPPER = re.compile("|".join((  # one alternation: tried once a line, again only when one matched
    r"^\s*\((?:[\w.-]+\s+)?pid=\d+(?:,\s*ip=[\d.:]+)?\)\s?",  # ray / vLLM workers
    r"^\s*\[Stage-\d+\]\s?",
    r"^\s*(?:ERROR|WARNING|INFO|DEBUG|CRITICAL)\s+\d\d-\d\d\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+"
    r"(?:\[[^\]]+\]|[\w.]+:\d+\])\s?",  # vLLM's logger
    r"^\[rank\d+\]:",  # torch.distributed
    r"^[\w.-]+\s+\|\s?",  # docker compose
)))
_PLOG = re.compile(r"\[(?P<level>[A-Z]+)\]\s+(?P<module>[A-Za-z_][\w-]*)\([^)]*\):\s*"
                   r"\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d[\d.]*\s+(?P<rest>.*)")
_PLOG_SOURCE = re.compile(r"\[(?P<file>[^\]\s:]+):(?P<line>\d+)\]\s*(?P<tags>(?:\[[^\]]*\])*)\s*(?:\d+\s+)?")
_PLOG_FUNC = re.compile(r"(?P<func>[A-Za-z_]\w*)(?::\d+)?(?:\]\s+|:\s*|\s+)(?=\S)")
_CODE = r"[EWI][0-9A-Z]\d{4}"
_HEADLINE = re.compile(rf"(?:^|[\s:!\]>])(?P<code>{_CODE}):\s+(?P<msg>.*)")
_TITLED = re.compile(rf"\b[A-Za-z_]+\((?P<code>{_CODE})\):\s*(?P<msg>.*)")
_DETAIL = re.compile(rf"^\s*(?P<code>{_CODE})(?:\[PID:\s*\d+\]\s*\S+\s*\((?P=code)\):|\s{{2,}})\s*(?P<msg>\S.*)")
_PY_ERRCODE = re.compile(rf"""['"]errCode['"]\s*:\s*['"](?P<code>{_CODE})['"]""")
_PY_MESSAGE = re.compile(r"""\},\s*['"](?P<msg>.*?)['"]\)\s*$|['"]message['"]\s*:\s*['"](?P<msg2>[^'"]*)""")
_STAMP = re.compile(r"^(?:\[PID:\s*\d+\]\s*)?(?:\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d[\d.]*\s*)?")
_TRACEBACK = re.compile(r"\bTraceBack \(most recent call last\):")
_CAUSE = re.compile(r"^\s*Possible Cause:\s*(?P<text>.*)")
_SOLUTION = re.compile(r"^\s*Solution:\s*(?P<text>.*)")
# [FUNC:f][FILE:x.cc][LINE:n] ends a message of GE's error manager; a pasted excerpt may cut it anywhere
_FRAME_TAIL = re.compile(r"\s*\[FUNC:(?P<func>[^\]]*)\](?:\[FILE:(?P<file>[^\]]*)\]?)?(?:\[LINE:(?P<line>\d*)\]?)?"
                         r"(?:\[[^\]]*\]?)?\s*$")
_KEY_PHRASE = re.compile(r"(?i)\b(?:build graph failed|compile graph failed|ret\s*[:=]\s*4294967295)")


@dataclass(frozen=True)
class Line:
    """A classified line. kind: plog, headline, banner, detail, traceback, cause, solution, frame, text."""

    kind: str
    text: str  # unwrapped, without the [FUNC][FILE][LINE] tail
    message: str = ""
    code: str = ""
    level: str = ""
    module: str = ""
    where: str = ""  # file:line and function, when the line says
    indented: bool = False


@dataclass
class Names:
    """Op names, op types and kernel names a message mentions, each in first-seen order, capped."""

    ops: list[str] = field(default_factory=list)
    op_types: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)

    def add(self, other: Names) -> None:
        for mine, theirs in ((self.ops, other.ops), (self.op_types, other.op_types), (self.kernels, other.kernels)):
            mine.extend(n for n in theirs if n not in mine and len(mine) < MAX_NAMES)


def unwrap(raw: str) -> str:
    """The line without colours, carriage returns and the prefixes other programs' loggers put in front."""
    text = raw.rstrip()
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text or "\x00" in text:
        text = text.replace("\r", "").replace("\x00", "")
    if text[:1] == "[" and text[1:2].isupper() and not text.startswith("[Stage-"):
        return text  # a plog line (most of a log): nothing wraps it
    for _ in range(4):  # a ray worker's vLLM line carries two wrappers
        wrapper = _WRAPPER.match(text)
        if wrapper is None or not wrapper.end():
            break
        text = text[wrapper.end():]
    return text


_QUIET = tuple(f"[{level}] " for level in ("INFO", "DEBUG", "EVENT", "TRACE", "WARNING", "WARN"))


def classify(raw: str) -> Line:
    text = unwrap(raw)
    if text.startswith(_QUIET):  # the bulk of a plog: read past it without further work
        return Line("plog", "", level=text[1:text.index("]")])
    indented = text[:1] in (" ", "\t")
    body, where = _split_tail(text) if "[FUNC:" in text else (text, "")
    if "[" in body and (plog := _PLOG.search(body)) is not None:
        line = _plog_line(plog, where)
        coded = _coded(line.message) if line.level in ERROR_LEVELS else None
        if coded is None:  # a framework's plog line may carry GE's summary: "...Ascend Error Message:EI0002: ..."
            return line
        kind = "banner" if coded[1].lower().startswith("inner error") else "headline"
        return Line(kind, body, coded[1], coded[0], line.level, line.module, line.where)
    if "TraceBack" in body and _TRACEBACK.search(body):
        return Line("traceback", body)
    for kind, pattern in (("cause", _CAUSE), ("solution", _SOLUTION)):
        if (found := pattern.match(body)) is not None:
            return Line(kind, body, found["text"].strip())
    if (detail := _DETAIL.match(body)) is not None:
        return Line("detail", body, _clean(detail["msg"]), detail["code"], where=where, indented=indented)
    if (coded := _coded(body)) is not None:
        code, message = coded
        kind = "banner" if message.lower().startswith("inner error") else "headline"
        return Line(kind, body, message, code, where=where)
    if where:
        return Line("frame", body, _clean(body), where=where, indented=indented)
    return Line("text", body, body.strip(), indented=indented)


def _split_tail(text: str) -> tuple[str, str]:
    """GE's error manager ends a message with [FUNC:f][FILE:x.cc][LINE:n]: the text before it, and `x.cc:n f`."""
    tail = _FRAME_TAIL.search(text)
    if tail is None:
        return text, ""
    where = f"{tail['file'] or '?'}:{tail['line'] or '?'} {tail['func']}".strip()
    return text[: tail.start()], where


def _plog_line(match: re.Match[str], tail_where: str) -> Line:
    rest = match["rest"]
    where = tail_where
    source = _PLOG_SOURCE.match(rest)
    if source is not None:
        rest = rest[source.end():]
        func = _PLOG_FUNC.match(rest)
        name = ""
        if func is not None:
            name, rest = func["func"], rest[func.end():]
        where = where or f"{source['file']}:{source['line']} {name}".strip()
    return Line("plog", match.group(0), _clean(rest), level=match["level"], module=match["module"].upper(),
                where=where)


def _coded(body: str) -> tuple[str, str] | None:
    """(code, message) of a line that reports an error code, wherever the line carries it."""
    if ":" not in body:
        return None
    errcode = _PY_ERRCODE.search(body) if "errCode" in body else None
    if errcode is not None:  # TBE's Python error: RuntimeError: ({'errCode': 'E80000', ...}, 'In op[...] ...')
        said = _PY_MESSAGE.search(body)
        message = (said["msg"] or said["msg2"]) if said is not None else body
        return errcode["code"], _clean(message)
    for pattern in (_TITLED, _HEADLINE):
        found = pattern.search(body)
        if found is not None:
            return found["code"], _clean(_STAMP.sub("", found["msg"].strip(), count=1))
    return None


def _clean(message: str) -> str:
    message = message.strip()
    if len(message) >= 2 and message[0] == message[-1] == '"':  # FE quotes its plog messages
        message = message[1:-1]
    return message.strip()


def is_key_phrase(text: str) -> bool:
    """A line outside GE's own formats that still reports a failed build worth keeping."""
    return _KEY_PHRASE.search(text) is not None


_LEADING_TAGS = re.compile(r"^(?:\s*\[[^\]]*\])+\s*")
_ERRORNO = re.compile(r"^ErrorNo:\s*\d+\([^)]*\)\s*")


def key_of(message: str) -> str:
    """Messages that differ only in numbers, GE's [Stage][Step] tags or the trailing punctuation are repeats:
    the same failure reported again by another module, another subgraph or a retry."""
    text = _LEADING_TAGS.sub("", _ERRORNO.sub("", _LEADING_TAGS.sub("", message)))
    text = text.replace("4294967295", "-1")
    text = re.sub(r"0x[0-9a-fA-F]+", "#", text)
    text = re.sub(r"\d+", "#", text)
    text = re.sub(r"[\s\"'`]+", " ", text).strip(" .,;:!").lower()
    return text


_OP_PATTERNS = (
    re.compile(r"\bnode\s*\[\s*name[:\s]\s*(?P<op>[^,\]]+?)\s*,\s*type[:\s]\s*(?P<type>[^\]\s]+)\s*\]", re.I),
    re.compile(r"\bnode\s*[:\s]\s*(?P<op>[\w./-]+)\((?P<type>[A-Za-z]\w*)\)", re.I),
    re.compile(r"\bOp\s*\[(?P<op>[^\[\],\s]+)(?:,\s*optype\s*\[(?P<type>[^\]\s]+)\])?", re.I),
    re.compile(r"\bnode\s*\[(?!\s*name[:\s])(?P<op>[^\[\]\s,]+)\]", re.I),
    re.compile(r"\b(?:pre-)?compile\s+node\s+(?P<op>[^\s\[\]]+?)\.?(?=\s|$)", re.I),
    re.compile(r"\b(?:op_name|node_name|node name)\s*[=:]\s*\[?(?P<op>[^\s,\[\]]+)", re.I),
    re.compile(r"\bDump node \((?P<op>[^)\s]+)\)"),
)
_TYPE_PATTERNS = (
    re.compile(r"\bop\s?type\s*:?\s*\[(?P<type>[^\]\s,]+)\]", re.I),
    re.compile(r"\bop_?type\s*[:=]\s*(?P<type>[A-Za-z]\w*)", re.I),
    re.compile(r"""["']Type["']\s*:\s*["'](?P<type>\w+)["']"""),
)
_KERNEL_PATTERNS = (
    re.compile(r"\b(?P<kernel>te_[A-Za-z0-9_]*?[0-9a-f]{12,}[A-Za-z0-9_]*)"),
    re.compile(r"\bkernel_?name\s*(?:is\s+|[=:]\s*\[?)(?P<kernel>[\w.-]+)", re.I),
    re.compile(r"\bkernel\[(?P<kernel>[^\]\s]+)\]"),
    re.compile(r"""["']kernel_name["']\s*:\s*["'](?P<kernel>[^"']+)["']"""),
)


def names_in(text: str) -> Names:
    """The op names, op types and kernel names `text` mentions."""
    names = Names()
    for pattern in _OP_PATTERNS:
        for found in pattern.finditer(text):
            _keep(names.ops, found["op"])
            if "type" in found.groupdict():
                _keep(names.op_types, found["type"])
    for pattern in _TYPE_PATTERNS:
        for found in pattern.finditer(text):
            _keep(names.op_types, found["type"])
    for pattern in _KERNEL_PATTERNS:
        for found in pattern.finditer(text):
            _keep(names.kernels, found["kernel"])
    return names


def _keep(into: list[str], name: str | None) -> None:
    name = (name or "").strip().strip(".,;:'\"")
    if name and not name.isdigit() and "%s" not in name and name not in into and len(into) < MAX_NAMES:
        into.append(name)


_STATUS = re.compile(r"\b(?:ErrorNo:\s*|ret(?:urn)?\s*(?:[:=]\s*|\[))(?P<value>0x[0-9a-fA-F]+|-?\d+)")


def statuses_in(text: str) -> list[int]:
    """The GE Status numbers (`ret:`, `ErrorNo:`) `text` carries, as unsigned words; other numbers are left out."""
    found: list[int] = []
    for match in _STATUS.finditer(text):
        status = explain_status(match["value"])
        if status is not None and status.value not in found:
            found.append(status.value)
    return found
