"""Uploads kept on this server's disk, each belonging to the browser session that made it (issue 41).

    store.put(owner, "resnet.onnx", "upload", data) -> Upload    # kept under the owner's folder, on disk
    store.get(owner, upload_id) -> Upload                         # the owner's own: UploadGone otherwise
    store.share(owner, upload_id) -> token                        # an explicit share link's secret
    store.open_shared(upload_id, token) -> Upload                 # another session, with that link only
    store.read(upload) -> bytes
    store.expire()                                                # what is past its time to live goes

Any upload kind goes through it (an .onnx model, a GE dump file or zipped dump folder): `kind` is kept, not read.
An owner is an opaque id (workbench_ui.uploads makes it from the browser's session cookie), never a secret itself.
Each owner has a quota in bytes (its least recently used uploads make room for a new one); an upload goes when
it has not been used for `ttl` seconds, or `grace` seconds after the last session of its owner ended (a reload
ends a session and starts another at once: the grace keeps the file for it). Nothing here imports Streamlit.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ge_core.errors import GEError, ResourceLimitError
from ge_core.viz import format_bytes

ID_CHARS = 16  # an upload's id: its bytes' sha256, this many hex digits (the address's ?upload=)
TOMBSTONES_KEPT = 1024  # ids and share tokens of removed uploads remembered, so a link to one says "gone"


class UploadGone(GEError):
    """The address names an upload this session cannot open: removed, never made, or someone else's."""


@dataclass(frozen=True)
class Upload:
    """One stored upload: its bytes are in `path`, not in memory."""

    id: str
    owner: str
    name: str  # the file name as uploaded
    kind: str  # what the picker made of it ("upload", "ge_dump", ...)
    size: int
    path: Path
    digest: str  # the bytes' whole sha256 (names them for the import cache)
    share_token: str = ""  # set once the owner asked for a share link


@dataclass
class _Owner:
    uploads: OrderedDict[str, Upload] = field(default_factory=OrderedDict)  # least recently used first
    used: dict[str, float] = field(default_factory=dict)  # upload id -> last use (clock seconds)
    sessions: set[str] = field(default_factory=set)  # live sessions of this owner
    alone_since: float | None = None  # when its last session ended (None while one is live)


