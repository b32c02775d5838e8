"""The sidebar's model picker, shared by every page: a bundled sample or an uploaded .onnx file, or a GE graph
dump (a dump sample, or an uploaded ge_proto / ge_onnx file or zipped dump folder), which the pages show as GE
compiled it (workbench_ui.ge_dump_view).

The address names the model: `?sample=resnet50`, or for an upload `?upload=<sha256 prefix>`. Uploads belong to
the browser session that made them (kept on disk by workbench_ui.uploads, removed when that session ends or
after a time to live): the address opens one in a reload or a second tab of that browser, and another browser
session opens it only through the share link its owner makes (`?upload=<id>&share=<secret>`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from ge_core.errors import ResourceLimitError
from ge_core.samples import DEFAULT_SAMPLE, Sample, dump_file_name, ge_dump_samples, list_samples, sample_bytes
from ge_core.viz import format_bytes
from workbench_ui import address
from workbench_ui.persist import keep
from workbench_ui.text import code_span
from workbench_ui.upload_store import Upload, UploadGone
from workbench_ui.uploads import session_owner, upload_store

SOURCE_KEY = "ge_source"
SAMPLE_KEY = "sample"  # also the URL query parameter: ?sample=mlp opens that sample
UPLOAD_KEY = "ge_upload"
UPLOADED_KEY = "ge_uploaded_file"  # OpenedUpload: the last upload opened, for every page
UPLOAD_PARAM = "upload"  # ?upload=<sha256 prefix>: an upload of this browser session (or one shared with it)
SHARE_PARAM = "share"  # ?share=<secret>: the share link's secret, with which another session opens an upload
SHARE_BUTTON_KEY = "ge_share_upload"
SOURCES = ("Sample", "Upload")

# Shown before each sample's title, so the list reads as groups (list_samples() orders it by kind).
KIND_PREFIX = {"sample": "Sample", "broken": "Broken", "light": "Zoo", "exported": "Export", "torch": "PyTorch",
               "ge_dump": "GE dump"}
GE_DUMP = "ge_dump"  # ModelChoice.kind of a GE graph dump (a sample or an upload)
DUMP_TYPES = ["txt", "pbtxt", "zip"]  # ge_proto_*.txt, ge_onnx_*.pbtxt, a zipped dump folder
OpenedUpload = tuple[Upload, str]  # an upload and the share secret it was opened with ("" for the owner's own)


@dataclass(frozen=True)
class ModelChoice:
    """What the user picked. `key` names the model bytes for the import cache; `fetch` reads them."""

    key: str
    title: str
    description: str
    kind: str  # a sample kind, or "upload"
    default_spec: str  # ATC-style input shapes to start from ("" when static)
    fetch: Callable[[], bytes]
    file_name: str = ""  # a GE dump's file name (its stage, its form, or a zip), for the dump reader

    @property
    def is_ge_dump(self) -> bool:
        return self.kind == GE_DUMP


def pick_model() -> ModelChoice | None:
    """Sidebar: sample or upload. None while "Upload" is chosen and no file is uploaded yet."""
    st.sidebar.header("Model")
    keep(SOURCE_KEY, SOURCES[1] if st.query_params.get(UPLOAD_PARAM) else SOURCES[0])
    source = st.sidebar.radio("Source", SOURCES, horizontal=True, key=SOURCE_KEY, persist_state="session",
                              label_visibility="collapsed")
    choice = _upload_choice() if source == "Upload" else _sample_choice()
    if source != "Upload":
        address.write(UPLOAD_PARAM, "")
        address.write(SHARE_PARAM, "")
    if choice is not None:
        st.sidebar.caption(choice.description)
    return choice


def _sample_choice() -> ModelChoice:
    samples = {s.name: s for s in [*list_samples(), *ge_dump_samples()]}
    names = list(samples)  # list_samples() orders them by kind: built, broken, real, exported; GE dumps last
    default = DEFAULT_SAMPLE if DEFAULT_SAMPLE in names else names[0]
    wanted = st.query_params.get(SAMPLE_KEY, default)  # a shared link opens its sample
    if wanted not in names:
        st.sidebar.warning(f"There is no sample called {code_span(wanted)}: showing the default one.",
                           icon=":material/warning:")
    keep(SAMPLE_KEY, wanted if wanted in names else default)
    if st.session_state[SAMPLE_KEY] not in names:  # a sample that went away since
        st.session_state[SAMPLE_KEY] = default
    name = st.sidebar.selectbox("Sample model", names, key=SAMPLE_KEY, persist_state="session",
                                format_func=lambda n: sample_label(samples[n]),
                                help="Built samples are small models made for one lesson each; broken ones "
                                     "show how refusals read; zoo models are real architectures; PyTorch "
                                     "ones (with torch installed) are nn.Modules captured by torch.export; "
                                     "GE dumps are graphs as GE compiled them (ge_proto dump files).")
    _sync_query_param(name, default)
    return sample_choice(samples[name])


def sample_choice(sample: Sample) -> ModelChoice:
    """A sample as the pages take a model (a GE dump sample with its dump file's name)."""
    file_name = dump_file_name(sample.name) if sample.kind == GE_DUMP else ""
    return ModelChoice(f"sample:{sample.name}:{_stamp(sample.path)}", sample.title, sample.description, sample.kind,
                       sample.input_shapes, functools.partial(sample_bytes, sample.name), file_name)


def _upload_choice() -> ModelChoice | None:
    file = st.sidebar.file_uploader(
        "ONNX model or GE dump", type=["onnx", *DUMP_TYPES], key=UPLOAD_KEY, on_change=_forget_removed_upload,
        help="An .onnx model (weights inside the file: uploads that reference external data files are refused), "
             "or a GE graph dump: a ge_proto_*.txt or ge_onnx_*.pbtxt file, or the dump folder zipped. It is kept "
             "for this browser session only; the share link below opens it elsewhere.")
    opened = _new_upload(file.name, file.getvalue()) if file is not None else _earlier_upload()
    if opened is None:
        return None
    upload, token = opened
    st.session_state[UPLOADED_KEY] = opened  # on another page the uploader is a new widget, empty: this follows
    address.write(SAMPLE_KEY, "")
    address.write(UPLOAD_PARAM, upload.id)
    address.write(SHARE_PARAM, token)
    if not token:
        _share_link(upload)
    what = "Uploaded file" if upload.kind == "upload" else "Uploaded GE dump"
    return ModelChoice(f"upload:{upload.digest}", upload.name,
                       f"{what}: {format_bytes(upload.size)}, sha256 {upload.digest[:12]}…", upload.kind, "",
                       functools.partial(upload_store().read, upload),
                       upload.name if upload.kind == GE_DUMP else "")


def _new_upload(name: str, data: bytes) -> OpenedUpload | None:
    """The file in the uploader, kept in this browser session's store (None, said why, over the quota)."""
    kind = "upload" if name.lower().endswith(".onnx") else GE_DUMP
    try:
        return upload_store().put(session_owner(), name, kind, data), ""
    except ResourceLimitError as err:
        st.sidebar.error(str(err), icon=":material/error:")
        return None


def _earlier_upload() -> OpenedUpload | None:
    """The file uploaded on another page of this session, else the one the address names (a reload, a
    second tab of this browser, a share link); None (said why) when there is neither or it is gone."""
    kept: OpenedUpload | None = st.session_state.get(UPLOADED_KEY)
    wanted, token = address.read(UPLOAD_PARAM), address.read(SHARE_PARAM)
    if kept is None and not wanted:
        return None
    upload_id, token = (kept[0].id, kept[1]) if kept is not None else (wanted, token)
    store = upload_store()
    try:
        upload = store.open_shared(upload_id, token) if token else store.get(session_owner(), upload_id)
    except UploadGone as gone:
        st.session_state.pop(UPLOADED_KEY, None)
        st.sidebar.warning(str(gone), icon=":material/warning:")
        return None
    if kept is not None:
        st.sidebar.caption(f"Using {code_span(upload.name)}, uploaded earlier; drop another file to replace it.")
    elif token:
        st.sidebar.caption(f"Using {code_span(upload.name)}, shared with you through its link; drop a file of "
                           "your own to replace it.")
    else:
        st.sidebar.caption(f"Using {code_span(upload.name)}, which the address names (uploaded in this browser "
                           "session earlier); drop another file to replace it.")
    return upload, token


def _share_link(upload: Upload) -> None:
    """The owner's way to open the upload in another browser session: an explicit link with its secret."""
    if not upload.share_token and not st.sidebar.button("Make a share link", key=SHARE_BUTTON_KEY,
                                                        icon=":material/share:",
                                                        help="Other browser sessions cannot open your upload "
                                                             "from its address: this link lets them."):
        return
    token = upload_store().share(upload.owner, upload.id)
    query = urlencode({UPLOAD_PARAM: upload.id, SHARE_PARAM: token})
    st.sidebar.code(f"{st.context.url or ''}?{query}", language=None)
    st.sidebar.caption("Anyone with this link opens this model while your browser session lasts.")


def _forget_removed_upload() -> None:
    """Uploader callback: a file removed by the user is forgotten on every page (a new one replaces it in
    `_upload_choice`). Streamlit gives the uploader a new id on each page, so its file does not follow the user."""
    if st.session_state.get(UPLOAD_KEY) is None:
        st.session_state.pop(UPLOADED_KEY, None)
        st.query_params.pop(UPLOAD_PARAM, None)  # removed: the address no longer opens it either
        st.query_params.pop(SHARE_PARAM, None)


def _sync_query_param(name: str, default: str) -> None:
    """Keep ?sample=NAME in the URL (plain names, unlike bind="query-params", which writes labels)."""
    if name == default:
        st.query_params.pop(SAMPLE_KEY, None)
    elif st.query_params.get(SAMPLE_KEY) != name:
        st.query_params[SAMPLE_KEY] = name


def sample_label(sample: Sample) -> str:
    """`Broken · unsupported operators`: the kind first, so the list reads as groups."""
    prefix = KIND_PREFIX.get(sample.kind, sample.kind)
    return f"{prefix} · {sample.title.removeprefix('Broken: ')}"


def _stamp(path: Path) -> str:
    """Changes when the sample file is rebuilt, so the cache never serves a stale import."""
    try:
        stat = path.stat()
    except OSError:
        return "missing"
    return f"{stat.st_mtime_ns}-{stat.st_size}"
