"""A newcomer's first minutes: the README is a front page, its two commands are the ones CI and the docs
use, and every link in the README, docs/ and bench/README.md leads to a file of this repository."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md")), REPO / "bench" / "README.md"]
START = "python3 -m pip install -e . && python3 -m ge_core warmup && python3 -m streamlit run app.py"
MAX_README_LINES = 200
# A line that starts the workbench or installs the project (not an extra package such as torch).
STARTS_OR_INSTALLS = re.compile(r"streamlit run|pip install (-e )?\.(\s|$)|pip install -r ")
FENCE = re.compile(r"^\s*```")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def fenced_lines(text: str) -> list[str]:
    """The lines inside ``` code blocks, stripped."""
    inside, lines = False, []
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
        elif inside:
            lines.append(line.strip())
    return lines


def outside_code_blocks(text: str) -> list[str]:
    kept, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
        elif not inside:
            kept.append(line)
    return kept


def prose(text: str) -> str:
    """`text` without its code blocks and inline code spans (where a `[x](y)` is code, not a link)."""
    return "\n".join(re.sub(r"`[^`]*`", "", line) for line in outside_code_blocks(text))


def ci_command() -> str:
    """The one command .ci/run runs (its other lines are comments, shell options, cd and exports)."""
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for line in lines if line.strip() and not line.startswith("#")
                and not line.startswith(("set ", "cd ", "export "))]
    assert len(commands) == 1, commands
    return commands[0]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    headings = [line.lstrip("#") for line in outside_code_blocks(page.read_text(encoding="utf-8"))
                if line.startswith("#")]
    return {slug(h) for h in headings}


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines: move detail to docs/"


def test_the_readme_tests_as_ci_does() -> None:
    assert ci_command() in fenced_lines(README.read_text(encoding="utf-8"))


def test_the_readme_gives_the_start_command() -> None:
    assert START in fenced_lines(README.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_page_starts_the_workbench_as_the_readme_does(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    other = [line for line in fenced_lines(text) if STARTS_OR_INSTALLS.search(line) and line != START]
    assert other == [], f"install and start with the README's command: {START}"
    assert "requirements.txt" not in text and "requirements-dev.txt" not in text  # pyproject.toml lists them


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_leads_to_a_file_of_the_repository(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if target.startswith(("http://", "https://")):
            continue
        path_part, _, anchor = target.partition("#")
        path = (page.parent / path_part).resolve() if path_part else page
        if not path.is_relative_to(REPO) or not path.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: {path.name} has no heading #{anchor}")
    assert broken == []


def git(*args: str) -> str:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the git checkout (a clone is what a newcomer has)")
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=60).stdout


def test_every_local_link_of_the_readme_is_in_a_clone_and_the_venv_is_ignored() -> None:
    """Issue 40, friction 9: a link to a design page the clone lacked (on disk here, never committed); and the
    README's `.venv` showed up in `git status`."""
    tracked = set(git("ls-files").splitlines())
    missing = []
    for page in PAGES:
        for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
            path_part = target.partition("#")[0]
            if target.startswith(("http://", "https://")) or not path_part:
                continue
            relative = (page.parent / path_part).resolve().relative_to(REPO).as_posix()
            if relative not in tracked and not any(t.startswith(relative + "/") for t in tracked):
                missing.append(f"{page.name}: {target}")
    assert missing == [], "linked but not committed: a clone lacks them"
    assert "python3 -m venv .venv" in README.read_text(encoding="utf-8")
    assert git("check-ignore", ".venv/bin/python").strip() == ".venv/bin/python"


def test_the_link_reader_finds_links_and_skips_code() -> None:
    text = "See [cli](docs/cli.md#exit-codes) and ![shot](a.png).\n```\nx = [1](2)\n```\n`[not](a-link)`\n"
    assert LINK.findall(prose(text)) == ["docs/cli.md#exit-codes", "a.png"]
    assert slug(" `bench_fusion.py`") == "bench_fusionpy" and slug("The compile report") == "the-compile-report"


def test_every_topic_is_one_click_from_the_readme() -> None:
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in LINK.findall(prose(README.read_text()))}
    topics = [p for p in PAGES if p != README]
    assert [str(p.relative_to(REPO)) for p in topics if p.resolve() not in linked] == []
