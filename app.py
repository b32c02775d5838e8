"""GE Workbench: the landing page. Run with `streamlit run app.py`.

Opens with a sample already imported: a learner sees a GE Graph without a click. Everything shown is
computed by ge_core; the helpers in workbench_ui hold the widgets.
"""

from __future__ import annotations

import streamlit as st

from workbench_ui.loading import load_model
from workbench_ui.model_picker import pick_model
from workbench_ui.sections import INTRO, show_model
from workbench_ui.shapes import current_spec, shape_box

st.set_page_config(page_title="GE Workbench", page_icon="🧭", layout="wide")
st.title("GE Workbench")
st.markdown(INTRO)

choice = pick_model()
if choice is None:
    st.info("Upload an `.onnx` file in the sidebar (weights inside the file), or switch back to a sample.")
else:
    outcome = load_model(choice, current_spec(choice))
    shape_box(choice, outcome)  # after the import: it is drawn only when the model has symbolic dims
    show_model(choice, outcome)
