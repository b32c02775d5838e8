"""Markdown for Streamlit text elements: escaping user-written names, and the legality report."""

from __future__ import annotations

import re
import string

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
    lines += [f"- {md_escape(p)}" for p in summary.problems[:MAX_PROBLEMS]]
    if len(summary.problems) > MAX_PROBLEMS:
        lines.append(f"- … and {len(summary.problems) - MAX_PROBLEMS} more (`python -m ge_core inspect` "
                     "lists them all)")
    return "\n".join(lines)


def head_lines(text: str, max_lines: int) -> tuple[str, int]:
    """The first `max_lines` lines of `text` and how many were cut."""
    lines = text.splitlines()
    return "\n".join(lines[:max_lines]), max(0, len(lines) - max_lines)
