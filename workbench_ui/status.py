"""Showing a failure (from ge_core.debugging) in words: the headline, the facts, the full text."""

from __future__ import annotations

import streamlit as st

from ge_core.debugging import Failure
from workbench_ui.loading import LoadOutcome
from workbench_ui.navigation import DEBUG_PAGE
from workbench_ui.session import CompileOutcome
from workbench_ui.text import code_span, md_escape, shape_advice, web_words

PHASE_TITLES = {"load": "Import", "compile": "Compile", "run": "Run"}


DEBUG_LABEL = "Open the Debug page: the error in plain words, the node in its graph, a reproducer"


def debug_link(label: str = DEBUG_LABEL) -> None:
    """A link to the Debug page (left out when the page is not in the navigation, e.g. a page run alone)."""
    try:
        st.page_link(DEBUG_PAGE, label=label, icon=":material/bug_report:")
    except Exception:  # StreamlitAPIException: no such page registered in this run
        st.caption("The Debug page explains what went wrong.")


def failure_link(outcome: LoadOutcome) -> None:
    """Below the Model page's refusal: where to look next."""
    if outcome.result is None or not outcome.result.ok:
        debug_link()


def show_compile_failure(outcome: CompileOutcome) -> None:
    """The compile did not happen: the failure in one box and the way to the Debug page."""
    assert outcome.failure is not None
    st.markdown("#### The compile did not finish")
    show_failure_headline(outcome.failure)
    debug_link()


def show_failure_headline(failure: Failure) -> None:
    """The failure in one red box: what happened (naming pass, stage and nodes) and what to do."""
    text = md_escape(web_words(failure.headline))
    hint = web_words(failure.hint or "")
    if hint.startswith("Fix the model"):  # a shape problem: say what to do for its kind
        hint = " ".join(shape_advice(failure.message.splitlines())) or hint
    if hint:
        text += "  \n**What to do:** " + md_escape(hint)
    st.error(text, icon=":material/error:")


def show_failure_facts(failure: Failure) -> None:
    """Phase, pass, stage and nodes as facts."""
    facts = [f"**Phase:** {PHASE_TITLES[failure.phase]}"]
    if failure.pass_name:
        facts.append(f"**Failing pass:** {code_span(failure.pass_name)} (stage {code_span(failure.stage or '')})")
        ran = ", ".join(code_span(p) for p in failure.passes_before[-8:]) or "none"
        facts.append(f"**Passes that ran before it:** {ran}")
    if failure.nodes:
        facts.append("**Nodes concerned:** " + ", ".join(code_span(n) for n in failure.nodes))
    st.markdown("  \n".join(facts))


def show_failure_text(failure: Failure, exception: BaseException | None = None) -> None:
    """The full error text, and the traceback of a bug of ours."""
    label = "The traceback" if failure.bug else "What ge_core says (as `python -m ge_core` prints it)"
    with st.expander(label, expanded=not failure.bug):
        st.code(failure.message, language=None, wrap_lines=True)
    if exception is not None:
        with st.expander("Traceback (for the bug report)"):
            st.exception(exception)
