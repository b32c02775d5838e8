"""The server's upload store (workbench_ui.upload_store) as the pages use it: one per server process, and the
owner id of this browser session.

The owner is the browser, not the Streamlit session: a reload or a second tab starts another Streamlit session
in the same browser, and must still open its uploads (the address carries `?upload=<id>`). A browser is known by
Streamlit's XSRF cookie, which it keeps for as long as the browser session lasts and sends with every page; its
token is a secret, so the owner id is a hash of it, never the token. Without that cookie (AppTest, or XSRF
protection switched off) the owner is this Streamlit session alone.

Settings (environment): GE_WORKBENCH_UPLOAD_DIR (folder; default a new temporary one per server process),
GE_WORKBENCH_UPLOAD_QUOTA (bytes per browser session), GE_WORKBENCH_UPLOAD_TTL (seconds unused before an upload
goes), GE_WORKBENCH_UPLOAD_GRACE (seconds an upload outlives the last session of its browser).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from workbench_ui.upload_store import UploadStore

XSRF_COOKIE = "_streamlit_xsrf"  # Streamlit's cookie (server.enableXsrfProtection, on in .streamlit/config.toml)
OWNER_KEY = "ge_upload_owner"  # the owner id when there is no cookie: this session's own
DEFAULT_QUOTA = 1 << 30
DEFAULT_TTL = 6 * 3600.0
DEFAULT_GRACE = 120.0  # a reload's new session arrives within seconds; a closed tab's uploads go soon after


@st.cache_resource(show_spinner=False)
def upload_store() -> UploadStore:
    """The store of this server process (made once, drawing nothing)."""
    folder = os.environ.get("GE_WORKBENCH_UPLOAD_DIR") or tempfile.mkdtemp(prefix="ge_workbench_uploads_")
    return UploadStore(Path(folder), quota=int(os.environ.get("GE_WORKBENCH_UPLOAD_QUOTA", DEFAULT_QUOTA)),
                       ttl=float(os.environ.get("GE_WORKBENCH_UPLOAD_TTL", DEFAULT_TTL)),
                       grace=float(os.environ.get("GE_WORKBENCH_UPLOAD_GRACE", DEFAULT_GRACE)))


@dataclass(frozen=True)
class _Presence:
    """This Streamlit session, counted among its owner's live sessions until it ends."""

    store: UploadStore
    owner: str
    seat: str


def _left(presence: _Presence) -> None:
    presence.store.session_ended(presence.owner, presence.seat)


@st.cache_resource(scope="session", on_release=_left, show_spinner=False)
def _presence(owner: str) -> _Presence:
    # Session-scoped: made on this session's first run, released (on_release) when the session ends.
    seat = secrets.token_hex(8)
    store = upload_store()
    store.session_started(owner, seat)
    return _Presence(store, owner, seat)


def session_owner() -> str:
    """The owner id of this browser session's uploads (and this session counted as one of its live ones)."""
    token = _browser_token()
    if token:
        owner = hashlib.sha256(b"ge-workbench upload owner:" + token).hexdigest()[:32]
    else:
        owner = str(st.session_state.setdefault(OWNER_KEY, secrets.token_hex(16)))
    _presence(owner)
    return owner


def _browser_token() -> bytes:
    """The secret token in Streamlit's XSRF cookie (b"" without one). The cookie is `2|mask|masked token|time`
    (Tornado's form, which Streamlit keeps): masked anew on each page load, so the token is unmasked first."""
    raw = str(st.context.cookies.get(XSRF_COOKIE) or "")
    parts = raw.split("|")
    if len(parts) != 4 or parts[0] != "2":
        return raw.encode()
    try:
        mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return raw.encode()
    return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked)) if mask else masked
