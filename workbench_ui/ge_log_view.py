"""The Debug page's section for a log from real GE: upload a plog or paste the console output; the chain of
errors it reports (first cause on top, each message once, each code in plain words with what to do) and the
op, op type and kernel names it mentions, marked where they are nodes of the model on screen.

A log is read from the upload or the paste only (never a server path), at most MAX_LINES lines of it.
`?gelog=example` opens the example log, so the view can be shared."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from typing import BinaryIO

import streamlit as st

from ge_core.debugging import GELog, chain_frame, example_ge_log, explain_code, parse_ge_log_text, read_ge_log_stream
from ge_core.errors import GEError
from workbench_ui import address
from workbench_ui.analysis import memo, table
from workbench_ui.text import code_span, md_escape

UPLOAD_KEY = "ge_gelog_upload"
PASTE_KEY = "ge_gelog_paste"
EXAMPLE_PARAM = "gelog"  # ?gelog=example: the example log
MAX_LINES = 300_000  # a couple of seconds of a plog; the rest of a longer log is said to be unread
MAX_PASTE_CHARS = 5_000_000
PLACEHOLDER = ("E40021: Failed to compile Op [conv1]. (oppath: [...], optype: [Conv2D])\n"
               "        TraceBack (most recent call last):\n        ...")


def show_ge_log_section(node_names: Collection[str], model_title: str) -> GELog | None:
    """The whole section; `node_names` are the nodes of the model on screen (to mark the ones the log names).
    The log read, when there is one."""
    st.markdown("#### A log from real GE")
    st.caption("Paste what ATC, torch_npu or MindSpore printed when a compile failed on an Ascend machine, or "
               "upload a plog (`~/ascend/log/debug/plog/plog-*.log`; `export ASCEND_GLOBAL_LOG_LEVEL=3` keeps "
               "it to errors). The chain below puts the first cause on top, folds repeats and explains each "
               "error code from GE's own table.")
    source = _source()
    if source is None:
        return None
    try:
        log = source()
    except GEError as err:
        st.error(f"That log cannot be read: {md_escape(str(err))}", icon=":material/error:")
        return None
    show_chain(log, node_names, model_title)
    return log


def _source() -> Callable[[], GELog] | None:
    """The upload, else the paste (the example is pasted for you): a function reading it, cached."""
    example_name, example_text = example_ge_log()
    if address.read(EXAMPLE_PARAM) == "example" and not st.session_state.get(PASTE_KEY):
        st.session_state[PASTE_KEY] = example_text  # before the text area exists: the address's example
    left, right = st.columns([2, 3])
    file = left.file_uploader("Upload a log", type=["log", "txt", "out"], key=UPLOAD_KEY,
                              help=f"Read line by line; at most {MAX_LINES:,} lines.")
    left.button("Load the example: a failed ATC compile", key="ge_gelog_example", on_click=_load_example,
                help="An ATC console log quoted from a public issue (the file names its source).")
    text = right.text_area("…or paste it here", key=PASTE_KEY, height=180, max_chars=MAX_PASTE_CHARS,
                           placeholder=PLACEHOLDER)
    is_example = file is None and text == example_text
    address.write(EXAMPLE_PARAM, "example" if is_example else "")
    if file is not None:
        return lambda: memo(("ge log upload", getattr(file, "file_id", file.name), file.size, MAX_LINES),
                            lambda: _read_upload(file))
    if not text.strip():
        return None
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
    name = example_name if is_example else "the pasted log"
    return lambda: memo(("ge log paste", digest, MAX_LINES), lambda: parse_ge_log_text(text, name, max_lines=MAX_LINES))


def _read_upload(file: BinaryIO) -> GELog:
    file.seek(0)
    return read_ge_log_stream(file, file.name, max_lines=MAX_LINES)


def _load_example() -> None:
    st.session_state[PASTE_KEY] = example_ge_log()[1]


def show_chain(log: GELog, node_names: Collection[str], model_title: str) -> None:
    if log.truncated:
        st.warning(f"Only the first {log.lines_read:,} lines of {code_span(log.name)} were read: keep the error "
                   "lines (`grep -E 'ERROR|TraceBack|FUNC:'`) and load those.", icon=":material/warning:")
    if not log.errors:
        st.info(f"No error in the {log.lines_read:,} lines of {md_escape(log.name)}: no `[ERROR]` plog line, no "
                "error code, no TraceBack.")
        return
    first = log.errors[0]
    cols = st.columns(4)
    cols[0].metric("Errors in the chain", f"{len(log.errors):,}")
    cols[1].metric("Repeats folded", f"{sum(e.count - 1 for e in log.errors):,}")
    cols[2].metric("Error codes", f"{len(log.codes):,}")
    cols[3].metric("Lines read", f"{log.lines_read:,}")
    code = f" {code_span(first.code)}" if first.code else ""
    st.error(f"**First cause** (line {first.line}){code}: {md_escape(first.message)}", icon=":material/error:")
    for each in log.codes:
        _show_code(each)
    _show_names(log, node_names, model_title)
    st.markdown("##### The chain, first cause first")
    table(chain_frame(log), "ge_gelog_chain", wide=("message", "where"))
    st.caption(f"{log.lines_read:,} lines read; {log.other_lines:,} other lines (INFO, WARNING, Python "
               "stacks) read past. `times`: how often the message appears, also from other modules and "
               "retries; messages differing only in numbers count as one.")


def _show_code(code: str) -> None:
    explained = explain_code(code)
    title = f" · {md_escape(explained.title.replace('_', ' '))}" if explained.title else ""
    module = f" · {md_escape(explained.module)}" if explained.module else ""
    st.markdown(f"**{code}**{module}{title}")
    st.info(f"{md_escape(explained.plain)}\n\n**What to do:** {md_escape(explained.what_to_do)}",
            icon=":material/lightbulb:")
    with st.expander(f"GE's own words for {code}, and the sources"):
        if explained.message:
            st.markdown(f"GE's message: {code_span(explained.message)}")
        for label, text in (("Possible cause", explained.ge_cause), ("Solution", explained.ge_solution)):
            if text:
                st.markdown(f"GE's {label.lower()}: {md_escape(text)}")
        st.caption(f"GE's part: {md_escape(explained.source)}. The plain words and what to do: "
                   f"{md_escape(explained.plain_basis or 'from the code shape alone')}.")


def _show_names(log: GELog, node_names: Collection[str], model_title: str) -> None:
    names = log.names
    if not (names.ops or names.op_types or names.kernels):
        return
    parts = [f"{label}: {', '.join(code_span(n) for n in found)}"
             for label, found in (("ops", names.ops), ("op types", names.op_types), ("kernels", names.kernels))
             if found]
    st.markdown("**Named in the chain** — " + "; ".join(parts))
    ours = [n for n in names.ops if n in node_names]
    if ours:
        st.success(f"{len(ours)} of them are nodes of {md_escape(model_title)}: "
                   f"{', '.join(code_span(n) for n in ours)} (find them on the Graph page).",
                   icon=":material/my_location:")
