"""The Profile page's "how far to trust this" line and its Measured vs simulated tab through AppTest: an
op_summary of either layout beside the simulation, per op type and per task, and a calibration that lowers
the per-kernel error and becomes the sidebar's target. (AppTest cannot press a file uploader: the tests put
the upload where the uploader's callback puts it; tests/browser uploads through the real widget.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import ge_core
from ge_core.samples.registry import sample_bytes
from ge_core.viz import measured_against
from tests.app.apptest import APP
from workbench_ui.hardware_picker import HARDWARE_KEY, HARDWARE_PARAM
from workbench_ui.measured_view import MEASURED_KEY
from workbench_ui.model_picker import SAMPLE_KEY

PROFILE = "app_pages/profile.py"
FIXTURES = Path(__file__).resolve().parents[1] / "sim" / "fixtures"
TIMEOUT = 180


def measured_page(csv: Path | None, hardware: str = "ascend310p") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[SAMPLE_KEY] = "squeezenet"
    at.query_params[HARDWARE_PARAM] = hardware
    at.query_params["view"] = "Measured vs simulated"
    at.run()
    if csv is not None:
        at.session_state[MEASURED_KEY] = (csv.name, csv.read_bytes())
    return at.switch_page(PROFILE).run()


def metric(at: AppTest, label: str) -> str:
    (found,) = [m.value for m in at.metric if m.label == label]
    return str(found)


def test_the_page_says_how_far_to_trust_it() -> None:
    at = measured_page(None)
    assert not at.exception
    line = next(c.value for c in at.caption if "How far to trust this" in c.value)
    assert "Not calibrated" in line and "published" in line
    assert any("op_summary" in c.value for c in at.caption)  # how to get one


@pytest.mark.parametrize("name", ["op_summary_squeezenet_current.csv", "op_summary_squeezenet_older.csv"])
def test_an_op_summary_of_either_layout_shows_beside_the_simulation(name: str) -> None:
    at = measured_page(FIXTURES / name)
    assert not at.exception and not at.error
    compiled = ge_core.compile(sample_bytes("squeezenet"), opt_level="O3", hardware="ascend310p", verify=True)
    sim = ge_core.simulate(compiled, run=False)
    want = measured_against((FIXTURES / name).read_bytes(), name, compiled, sim)
    assert metric(at, "Tasks matched") == "37 of 38"
    assert metric(at, "Measured") == f"{want.totals['measured_us']:,.1f} µs"
    types = next(d.value for d in at.dataframe if "kernels" in d.value.columns)
    assert list(types["op_type"]) == list(want.types["op_type"])


def test_calibration_lowers_the_error_and_the_calibrated_profile_becomes_the_target() -> None:
    at = measured_page(FIXTURES / "op_summary_squeezenet_older.csv")
    at.button(key="ge_measured_calibrate_button").click().run()
    assert not at.exception and not at.error
    before = float(metric(at, "Per-kernel error before").lstrip("x"))
    after = float(metric(at, "After").lstrip("x"))
    assert after < before
    at.button(key="ge_measured_use").click().run()
    assert not at.exception and at.selectbox(key=HARDWARE_KEY).value == "upload"
    line = next(c.value for c in at.caption if "How far to trust this" in c.value).replace("\\", "")
    assert "Calibrated on op_summary_squeezenet_older.csv (37 kernels of SqueezeNet" in line
