"""The sidebar's input-shape box (ATC's --input_shape), one per model, shown for symbolic dims."""

from __future__ import annotations

import streamlit as st

from ge_core import Graph, prefill_input_shapes
from workbench_ui.loading import LoadOutcome, load_model, symbolic_inputs
from workbench_ui.model_picker import ModelChoice
from workbench_ui.persist import keep
from workbench_ui.text import code_span, md_escape

PREFILLED_KEY = "ge_shapes_prefilled"  # the model whose box was prefilled from its declared dims
SHAPE_HELP = (
    "Sizes for the model's symbolic dims, written as ATC's `--input_shape` takes them: `name:d0,d1,...` "
    "per input, inputs separated by `;`, e.g. `x:1,3,224,224;mask:1,128`. Only symbolic dims can be "
    "set. Press Enter to apply."
)


def spec_key(choice: ModelChoice) -> str:
    """One box per model, so switching models starts from that model's default spec."""
    return f"ge_shapes:{choice.key}"


def current_spec(choice: ModelChoice) -> str:
    """The spec to import with: the box's value from the last run, else the model's default.

    Read before the box is drawn, because whether the box is drawn depends on the import.
    """
    return str(st.session_state.get(spec_key(choice), choice.default_spec) or "")


def declared_spec(graph: Graph) -> str:
    """A spec for the inputs with symbolic dims, in sizes the model's shapes take (batch 1, a typical image or
    sequence size, else the smallest that passes shape inference: ge_core.prefill_input_shapes): a start to
    edit. (1 for each symbolic dim was refused at once by a 3x3 pool or a 256-sample STFT.)"""
    return prefill_input_shapes(graph)


def shape_box(choice: ModelChoice, outcome: LoadOutcome) -> None:
    """Draw the box when the model has symbolic dims, or when a spec is set (so a bad one can be fixed).
    A model without a spec of its own (an upload) gets the box prefilled from its declared dims, once: read
    current_spec() again after the box, to import with it."""
    symbolic = symbolic_inputs(outcome.result.graph) if outcome.result is not None else {}
    if not symbolic and not current_spec(choice):
        return
    key = spec_key(choice)
    if symbolic and not choice.default_spec and key not in st.session_state and outcome.result is not None:
        st.session_state[key] = declared_spec(outcome.result.graph)
        st.session_state[PREFILLED_KEY] = choice.key
    keep(key, choice.default_spec)
    st.sidebar.text_input("Input shapes", key=spec_key(choice), help=SHAPE_HELP, persist_state="session",
                          placeholder="x:1,3,224,224;mask:1,128")
    if symbolic:
        dims = "; ".join(f"{code_span(name)}: {md_escape(', '.join(params))}" for name, params in symbolic.items())
        prefilled = (" Prefilled from the model's declared dims with sizes its shapes take (batch 1, a typical "
                     "image or sequence size, else the smallest that passes shape inference): edit and press Enter."
                     if st.session_state.get(PREFILLED_KEY) == choice.key else "")
        st.sidebar.caption(f"Symbolic dims: {dims}.{prefilled}")
        say_when_the_shapes_are_refused(choice, outcome)


def say_when_the_shapes_are_refused(choice: ModelChoice, outcome: LoadOutcome) -> None:
    """When the model imports without the box's shapes but refuses them, say so: the shapes are the cause,
    and what to type instead."""
    spec = current_spec(choice).strip()
    result = outcome.result
    if not spec or result is None or result.ok:
        return
    bare = load_model(choice, "").result
    if bare is None or not bare.ok:
        return  # the model itself is refused: the page says why
    suggestion = prefill_input_shapes(bare.graph)
    instead = f" Type sizes it takes, e.g. {code_span(suggestion)}." if suggestion and suggestion != spec else (
        " Type larger sizes for its symbolic dims.")
    st.sidebar.warning(f"The input shapes {code_span(spec)} are the cause: the model imports without them but "
                       f"refuses these ({md_escape(result.problems[0]) if result.problems else 'see the page'})."
                       + instead, icon=":material/straighten:")
