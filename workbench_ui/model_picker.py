"""The sidebar's model picker, shared by every page: a bundled sample or an uploaded .onnx file, or a GE graph
dump (a dump sample, or an uploaded ge_proto / ge_onnx file or zipped dump folder), which the pages show as GE
compiled it (workbench_ui.ge_dump_view).

The address names the model: `?sample=resnet50`, or for an upload `?upload=<sha256 prefix>`, which opens
while this server still has the file (every upload is kept, for every session, the most recent
`UPLOADS_KEPT`), so a reload, a second tab or a shared link shows the same model."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ge_core.samples import DEFAULT_SAMPLE, Sample, dump_file_name, ge_dump_samples, list_samples, sample_bytes
from ge_core.viz import format_bytes
from workbench_ui import address
from workbench_ui.persist import keep
from workbench_ui.shared_cache import SharedCache, shared_cache
from workbench_ui.text import code_span

SOURCE_KEY = "ge_source"
SAMPLE_KEY = "sample"  # also the URL query parameter: ?sample=mlp opens that sample
UPLOAD_KEY = "ge_upload"
UPLOADED_KEY = "ge_uploaded_file"  # (name, bytes) of the last upload, for every page
UPLOAD_PARAM = "upload"  # ?upload=<sha256 prefix>: an uploaded model this server has
DIGEST_CHARS = 16
UPLOADS_KEPT = 8
SOURCES = ("Sample", "Upload")

# Shown before each sample's title, so the list reads as groups (list_samples() orders it by kind).
KIND_PREFIX = {"sample": "Sample", "broken": "Broken", "light": "Zoo", "exported": "Export", "torch": "PyTorch",
               "ge_dump": "GE dump"}
GE_DUMP = "ge_dump"  # ModelChoice.kind of a GE graph dump (a sample or an upload)
DUMP_TYPES = ["txt", "pbtxt", "zip"]  # ge_proto_*.txt, ge_onnx_*.pbtxt, a zipped dump folder


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
        "ONNX model or GE dump", type=["onnx", *DUMP_TYPES], key=UPLOAD_KEY, on_change=_remember_upload,
        help="An .onnx model (weights inside the file: uploads that reference external data files are refused), "
             "or a GE graph dump: a ge_proto_*.txt or ge_onnx_*.pbtxt file, or the dump folder zipped.")
    kept = (file.name, file.getvalue()) if file is not None else _earlier_upload()
    if kept is None:
        return None
    name, data = kept
    digest = hashlib.sha256(data).hexdigest()
    uploaded_models().put(digest[:DIGEST_CHARS], (name, data))
    address.write(SAMPLE_KEY, "")
    address.write(UPLOAD_PARAM, digest[:DIGEST_CHARS])
    kind = "upload" if name.lower().endswith(".onnx") else GE_DUMP
    what = "Uploaded file" if kind == "upload" else "Uploaded GE dump"
    return ModelChoice(f"upload:{digest}", name, f"{what}: {format_bytes(len(data))}, sha256 {digest[:12]}…",
                       kind, "", lambda: data, name if kind == GE_DUMP else "")


def _earlier_upload() -> tuple[str, bytes] | None:
    """The file uploaded on another page of this session, else the one the address names (a reload, a
    second tab, a shared link) while the server has it; None (said why) when there is neither."""
    kept: tuple[str, bytes] | None = st.session_state.get(UPLOADED_KEY)
    if kept is not None:  # on another page the uploader is a new widget, empty: use the file uploaded there
        st.sidebar.caption(f"Using {code_span(kept[0])}, uploaded earlier; drop another file to replace it.")
        return kept
    wanted = str(st.query_params.get(UPLOAD_PARAM, ""))
    if not wanted:
        return None
    found = uploaded_models().get(wanted)
    if found is None:
        st.sidebar.warning(f"The address names an uploaded model ({code_span(wanted)}) this server no longer "
                           "has: upload the file again.", icon=":material/warning:")
        return None
    st.sidebar.caption(f"Using {code_span(found[0])}, which the address names (uploaded to this server "
                       "earlier); drop another file to replace it.")
    st.session_state[UPLOADED_KEY] = found  # it follows the user to the other pages, as an upload does
    return found


def uploaded_models() -> SharedCache[str, tuple[str, bytes]]:
    """sha256 prefix -> (file name, bytes) of the models uploaded to this server, shared by its sessions."""
    return shared_cache("model_uploads", UPLOADS_KEPT)


def _remember_upload() -> None:
    """Uploader callback: keep the file (or forget it, when the user removed it) for the other pages.

    Streamlit gives the uploader a new id on each page, so its file would not follow the user there."""
    file = st.session_state.get(UPLOAD_KEY)
    if file is None:
        st.session_state.pop(UPLOADED_KEY, None)
        st.query_params.pop(UPLOAD_PARAM, None)  # removed: the address no longer opens it either
    else:
        st.session_state[UPLOADED_KEY] = (file.name, file.getvalue())


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
