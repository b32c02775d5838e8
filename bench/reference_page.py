"""A reference for bench_pages.py: plain Streamlit pages with no workbench code, timed the same way, to show
what Streamlit and the browser take on this machine before any page of ours does anything.

    ?page=table   a title and one table
    ?page=mix     the Fusion page's mix of elements: a sidebar with three widgets, a title, four metrics, a
                  bar chart, three filters, two tables and a few headings and captions (static data)
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

page = st.query_params.get("page", "table")
rng = np.random.default_rng(0)
st.title("Reference page")
if page == "mix":
    with st.sidebar:
        st.selectbox("Sample model", ["densenet121", "resnet50"])
        st.selectbox("Hardware", ["ascend910", "ascend910b"])
        st.text_input("Input shapes")
    for column, i in zip(st.columns(4), range(4), strict=True):
        column.metric(f"metric {i}", f"{i * 10}")
    patterns = pd.DataFrame({"pattern": [f"pattern {i}" for i in range(20)], "applied": rng.integers(0, 40, 20)})
    st.altair_chart(alt.Chart(patterns).mark_bar().encode(x="applied:Q", y=alt.Y("pattern:N", sort=None)))
    for column, i in zip(st.columns(3), range(3), strict=True):
        column.multiselect(f"filter {i}", ["a", "b", "c"], default=["a"])
    st.dataframe(pd.DataFrame(rng.random((100, 8))))
    for i in range(5):
        st.markdown(f"#### Section {i}")
        st.caption("A caption under the heading.")
    st.dataframe(pd.DataFrame(rng.random((50, 6))))
else:
    st.dataframe(pd.DataFrame(np.arange(100).reshape(20, 5)))
