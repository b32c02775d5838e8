"""Page state in the address (`?sample=resnet50&step=12&node=n2`), so a view can be shared and survives a
reload: read a value (with a default, and the values it may take), write one back (a default value is
left out of the address). Writing changes the address without reloading the page."""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

NODE = "node"  # the selected node (Model, Graph, Debug)
STEP = "step"  # the Graph page's pass: the record's number as the stepper shows it (index + 1)
COLOUR = "colour"  # the Graph page's overlay


def read(name: str, default: str = "", allowed: Collection[str] | None = None) -> str:
    """The address's value for `name`, or `default` when it is missing or not one of `allowed`."""
    value = st.query_params.get(name, default)
    if allowed is not None and value not in allowed:
        return default
    return str(value)


def read_int(name: str, default: int | None = None) -> int | None:
    value = st.query_params.get(name)
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def write(name: str, value: object, default: object = "") -> None:
    """Put `value` in the address (take it out when it is the default or empty)."""
    text = "" if value is None else str(value)
    if text == "" or value == default:
        st.query_params.pop(name, None)
    elif st.query_params.get(name) != text:
        st.query_params[name] = text
