"""The Dynamic shapes page through AppTest: it plays the requests through every strategy and says what it saw."""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

import ge_core
from ge_core.samples import get_sample
from ge_core.session import default_gears
from tests.app.apptest import open_app, open_page
from workbench_ui.text import md_escape

PAGE = "app_pages/dynamic.py"
SMALL = {"requests": "6", "distinct": "3", "low": "16", "high": "64", "seed": "2"}


def open_dynamic(sample: str | None = None, **params: str) -> AppTest:
    at = open_app(sample)
    for key, value in {**SMALL, **params}.items():
        at.query_params[key] = value
    return at.switch_page(PAGE).run()


def strategy_rows(at: AppTest) -> pd.DataFrame:
    (frame,) = [df.value for df in at.dataframe if "strategy" in df.value.columns]
    return frame


def test_a_static_model_plays_the_bert_style_encoder_with_every_strategy() -> None:
    at = open_dynamic()  # the default sample, conv_bn_relu, has no symbolic dims
    assert not at.exception and not at.error
    assert any("transformer_encoder" in i.value for i in at.info)
    rows = strategy_rows(at).set_index("strategy")
    titles = [ge_core.DYNAMIC_STRATEGY_TITLES[s] for s in ge_core.DYNAMIC_STRATEGIES]
    assert list(rows.index) == titles
    sizes = ge_core.request_sizes(6, 16, 64, 2, 3)
    static, gears, ranged, online = (rows.loc[t] for t in titles)
    assert ranged["compiles"] == len(set(sizes)) and ranged["warm start: cache hits"] == len(set(sizes))
    assert online["compiles"] == 1 and online["run-time decisions"] == len(set(sizes))
    assert gears["compiles"] == len(default_gears(16, 64))
    assert static["warm start: cache hits"] == 0
    intro = next(m.value for m in at.markdown if "What am I looking at?" in m.value)
    assert f"{len(sizes)} requests" in intro and f"{int(static['compiles'])} compiles" in intro
    assert len(at.get("vega_lite_chart")) == 2


def test_the_settings_live_in_the_address_and_a_symbolic_model_is_played_itself() -> None:
    at = open_dynamic("bert_encoder_torch", dim="sequence", high="32")
    assert not at.exception and not at.error
    assert not at.info  # bert has symbolic dims: no fallback
    assert at.query_params["high"] == "32"  # a chosen value stays in the address
    assert "dim" not in at.query_params  # the default dim (a history entry of its own) is left out
    assert "sequence" in [s.value for s in at.selectbox]
    assert "sequence" in next(m.value for m in at.markdown if "What am I looking at?" in m.value)


def test_sizes_the_model_cannot_take_are_shown_as_an_error_not_a_traceback() -> None:
    at = open_dynamic("bert_encoder_torch", dim="sequence", low="100", high="200")
    assert not at.exception
    assert any("refused a request" in e.value and "cannot broadcast" in e.value for e in at.error)


def test_the_defaults_fit_the_model_so_a_first_visit_plays_without_an_error() -> None:
    """Issue 40: bert_encoder_torch's position embeddings stop at 128; the default largest size was 256."""
    at = open_page(PAGE, "bert_encoder_torch")
    assert not at.exception and not at.error
    assert at.number_input[3].value == 128  # Largest: the largest sequence the model takes
    assert "high" not in at.query_params  # a default, kept out of the address
    assert any("defaults to 128" in c.value for c in at.caption)


def test_a_model_without_symbolic_dims_names_the_model_played_and_plays_every_distinct_size() -> None:
    at = open_dynamic("residual_block", distinct="4", requests="12")
    assert not at.exception and not at.error
    heading = at.subheader[0].value
    assert heading.startswith(md_escape(get_sample("transformer_encoder").title))
    assert "in place of" in heading
    intro = next(m.value for m in at.markdown if "What am I looking at?" in m.value)
    assert "(4 distinct sizes)" in intro
    latency = at.get("vega_lite_chart")[0].proto.spec
    assert "strokeDash" in latency  # static and range coincide: a dash of their own keeps both in sight
    assert any("lie on one another" in c.value and "static" in c.value and "range" in c.value for c in at.caption)
