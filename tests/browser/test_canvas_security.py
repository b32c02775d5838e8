"""The canvas adds no way to read the machine's files: no address of the app returns a file outside static/.

The canvas's web app (Model Explorer's, vendored in static/model_explorer/) is served by Streamlit's static
file serving on the app's own port; Model Explorer's own server, whose `/api/v1/read_text_file?path=` returns
any file the process can read, is never started, and the few calls the web app makes to it are answered in
the page by shim.js. Here a real `streamlit run app.py` is asked, over raw HTTP (no client-side clean-up of
the path), for a file with a secret in it, for files of the repository outside static/, through `..`,
encoded and double-encoded `..`, backslashes, absolute paths, and symlinks placed in static/ that lead out;
and for Model Explorer's file endpoint, on the app and under the canvas's folder. No answer may hold what
those files hold. In the browser, the canvas's page itself gets no file through the shim either.
"""

from __future__ import annotations

import http.client
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from tests.browser.harness import REPO, Server, new_tab, skip_unless_available

skip_unless_available()

from playwright.sync_api import Browser  # noqa: E402  (after the skip: may be missing)

from tests.browser import canvas  # noqa: E402

STATIC = REPO / "static"
# Files of the repository outside static/, and a line each holds (what a leak would show).
REPO_FILES = {"app.py": "run_router()", ".streamlit/config.toml": "enableStaticServing",
              "workbench_ui/canvas/serving.py": "def serving_problem"}


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A file outside the repository holding a secret no answer may contain."""
    token = f"GE-SECRET-{secrets.token_hex(12)}"
    path = tmp_path_factory.mktemp("outside") / "secret.txt"
    path.write_text(f"{token}\n")
    return path, token


@pytest.fixture(scope="module")
def links_out(secret_file: tuple[Path, str]) -> Iterator[dict[str, str]]:
    """Symlinks inside static/ leading out of it (to the secret file, to its folder, to the repository):
    name -> the secret or line a leak through it would show. Removed afterwards."""
    path, token = secret_file
    made = {STATIC / f"ge_test_link_{secrets.token_hex(4)}": (path, token),
            STATIC / f"ge_test_dir_{secrets.token_hex(4)}": (path.parent, token),
            STATIC / "model_explorer" / f"ge_test_repo_{secrets.token_hex(4)}": (REPO, REPO_FILES["app.py"])}
    try:
        for link, (target, _) in made.items():
            link.symlink_to(target, target_is_directory=target.is_dir())
        yield {str(link.relative_to(STATIC)) + ("/secret.txt" if target == path.parent else
                                                "/app.py" if target == REPO else ""): leak
               for link, (target, leak) in made.items()}
    finally:
        for link in made:
            link.unlink(missing_ok=True)


def get(server: Server, path: str) -> tuple[int, bytes]:
    """GET `path` exactly as written (http.client sends the request line untouched)."""
    where = urlsplit(server.url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def escapes(target: str) -> list[str]:
    """Paths under the static route that try to reach `target` (relative to the repository root, or
    absolute): `..` plain, percent-encoded, double-encoded, with backslashes, and absolute forms."""
    up = [".." + "/", "%2e%2e/", "%2e%2e%2f", ".%2e/", "%2E%2E%2F", "%252e%252e%252f", "..%5c", "..\\", "....//"]
    out = []
    for base in ("/app/static/", "/app/static/model_explorer/", "/app/static/model_explorer/static_files/"):
        depth = base.count("/") + 8
        out += [base + step * depth + target.lstrip("/") for step in up]
    if target.startswith("/"):
        out += [f"/app/static/{target}", f"/app/static/{quote(target, safe='')}",
                f"/app/static//{target.lstrip('/')}", f"/app/static/file:{target}"]
    return out


def assert_nothing_leaks(server: Server, paths: list[str], leak: str) -> None:
    leaked = []
    for path in paths:
        status, body = get(server, path)
        if leak.encode() in body:
            leaked.append(f"{path} -> {status}")
    assert leaked == [], f"these addresses return a file outside static/: {leaked}"


def test_the_static_route_serves_the_canvas(server: Server) -> None:
    status, body = get(server, "/app/static/model_explorer/canvas.html")
    assert status == 200 and b"The canvas's server API, answered inside the page" in body


def test_no_path_climbs_out_of_static(server: Server, secret_file: tuple[Path, str]) -> None:
    path, token = secret_file
    assert_nothing_leaks(server, escapes(str(path)), token)
    for name, line in REPO_FILES.items():
        assert_nothing_leaks(server, [*escapes(name), f"/app/static/{name}", f"/app/{name}", f"/{name}"], line)


def test_symlinks_in_static_leading_out_are_not_followed(server: Server, links_out: dict[str, str]) -> None:
    for link, leak in links_out.items():
        assert_nothing_leaks(server, [f"/app/static/{link}", f"/app/static/{quote(link)}"], leak)


def test_other_routes_of_the_app_climb_out_neither(server: Server, secret_file: tuple[Path, str]) -> None:
    path, token = secret_file
    routes = ["/", "/static/", "/media/", "/component/ge_workbench.canvas/", "/_stcore/static/", "/Graph/"]
    paths = [route + step * 12 + str(path).lstrip("/") for route in routes for step in ("../", "%2e%2e%2f")]
    paths += [route + quote(str(path), safe="") for route in routes]
    assert_nothing_leaks(server, paths, token)
    for name, line in REPO_FILES.items():
        assert_nothing_leaks(server, [r + step * 4 + name for r in routes for step in ("../", "%2e%2e%2f")], line)


def test_model_explorers_file_endpoint_does_not_exist(server: Server, secret_file: tuple[Path, str]) -> None:
    path, token = secret_file
    for base in ("", "/app/static/model_explorer", "/app", "/Graph"):
        for endpoint in ("/api/v1/read_text_file", "/api/v1/load_graphs_json", "/apipost/v1/read_text_file"):
            status, body = get(server, f"{base}{endpoint}?path={quote(str(path))}")
            assert token.encode() not in body
            assert status in (400, 403, 404, 405) or body.lstrip().startswith(b"<!"), (
                f"{base}{endpoint} answers {status}: {body[:200]!r}")  # a 404, or Streamlit's own page


def test_the_canvas_page_reads_no_file_through_its_shim(server: Server, browser: Browser,
                                                         secret_file: tuple[Path, str]) -> None:
    """In the browser: the canvas's page asks its "server" (shim.js) for the secret file and gets a 404."""
    path, token = secret_file
    with new_tab(browser) as tab:
        tab.goto(f"{server.url}/")
        tab.wait_for_selector(canvas.CANVAS)
        frame = canvas.canvas_frame(tab)
        frame.wait_for_selector(canvas.RENDERER)
        answer = frame.evaluate("""async (path) => {
            const r = await fetch('/api/v1/read_text_file?path=' + encodeURIComponent(path));
            return {status: r.status, text: await r.text()};
        }""", str(path))
        assert answer["status"] == 404 and token not in answer["text"]
        assert "not served" in json.loads(answer["text"])["error"]
        other = frame.evaluate("""async () => {
            try { await fetch('https://example.com/'); return 'fetched'; } catch (err) { return String(err); }
        }""")
        assert "no requests to other sites" in other
