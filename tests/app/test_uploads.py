"""Uploads belong to the browser session that made them (issue 41): the store on disk (quota, time to live,
removal after the owner's last session ends, share links), and the sidebar: a second session cannot open the
first one's upload from its address, only through the share link, and a link to a model that is gone says so."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from ge_core.errors import ResourceLimitError
from tests.app.apptest import APP, TIMEOUT
from tests.app.models import tiny_model
from workbench_ui.model_picker import SHARE_BUTTON_KEY, SHARE_PARAM, UPLOAD_PARAM
from workbench_ui.text import md_escape
from workbench_ui.upload_store import UploadGone, UploadStore
from workbench_ui.uploads import upload_store


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def store_in(folder: Path, clock: Clock, quota: int = 100) -> UploadStore:
    return UploadStore(folder, quota=quota, ttl=60.0, grace=10.0, clock=clock)


def test_an_upload_is_its_owners_and_opens_elsewhere_only_through_its_share_link(tmp_path: Path) -> None:
    store = store_in(tmp_path, Clock())
    mine = store.put("alice", "m.onnx", "upload", b"model bytes")
    assert store.read(store.get("alice", mine.id)) == b"model bytes"
    assert mine.path.is_file() and str(mine.path).startswith(str(tmp_path / "alice"))
    with pytest.raises(UploadGone, match="no uploaded model"):
        store.get("bob", mine.id)
    token = store.share("alice", mine.id)
    assert store.share("alice", mine.id) == token  # one link per upload
    assert store.read(store.open_shared(mine.id, token)) == b"model bytes"
    with pytest.raises(UploadGone, match="names no model"):
        store.open_shared(mine.id, "guessed")


def test_the_quota_makes_room_from_the_oldest_upload_and_refuses_a_file_over_it(tmp_path: Path) -> None:
    store = store_in(tmp_path, Clock(), quota=100)
    first = store.put("alice", "a.onnx", "upload", b"a" * 60)
    store.put("alice", "b.onnx", "upload", b"b" * 60)
    assert store.bytes_kept("alice") == 60 and not first.path.exists()
    with pytest.raises(UploadGone, match="took its room"):
        store.get("alice", first.id)
    with pytest.raises(ResourceLimitError, match="over the 100 B"):
        store.put("alice", "big.onnx", "upload", b"c" * 101)
    assert store.put("bob", "a.onnx", "upload", b"a" * 60).path.exists()  # bob's quota is his own


def test_uploads_go_after_their_time_to_live_and_after_their_owners_last_session(tmp_path: Path) -> None:
    clock = Clock()
    store = store_in(tmp_path, clock)
    store.session_started("alice", "tab 1")
    stale = store.put("alice", "old.onnx", "upload", b"old")
    clock.now += 50
    fresh = store.put("alice", "new.onnx", "upload", b"new")
    token = store.share("alice", fresh.id)
    clock.now += 20  # old.onnx unused for 70 s, over the 60 s time to live
    with pytest.raises(UploadGone, match="not used for"):
        store.get("alice", stale.id)
    store.session_started("alice", "tab 2")
    store.session_ended("alice", "tab 1")
    clock.now += 30
    assert store.get("alice", fresh.id)  # a session of alice's is still live
    store.session_ended("alice", "tab 2")
    clock.now += 5
    assert store.get("alice", fresh.id)  # within the grace: a reload's new session would come back here
    clock.now += 10
    store.expire()
    assert not (tmp_path / "alice").exists() and store.bytes_kept() == 0
    with pytest.raises(UploadGone, match="is gone from this server: the browser session that uploaded it ended"):
        store.open_shared(fresh.id, token)


def session(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def test_a_second_session_opens_an_upload_only_through_its_share_link() -> None:
    first = session()
    first.sidebar.radio[0].set_value("Upload").run()
    first.sidebar.file_uploader[0].set_value(("mine.onnx", tiny_model(doc="issue 41 privacy"), "application/x"))
    first.run()
    upload_id = str(first.query_params[UPLOAD_PARAM])
    assert not first.exception and first.subheader[0].value == md_escape("mine.onnx")
    assert SHARE_PARAM not in first.query_params  # the owner's own address carries no secret

    stranger = session(upload=upload_id)  # the address alone, in another session
    assert not stranger.exception and not stranger.subheader
    assert "no uploaded model" in stranger.sidebar.warning[0].value
    assert "share link" in stranger.sidebar.warning[0].value

    first.sidebar.button(key=SHARE_BUTTON_KEY).click().run()
    link = parse_qs(urlsplit(first.sidebar.code[0].value).query)
    assert link[UPLOAD_PARAM] == [upload_id]
    friend = session(upload=upload_id, share=link[SHARE_PARAM][0])
    assert not friend.exception and friend.subheader[0].value == md_escape("mine.onnx")
    assert "shared with you" in friend.sidebar.caption[0].value + friend.sidebar.caption[-1].value

    store = upload_store()
    ttl, store.ttl = store.ttl, 0.0  # every upload past its time to live
    try:
        store.expire()
    finally:
        store.ttl = ttl
    late = session(upload=upload_id, share=link[SHARE_PARAM][0])
    assert not late.exception and not late.subheader
    assert "is gone from this server" in late.sidebar.warning[0].value
