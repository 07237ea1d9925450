"""The import contracts (pyproject.toml, ``[tool.importlinter]``) hold on this checkout: the
core's layers, no backend client in the core, no backend importing the app or the lab, and
each backend's client library imported by its one client module."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lint_imports() -> str:
    beside = Path(sys.executable).parent / "lint-imports"
    found = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert found, "lint-imports is missing: bash scripts/setup.sh dev installs it"
    return found


def test_the_import_contracts_are_kept() -> None:
    # this checkout's packages, ahead of any installed copy
    paths = [ROOT, *sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [_lint_imports(), "--no-cache", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
