"""Markdown for Streamlit text elements: escaping user-written names, and the legality report."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from ge_core import ModelSummary

MAX_NODES_PER_OP = 12
MAX_PROBLEMS = 200

_MD_SPECIAL = re.compile("([" + re.escape(string.punctuation) + "])")


def md_escape(text: str) -> str:
    """Plain text for st.markdown/st.error: every ASCII punctuation mark backslash-escaped, so names such
    as `onnx::Reshape_1`, `a*b_c` or `$x` never turn into emphasis, emoji codes or LaTeX."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def code_span(text: str) -> str:
    """Inline code that survives backticks inside the name."""
    text = " ".join(text.split())
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def problems_markdown(summary: ModelSummary) -> str:
    """Every unsupported op (with the nodes using it) and every problem, as one markdown block."""
    nodes = sum(len(v) for v in summary.unsupported.values())
    parts = []
    if summary.unsupported:
        parts.append(f"{len(summary.unsupported)} operator type(s) without a kernel, used by {nodes} node(s)")
    if summary.problems:
        other = " other" if summary.unsupported else ""
        parts.append(f"{len(summary.problems)}{other} problem(s)")
    lines = [f"**The legality check refuses this model: {' and '.join(parts)}.**", ""]
    for op, users in summary.unsupported.items():
        shown = ", ".join(code_span(n) for n in users[:MAX_NODES_PER_OP])
        more = f" and {len(users) - MAX_NODES_PER_OP} more" if len(users) > MAX_NODES_PER_OP else ""
        used_by = "node" if len(users) == 1 else f"{len(users)} nodes:"
        lines.append(f"- {code_span(op)} has no kernel; used by {used_by} {shown}{more}")
    lines += [f"- {md_escape(web_words(p))}" for p in summary.problems[:MAX_PROBLEMS]]
    if len(summary.problems) > MAX_PROBLEMS:
        lines.append(f"- … and {len(summary.problems) - MAX_PROBLEMS} more (`python -m ge_core inspect` "
                     "lists them all)")
    if summary.unsupported:
        lines += ["", "**What to do:** replace those operators when exporting the model (or remove the nodes); "
                      "`python -m ge_core inspect --json` lists the supported operators."]
    advice = shape_advice(summary.problems)
    if advice:
        lines += ["", "**What to do:** " + " ".join(advice)]
    return "\n".join(lines)


SHAPE_BOX = "the sidebar's Input shapes box"
# ge_core's messages name the CLI's flags; on the web page the same thing is a box in the sidebar.
_WEB_WORDS = (
    (re.compile(r'Pass --input-shape (".*?") \(or feed --inputs\)\.'), rf"Type \1 in {SHAPE_BOX}."),
    (re.compile(r"Example: --input-shape (\".*?\")\."), rf"Example: \1 in {SHAPE_BOX}."),
    (re.compile(r"\(--input-shape (\".*?\")\)"), rf"(\1 in {SHAPE_BOX})"),
    (re.compile(r"or pass matching --input-shape values"), f"or type matching sizes in {SHAPE_BOX}"),
    (re.compile(r"(set (?:its|the) symbolic dims) with --input-shape"), rf"\1 in {SHAPE_BOX}"),
    (re.compile(r"give one with --input-shape"), f"give one in {SHAPE_BOX}"),
    (re.compile(r"^--input-shape (gives|names)"), r"The input-shape spec \1"),
    (re.compile(r"--input-shape"), "the Input shapes box"),
)


def web_words(text: str) -> str:
    """A ge_core message as the web page says it: the sidebar's boxes where the CLI has flags."""
    for pattern, words in _WEB_WORDS:
        text = pattern.sub(words, text)
    return text


def shape_advice(problems: Sequence[str]) -> list[str]:
    """What to do about the legality check's shape problems, one line per kind found."""
    advice = []
    if any("has no shape" in p for p in problems):
        advice.append(f"A graph input has no shape: give it one in {SHAPE_BOX} (`name:d0,d1,...`).")
    if any(re.search(r"symbolic|unknown dim", p) for p in problems):
        advice.append(f"Some sizes are symbolic: set them in {SHAPE_BOX}; shape inference then works them out.")
    if any(re.search(r"differ|broadcast|mismatch|expects|rank", p) for p in problems):
        advice.append("The shapes the model declares do not fit together at the nodes named: the model itself "
                      "is inconsistent there. Re-export it from its framework (check the layer's sizes); if a "
                      f"graph input's size is what is wrong, set the right one in {SHAPE_BOX}.")
    return advice


def head_lines(text: str, max_lines: int) -> tuple[str, int]:
    """The first `max_lines` lines of `text` and how many were cut."""
    lines = text.splitlines()
    return "\n".join(lines[:max_lines]), max(0, len(lines) - max_lines)