class UploadStore:
    """Per-owner uploads in `folder` (made on first use); thread-safe, shared by the server's sessions."""

    def __init__(self, folder: Path, *, quota: int, ttl: float, grace: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.quota = quota
        self.ttl = ttl
        self.grace = grace
        self._clock = clock
        self._owners: dict[str, _Owner] = {}
        self._shared: dict[str, tuple[str, str]] = {}  # share token -> (owner, upload id)
        self._gone: OrderedDict[str, str] = OrderedDict()  # "owner/upload id" or share token -> why it went
        self._lock = threading.RLock()

    def put(self, owner: str, name: str, kind: str, data: bytes) -> Upload:
        """Keep `data` for `owner` (the same bytes again: the upload it has, used now). A file over the quota
        is refused before it is written (ResourceLimitError); older uploads of the owner make room."""
        if len(data) > self.quota:
            raise ResourceLimitError(f"Upload '{name}' is {format_bytes(len(data))}, over the "
                                     f"{format_bytes(self.quota)} one session may keep on this server.",
                                     hint="Upload a smaller file, or run the workbench yourself "
                                          "(GE_WORKBENCH_UPLOAD_QUOTA sets the quota in bytes).")
        digest = hashlib.sha256(data).hexdigest()
        upload_id = digest[:ID_CHARS]
        with self._lock:
            self.expire()
            kept = self._owners.setdefault(owner, _Owner())
            if upload_id in kept.uploads:
                return self._touch(kept, upload_id)
            while kept.uploads and sum(u.size for u in kept.uploads.values()) + len(data) > self.quota:
                self._remove(kept, next(iter(kept.uploads)), "another upload of the same session took its room")
            path = self.folder / owner / upload_id
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            kept.uploads[upload_id] = Upload(upload_id, owner, name, kind, len(data), path, digest)
            self._gone.pop(f"{owner}/{upload_id}", None)
            return self._touch(kept, upload_id)

    def get(self, owner: str, upload_id: str) -> Upload:
        """The owner's upload `upload_id` (used now); UploadGone when the owner has none by that id."""
        with self._lock:
            self.expire()
            kept = self._owners.get(owner)
            if kept is None or upload_id not in kept.uploads:
                raise UploadGone(self._why_not(owner, upload_id),
                                 hint="Upload the file again; a model uploaded in another browser session "
                                      "opens here only through the share link that session can make.")
            return self._touch(kept, upload_id)

    def share(self, owner: str, upload_id: str) -> str:
        """The secret of a share link to the owner's upload (the same one on every call)."""
        with self._lock:
            upload = self.get(owner, upload_id)
            if not upload.share_token:
                upload = replace(upload, share_token=secrets.token_urlsafe(18))
                self._owners[owner].uploads[upload_id] = upload
                self._shared[upload.share_token] = (owner, upload_id)
            return upload.share_token

    def open_shared(self, upload_id: str, token: str) -> Upload:
        """The upload a share link names, for any session; UploadGone (saying why) when it is gone."""
        with self._lock:
            self.expire()
            owner, shared_id = self._shared.get(token, ("", ""))
            kept = self._owners.get(owner)
            if shared_id != upload_id or kept is None or upload_id not in kept.uploads:
                why = self._gone.get(token)
                text = (f"The shared model {upload_id} is gone from this server: {why}." if why else
                        f"This share link names no model on this server (upload {upload_id}).")
                raise UploadGone(text, hint="Ask whoever shared it to upload it again and send a new share link.")
            return self._touch(kept, upload_id)

    def read(self, upload: Upload) -> bytes:
        try:
            return upload.path.read_bytes()
        except FileNotFoundError:
            raise UploadGone(f"The uploaded file '{upload.name}' was removed from this server: "
                             f"{self._gone.get(f'{upload.owner}/{upload.id}', 'its session ended')}.",
                             hint="Upload it again.") from None

    def session_started(self, owner: str, session: str) -> None:
        with self._lock:
            kept = self._owners.setdefault(owner, _Owner())
            kept.sessions.add(session)
            kept.alone_since = None

    def session_ended(self, owner: str, session: str) -> None:
        """A session of `owner` closed; its uploads go `grace` seconds after its last one did."""
        with self._lock:
            kept = self._owners.get(owner)
            if kept is None:
                return
            kept.sessions.discard(session)
            if not kept.sessions:
                kept.alone_since = self._clock()
                sweep = threading.Timer(self.grace + 1.0, self.expire)
                sweep.daemon = True
                sweep.start()

    def expire(self) -> None:
        """Remove the uploads past their time to live, and those of owners whose sessions all ended."""
        with self._lock:
            now = self._clock()
            for owner, kept in list(self._owners.items()):
                ended = kept.alone_since is not None and now - kept.alone_since >= self.grace
                for upload_id in list(kept.uploads):
                    if ended:
                        self._remove(kept, upload_id, "the browser session that uploaded it ended")
                    elif now - kept.used[upload_id] >= self.ttl:
                        self._remove(kept, upload_id, f"it was not used for {self.ttl / 3600:g} hours")
                if ended or (not kept.uploads and not kept.sessions):
                    del self._owners[owner]
                    shutil.rmtree(self.folder / owner, ignore_errors=True)

    def bytes_kept(self, owner: str | None = None) -> int:
        """Bytes on disk, of one owner or of everyone."""
        with self._lock:
            owners = [self._owners[owner]] if owner in self._owners else [] if owner else self._owners.values()
            return sum(u.size for kept in owners for u in kept.uploads.values())

    def _touch(self, kept: _Owner, upload_id: str) -> Upload:
        kept.uploads.move_to_end(upload_id)
        kept.used[upload_id] = self._clock()
        return kept.uploads[upload_id]

    def _remove(self, kept: _Owner, upload_id: str, why: str) -> None:
        upload = kept.uploads.pop(upload_id)
        kept.used.pop(upload_id, None)
        upload.path.unlink(missing_ok=True)
        self._remember_gone(f"{upload.owner}/{upload_id}", why)  # said to its owner only
        if upload.share_token:
            self._shared.pop(upload.share_token, None)
            self._remember_gone(upload.share_token, why)

    def _remember_gone(self, key: str, why: str) -> None:
        self._gone[key] = why
        while len(self._gone) > TOMBSTONES_KEPT:
            self._gone.popitem(last=False)

    def _why_not(self, owner: str, upload_id: str) -> str:
        why = self._gone.get(f"{owner}/{upload_id}")
        if why:
            return f"The uploaded model {upload_id} is gone from this server: {why}."
        return f"This browser session has no uploaded model {upload_id} on this server."
