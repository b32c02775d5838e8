"""Build ge_core/debugging/data/ge_error_codes.json and ge_status_codes.json from GE's own files.

GE's error-code table and its Status numbers live in Ascend/metadef (Apache-2.0). The snapshot used:

    git -C metadef show 649f6cc71babb259fea290045a5adf570b62b50c:error_manager/error_code.json > error_code.json
    git -C metadef show 649f6cc71babb259fea290045a5adf570b62b50c:inc/common/ge_common/ge_inner_error_codes.h > inner.h
    python3 scripts/ge_tables.py error_code.json inner.h 649f6cc71babb259fea290045a5adf570b62b50c

Every row keeps GE's own text (message template, cause, solution) and names its source. The plain-words
explanations are the workbench's own and live apart, in ge_error_plain.json, so GE's text and ours never mix.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "ge_core" / "debugging" / "data"
REPO = "Ascend/metadef"
TABLE_PATH = "error_manager/error_code.json"
INNER_PATH = "inc/common/ge_common/ge_inner_error_codes.h"

# Codes GE uses that are newer than the snapshot above, each from GE's own documentation page.
SUPPLEMENT = [
    {"code": "E40024", "module": "TEFusion Errors", "title": "Environment_Error_Call_Python_Function_Failed",
     "message": "Failed to call Python Method %s. Reason: %s.", "args": ["python function", "reason"],
     "cause": "The Python Method does not exist.",
     "solution": "1. Check that the called function is correct or that the Python dependency library is installed. "
                 "2. Check the CANN environment variable settings. 3. Reinstall the CANN package.",
     "source": "hicann/runtime@5a0e5303 docs/zh/error_code_ref/TEfusion-Errors/"
               "E40024-Environment_Error_Call_Python_Function_Failed.md (cause and solution translated from Chinese)"},
]

# The Status word's fields (ge_api_error_codes.h, GE_ERRORNO): runtime 2 bits, type 2, level 3, sysid 8,
# module 5, value 12; GE's own codes are host (1), error code (1), common level (0), system 8.
MODULES = ["COMMON", "CLIENT", "INIT", "SESSION", "GRAPH", "ENGINE", "OPS", "PLUGIN", "RUNTIME", "EXECUTOR",
           "GENERATOR", "LLM_ENGINE"]
DEVICE_MODULES = {"EXECUTOR"}  # GE_ERRORNO_EXECUTOR is the one family built with RT_DEVICE
MACRO = re.compile(r'\b(GE|LLM)_ERRORNO_(\w+)\(\s*(\w+)\s*,\s*(\w+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)', re.S)


def status_value(module: str, value: int) -> int:
    runtime = 0b10 if module in DEVICE_MODULES else 0b01
    return (runtime << 30) | (0b01 << 28) | (0 << 25) | (8 << 17) | (MODULES.index(module) << 12) | (value & 0xFFF)


def error_rows(table: dict[str, object], commit: str) -> list[dict[str, object]]:
    source = f"{REPO}@{commit[:8]} {TABLE_PATH}"
    rows: list[dict[str, object]] = []
    seen: set[str] = set()
    for entry in table["error_info_list"]:  # type: ignore[union-attr]
        code = str(entry["ErrCode"]).strip()
        if code in seen:
            continue
        seen.add(code)
        suggestion = entry.get("suggestion") or {}
        rows.append({"code": code, "module": str(entry.get("errClass") or "").strip(),
                     "title": str(entry.get("errTitle") or "").strip(),
                     "message": str(entry["ErrMessage"]),
                     "args": [a.strip() for a in str(entry.get("Arglist") or "").split(",") if a.strip()],
                     "cause": _text(suggestion.get("Possible Cause")), "solution": _text(suggestion.get("Solution")),
                     "source": source})
    rows += [row for row in SUPPLEMENT if row["code"] not in seen]
    return sorted(rows, key=lambda r: str(r["code"]))


def _text(value: object) -> str:
    text = " ".join(str(value or "").split())
    return "" if text == "N/A" else text


def status_rows(header: str, commit: str) -> list[dict[str, object]]:
    source = f"{REPO}@{commit[:8]} {INNER_PATH}"
    rows = [{"value": 0xFFFFFFFF, "name": "FAILED", "module": "", "desc": "failed",
             "source": f"{REPO}@{commit[:8]} inc/external/ge_common/ge_api_error_codes.h"}]
    for family, module, name, value, desc in MACRO.findall(header):
        mod = "LLM_ENGINE" if family == "LLM" else module
        if mod not in MODULES:
            continue
        rows.append({"value": status_value(mod, int(value, 0)), "name": name, "module": mod, "desc": desc,
                     "source": source})
    return rows


def main(table_file: str, header_file: str, commit: str) -> None:
    table = json.loads(Path(table_file).read_text(encoding="utf-8"))
    codes = {"about": "GE's error codes: code, GE's message template, GE's possible cause and solution, verbatim "
                      "from GE's own table (Apache-2.0), each row with its source.",
             "url": f"https://github.com/{REPO}/blob/{commit}/{TABLE_PATH}",
             "codes": error_rows(table, commit)}
    statuses = {"about": "GE's Status numbers (the `ret:` / `ErrorNo:` values in GE's logs) from GE's headers "
                         "(Apache-2.0); value = runtime<<30 | type<<28 | level<<25 | sysid<<17 | module<<12 | code.",
                "url": f"https://github.com/{REPO}/blob/{commit}/{INNER_PATH}",
                "statuses": status_rows(Path(header_file).read_text(encoding="utf-8"), commit)}
    _write(DATA / "ge_error_codes.json", codes, "codes")
    _write(DATA / "ge_status_codes.json", statuses, "statuses")


def _write(path: Path, table: dict[str, object], rows_key: str) -> None:
    """One row a line: small diffs when GE's table changes."""
    rows = table.pop(rows_key)
    head = json.dumps(table, ensure_ascii=False)[:-1]
    body = ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows)  # type: ignore[attr-defined]
    path.write_text(f'{head}, "{rows_key}": [\n{body}\n]}}\n', encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:4])
