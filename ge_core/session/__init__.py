"""GE's Session: graphs added, built and run by id, with GE's option names and dynamic shapes (gears,
ranges, online fusion). See ge_core/session/session.py."""

from ge_core.session.options import FUSION_MODES, KNOWN_OPTIONS, SessionOptions
from ge_core.session.session import RunRecord, Session

__all__ = ["FUSION_MODES", "KNOWN_OPTIONS", "RunRecord", "Session", "SessionOptions"]
