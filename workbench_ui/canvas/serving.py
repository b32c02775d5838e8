"""Where the canvas's web app is served from: Streamlit's own static file serving, nothing else.

`server.enableStaticServing = true` (.streamlit/config.toml) makes `streamlit run app.py` serve the
repository's `static/` folder at `/app/static/` on its own port and origin. `static/model_explorer/` holds
Model Explorer's web app, vendored and patched by vendor.py. So the canvas needs no server of its own: it
starts and stops with the app, listens where the app listens (localhost), works offline, and the page can
talk to it (same origin). Streamlit's static route serves regular files under `static/` only (paths that
climb out, absolute paths and symlinks leading out are refused: tests/browser/test_canvas_security.py).
The app's few server calls are answered inside the page by shim.js; there is no file-reading endpoint.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
BUNDLE_DIR = ROOT / "static" / "model_explorer"
ENTRY = "canvas.html"  # the patched index.html
STATIC_ROUTE = "app/static/model_explorer"  # relative to the app's base URL


def entry_url() -> str:
    """The canvas page's address, relative to the site root (honours `server.baseUrlPath`)."""
    return site_path(f"{STATIC_ROUTE}/{ENTRY}")


def site_path(path: str) -> str:
    """`path` (relative to the app's base address, e.g. Streamlit's `/media/...` URLs) relative to the site
    root, under `server.baseUrlPath` when one is set."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return "/" + "/".join(part for part in (base, path.strip("/")) if part)


def serving_problem() -> str:
    """Why the canvas cannot be shown ("" when it can): the bundle is missing or static serving is off."""
    if not (BUNDLE_DIR / ENTRY).is_file():
        return (f"The canvas's web app is missing ({BUNDLE_DIR.relative_to(ROOT)}/{ENTRY}): restore the "
                "static/ folder from the repository, or run `python3 -m workbench_ui.canvas.vendor`.")
    if not st.get_option("server.enableStaticServing"):
        return ("The canvas needs Streamlit's static file serving: start the workbench from the repository "
                "folder (`python3 -m streamlit run app.py`, which reads .streamlit/config.toml) or pass "
                "`--server.enableStaticServing true`.")
    return ""
