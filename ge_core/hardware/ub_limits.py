"""On-chip buffer limits per hardware profile, for the passes that must respect them (UB fusion).

A thin view of the hardware profiles (ge_core/hardware/profiles/*.json, with their sources): the Unified
Buffer (UB) size per AI Core and its alignment (Ascend 310/910: UB 256 KB per core; 910B-like: 192 KB; UB
and L1 are 32-byte aligned).
"""

from __future__ import annotations

from ge_core.hardware.loader import DEFAULT_PROFILE, load_profile, profile_names

UB_ALIGN_BYTES = 32  # every UB buffer starts on a 32-byte block: vector instructions work per block
UB_BYTES: dict[str, int] = {name: load_profile(name).buffers.ub for name in profile_names()}


def ub_bytes(profile: str = DEFAULT_PROFILE) -> int:
    """The UB size of a named profile (case-insensitive) or of a .json profile file; unknown names list
    the known ones."""
    return load_profile(profile).buffers.ub
