"""Vendoring Model Explorer's web app into static/model_explorer/ (a developer's tool, not run by the app).

    python3 -m pip install --no-deps ai-edge-model-explorer==VERSION   # its web app is all we take
    python3 -m workbench_ui.canvas.vendor                               # or: ... vendor PATH/TO/web_app

The workbench serves the canvas with Streamlit's static file serving (same origin as the page, no port of
its own), so the files live in the repository, patched once here:

- index.html becomes canvas.html: Angular strips a trailing `index.html` from the base address, which
  leaves the router a path it has no route for; under another name the page is its own route.
- `<base href>` becomes relative, and the bundle's root-absolute `/static_files/...` URLs relative, so the
  app works from any folder (`/app/static/model_explorer/`, or under Streamlit's `server.baseUrlPath`).
- The Google font it loads from fonts.gstatic.com is dropped (the machine may be offline; its CSS falls
  back to Arial/Helvetica) and so is the `preconnect` to that site.
- shim.js goes first into `<head>`: it answers the app's few server calls inside the page (see shim.js).

Nothing else is changed, so updating is: install the new wheel with --no-deps, run this, run the browser
tests. The bundle is Apache-2.0 (NOTICE and LICENSE are written next to it).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import sys
from pathlib import Path

from workbench_ui.canvas.serving import BUNDLE_DIR, ENTRY

SHIM = Path(__file__).with_name("shim.js")
LICENSE_TEXT = Path("/usr/share/common-licenses/Apache-2.0")  # Debian's copy of the license text
REMOTE_FONTS = re.compile(r"@font-face\{[^}]*https://fonts\.gstatic\.com[^}]*\}")
PRECONNECT = '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>'
CODE = (".html", ".js", ".css")
NOTICE = """Model Explorer web app (ai-edge-model-explorer {version}, model_explorer/web_app)
Copyright 2024 The Model Explorer Authors (Google LLC). Licensed under the Apache License, Version 2.0
(LICENSE in this folder). The bundle includes third-party libraries under their own licenses, named in
its @license comments and in the app's "Third-party libraries" dialog.

Changes made by GE Workbench (workbench_ui/canvas/vendor.py): index.html renamed canvas.html; its base
address and the /static_files/ URLs made relative; the remote Google font and its preconnect removed;
workbench_ui/canvas/shim.js added first in <head>. The other files are unchanged.
"""


def installed_web_app() -> Path:
    spec = importlib.util.find_spec("model_explorer")
    if spec is None or spec.origin is None:
        raise SystemExit("model_explorer is not installed: pip install --no-deps ai-edge-model-explorer, "
                         "or give the path of a web_app folder")
    return Path(spec.origin).parent / "web_app"


def installed_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("ai-edge-model-explorer")
    except metadata.PackageNotFoundError:
        return "unknown"


def patch_index(html: str, shim: str) -> str:
    """index.html as canvas.html (see the module docstring); refuses a page that no longer looks as expected."""
    for needle in ('<base href="/">', "<head>"):
        if needle not in html:
            raise SystemExit(f"index.html has no {needle!r}: the bundle changed, check the patches")
    html = html.replace(PRECONNECT, "")
    html = REMOTE_FONTS.sub("", html)
    html = html.replace('<base href="/">', f'<base href="{ENTRY}">')
    html = html.replace('"/static_files/', '"static_files/').replace("url(/static_files/", "url(static_files/")
    html = html.replace("<head>", f"<head><script>\n{shim}</script>", 1)
    if "fonts.gstatic.com" in html or "https://" in _tags(html):
        raise SystemExit("canvas.html still loads something from the internet")
    return html


def _tags(html: str) -> str:
    """The page without its license comment (which names apache.org)."""
    return re.sub(r"<!--.*?-->", "", html, flags=re.S)


def needed_files(source: Path) -> list[Path]:
    """The bundle's scripts and styles, and the files they or index.html name (the rest is left out)."""
    files = [p for p in source.rglob("*") if p.is_file() and not p.is_symlink() and p.name != "index.html"]
    code = {p: p.read_text(errors="replace") for p in [source / "index.html", *files] if p.suffix in CODE}

    def named(path: Path) -> bool:
        return any(path.name in text for other, text in code.items() if other != path)

    return sorted(p for p in files if (p.parent == source and p.suffix in CODE) or named(p))


def vendor(source: Path, target: Path = BUNDLE_DIR) -> None:
    if not (source / "index.html").is_file():
        raise SystemExit(f"{source} holds no index.html: not Model Explorer's web_app folder")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    (target / ENTRY).write_text(patch_index((source / "index.html").read_text(), SHIM.read_text()))
    for path in needed_files(source):
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".css":
            dest.write_text(path.read_text().replace("url(/static_files/", "url(static_files/"))
        else:
            shutil.copyfile(path, dest)  # a copy of the bytes: never a link
    (target / "NOTICE").write_text(NOTICE.format(version=installed_version()))
    if LICENSE_TEXT.is_file():
        shutil.copyfile(LICENSE_TEXT, target / "LICENSE")
    print(f"vendored {source} -> {target} ({sum(f.stat().st_size for f in target.rglob('*')) / 1e6:.1f} MB)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web_app", nargs="?", type=Path, help="a model_explorer/web_app folder (default: installed)")
    args = parser.parse_args(argv)
    vendor(args.web_app or installed_web_app())


if __name__ == "__main__":
    main(sys.argv[1:])
