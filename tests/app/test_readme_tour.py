"""The README's tour is real: each console block marked ``<!-- NAME-output -->`` is run
command by command on the embedded defaults, and what it shows is what the commands print
(a line ``...`` stands for one or more lines left out)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.app.service import AccessControl
from pushdown.app.settings.serve import ServeSettings

from ..rest.asgi import Door

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "demo.yaml", tmp_path / "examples" / "demo.yaml")
    return tmp_path


def console_block(marker: str) -> list[tuple[str, list[str]]]:
    """The block after ``<!-- marker -->``: each ``$ command`` with the lines it shows."""
    text = README.read_text()
    assert text.count(f"<!-- {marker} -->") == 1, marker
    block = text.split(f"<!-- {marker} -->")[1].split("```")[1]
    head, _, body = block.partition("\n")
    assert head == "console", marker
    steps: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"{marker}: output before any command"
            steps[-1][1].append(line)
    assert steps, marker
    return steps


def shows(shown: list[str], real: list[str]) -> bool:
    """``shown`` equals ``real``, where a line ``...`` stands for one or more real lines."""
    pattern = "".join("(?:[^\n]*\n)+" if line.strip() == "..." else re.escape(line) + "\n" for line in shown)
    return re.fullmatch(pattern, "".join(line + "\n" for line in real)) is not None


def pushdown(command: str) -> tuple[int, list[str]]:
    args = shlex.split(command.split("#")[0])
    assert args[0] == "pushdown", command
    result = CliRunner().invoke(main, args[1:], catch_exceptions=False)
    return result.exit_code, result.stdout.splitlines()


def test_the_apply_step_shows_what_apply_and_plan_print(cwd: Path) -> None:
    steps = console_block("apply-output")
    assert [command for command, _ in steps] == ["pushdown apply --spec examples/demo.yaml", "pushdown plan"]
    for command, shown in steps:
        code, out = pushdown(command)
        assert code == 0, (command, out)
        assert shows(shown, out), (command, out)
    assert (cwd / "pushdown.db").exists()


def test_the_explain_step_shows_the_trace(cwd: Path) -> None:
    assert pushdown("pushdown apply --spec examples/demo.yaml")[0] == 0
    [(command, shown)] = console_block("explain-output")
    code, out = pushdown(command)
    assert code == 3  # denied, as the README says
    assert shows(shown, out), out
    assert "..." not in out


def test_the_serve_step_shows_what_the_api_answers(cwd: Path) -> None:
    assert pushdown("pushdown apply --spec examples/demo.yaml")[0] == 0
    steps = console_block("serve-output")
    serve, *calls = steps
    assert serve[0].split("#")[0].split() == ["pushdown", "serve", "&"] and serve[1] == []
    settings = ServeSettings()
    base = f"http://{settings.host}:{settings.port}"
    assert f"# {base}, simple authentication" in serve[0] and settings.authenticators == ("simple",)
    assert len(calls) == 2
    door = Door(AccessControl.open())  # the application `pushdown serve` serves, in process
    try:
        for command, shown in calls:
            args = shlex.split(command)
            assert args[:3] == ["curl", "-s", "-u"] and len(args) == 5, command
            user, _, password = args[3].partition(":")
            assert password == "x" and args[4].startswith(base + "/api/"), command
            answer = door.request("GET", args[4][len(base) :], user)
            assert [answer.body.decode()] == shown, command
    finally:
        door.close()


def test_the_readme_stays_short_and_its_links_and_the_docs_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []
