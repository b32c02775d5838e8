"""The sidebar's hardware target: none (CPU only), a built-in Ascend profile, or an uploaded profile JSON.

The choice goes into the sidebar's CompileConfig (`hardware`: a profile name or a .json path), so every
page compiles for it, and into the address (`?hw=ascend910`; an upload as `?hw=upload:<id>`). An uploaded
profile is checked field by field with `profile_problems` and every problem is listed; a good one is kept
in the upload store (workbench_ui.upload_store: on disk, because a CompileConfig names a profile file by its
path), as this browser session's own (issue 41): its address opens it in this session only, and it counts
against the session's quota and goes with the session.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import streamlit as st

from ge_core import profile_names
from ge_core.viz import profile_problems
from workbench_ui.persist import keep
from workbench_ui.text import code_span, md_escape
from workbench_ui.upload_store import Upload, UploadGone
from workbench_ui.uploads import session_owner, upload_store

HARDWARE_KEY = "ge_hardware"
HARDWARE_PARAM = "hw"  # ?hw=ascend910
PROFILE_UPLOAD_KEY = "ge_profile_upload"
UPLOADED_PROFILE_KEY = "ge_uploaded_profile"  # (file name, bytes) of the last profile upload, for every page
NONE = "none"
UPLOAD = "upload"
UPLOAD_PREFIX = "upload:"
PROFILE_KIND = "hardware_profile"  # its kind in the upload store
HARDWARE_HELP = ("The NPU the compile targets: the lowering passes (formats, TransData, tiling) run for it, "
                 "the Memory page shows device bytes and the Profile page simulates on it. "
                 "None compiles for the CPU executor only.")


@dataclass(frozen=True)
class HardwareChoice:
    """`target` is what CompileConfig.hardware takes (None: no target); `label` names it for people."""

    target: str | None
    label: str
    param: str  # its value in the address ("" when none)


NO_HARDWARE = HardwareChoice(None, "no hardware target (CPU only)", "")


def hardware_options() -> list[str]:
    return [NONE, *profile_names(), UPLOAD]


def pick_hardware() -> HardwareChoice:
    """Sidebar: the hardware target, opened from the address when it names one."""
    options = hardware_options()
    wanted = str(st.query_params.get(HARDWARE_PARAM, NONE))
    if wanted.startswith(UPLOAD_PREFIX):
        if kept_profile(wanted.removeprefix(UPLOAD_PREFIX)) is None:
            st.sidebar.warning(f"The address names an uploaded hardware profile ({code_span(wanted)}) this browser "
                               "session does not have (gone from the server, or uploaded in another session): "
                               "upload it again below.", icon=":material/warning:")
        wanted = UPLOAD
    elif wanted not in options:
        st.sidebar.warning(f"There is no hardware profile called {code_span(wanted)} (the built-in ones are "
                           f"{', '.join(profile_names())}): showing no hardware target.", icon=":material/warning:")
        wanted = NONE
    keep(HARDWARE_KEY, wanted)
    picked = st.sidebar.selectbox("Hardware", options, key=HARDWARE_KEY, persist_state="session",
                                  format_func=_option_label, help=HARDWARE_HELP)
    choice = _uploaded_choice() if picked == UPLOAD else (
        NO_HARDWARE if picked == NONE else HardwareChoice(str(picked), str(picked), str(picked)))
    _sync_address(choice)
    return choice


def _option_label(option: str) -> str:
    return {NONE: "None (CPU only)", UPLOAD: "Upload a profile (JSON)…"}.get(option, option)


def _uploaded_choice() -> HardwareChoice:
    file = st.sidebar.file_uploader("Hardware profile (JSON)", type=["json"], key=PROFILE_UPLOAD_KEY,
                                    on_change=_remember_upload,
                                    help="A profile like ge_core/hardware/profiles/ascend910.json; "
                                         '`"extends": "ascend910"` plus only the fields that differ works too.')
    kept: tuple[str, bytes] | None = (file.name, file.getvalue()) if file is not None else \
        st.session_state.get(UPLOADED_PROFILE_KEY)
    if kept is None:
        wanted = str(st.query_params.get(HARDWARE_PARAM, ""))
        upload = kept_profile(wanted.removeprefix(UPLOAD_PREFIX)) if wanted.startswith(UPLOAD_PREFIX) else None
        if upload is not None:  # this session's own, from the address (a reload, another page)
            st.sidebar.caption(f"Using {code_span(upload.name)} (sha256 {upload.id}…).")
            return HardwareChoice(str(upload.path), f"uploaded profile {upload.name}", wanted)
        st.sidebar.caption("No profile uploaded yet: compiling with no hardware target.")
        return NO_HARDWARE
    name, data = kept
    problems = upload_problems(name, data)
    if problems:
        st.sidebar.error("This hardware profile cannot be used:\n" + "\n".join(f"- {md_escape(p)}" for p in problems)
                         + "\n\nFix these fields and upload the file again. Compiling with no hardware target.",
                         icon=":material/error:")
        return NO_HARDWARE
    upload = upload_store().put(session_owner(), name, PROFILE_KIND, data)
    st.sidebar.caption(f"Using {code_span(name)} (sha256 {upload.id}…).")
    return HardwareChoice(str(upload.path), f"uploaded profile {name}", UPLOAD_PREFIX + upload.id)


def upload_problems(name: str, data: bytes) -> list[str]:
    """Every problem of an uploaded profile file, in words ([] when it is a usable profile)."""
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [f"'{name}' is not JSON ({exc}): save the profile as a UTF-8 JSON file."]
    return profile_problems(parsed, name)


def kept_profile(upload_id: str) -> Upload | None:
    """This session's uploaded profile `upload_id` (None: gone, or another session's)."""
    try:
        upload = upload_store().get(session_owner(), upload_id)
    except UploadGone:
        return None
    return upload if upload.kind == PROFILE_KIND else None


def use_profile(name: str, data: bytes) -> None:
    """Make a (checked) profile the sidebar's target, as an upload would: call from a widget callback."""
    st.session_state[UPLOADED_PROFILE_KEY] = (name, data)
    st.session_state[HARDWARE_KEY] = UPLOAD


def _remember_upload() -> None:
    file = st.session_state.get(PROFILE_UPLOAD_KEY)
    if file is None:
        st.session_state.pop(UPLOADED_PROFILE_KEY, None)
    else:
        st.session_state[UPLOADED_PROFILE_KEY] = (file.name, file.getvalue())


def _sync_address(choice: HardwareChoice) -> None:
    if not choice.param:
        st.query_params.pop(HARDWARE_PARAM, None)
    elif st.query_params.get(HARDWARE_PARAM) != choice.param:
        st.query_params[HARDWARE_PARAM] = choice.param
