"""GE's Session: graphs added, built and run by id, with GE's option names and dynamic shapes (gears,
ranges, online fusion). See ge_core/session/session.py; playback.py plays requests through each strategy."""

from ge_core.session.options import FUSION_MODES, KNOWN_OPTIONS, SessionOptions
from ge_core.session.playback import (
    STRATEGIES,
    STRATEGY_TITLES,
    DynamicAxis,
    Playback,
    Request,
    default_gears,
    play,
    request_sizes,
    symbols,
)
from ge_core.session.session import RunRecord, Session

__all__ = ["FUSION_MODES", "KNOWN_OPTIONS", "STRATEGIES", "STRATEGY_TITLES", "DynamicAxis", "Playback", "Request",
           "RunRecord", "Session", "SessionOptions", "default_gears", "play", "request_sizes", "symbols"]
