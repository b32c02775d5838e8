"""On-chip buffer limits per hardware profile, for the passes that must respect them (UB fusion).

A stand-in until the simulator's full hardware profiles land: only the Unified Buffer (UB) size per AI
Core and its alignment, from DESIGN.md's hardware table (Ascend 310/910: UB 256 KB per core;
910B-like: 192 KB; UB and L1 are 32-byte aligned). Sources: Huawei's Ascend 310/910 datasheets and
CANN's platform configuration files (the `UB_SIZE` entries of the SoC ini files).
"""

from __future__ import annotations

from ge_core.errors import UsageError

KIB = 1024
UB_BYTES: dict[str, int] = {
    "ascend310": 256 * KIB,
    "ascend910": 256 * KIB,
    "ascend910b": 192 * KIB,
}
DEFAULT_PROFILE = "ascend910"
UB_ALIGN_BYTES = 32  # every UB buffer starts on a 32-byte block: vector instructions work per block


def ub_bytes(profile: str = DEFAULT_PROFILE) -> int:
    """The UB size of a named profile (case-insensitive); unknown names list the known ones."""
    try:
        return UB_BYTES[profile.lower()]
    except KeyError:
        raise UsageError(f"unknown hardware profile '{profile}'.",
                         hint=f"Known profiles: {', '.join(sorted(UB_BYTES))}.") from None
