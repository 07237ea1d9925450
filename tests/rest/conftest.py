"""``pushdown serve`` for the REST tests: run as a person runs it (a child process, JSON
log lines in a file), on a free port it chooses itself (``port = 0``: the log says which),
and the official client ``gravitino`` (apache-gravitino 1.3.1) pointed at it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.processes import no_orphans  # noqa: F401 - the check after every test

ROOT = Path(__file__).resolve().parents[2]
PUSHDOWN = (sys.executable, "-m", "pushdown.app.cli")


def wait_for(check: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> float:
    """Poll ``check`` until it holds; return the seconds it took (fail after ``timeout``)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{what}: not true within {timeout} s")
        time.sleep(0.02)
    return time.monotonic() - start


@dataclass
class ServeProcess:
    """``pushdown --config FILE serve`` as a child process, its JSON log lines in a file."""

    config: Path
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        env = {**os.environ, "PYTHONPATH": path, **self.env}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*PUSHDOWN, "--config", str(self.config), "serve", "--log-format", "json", "--port", "0"],
                stdout=subprocess.DEVNULL,
                stderr=out,
                env=env,
                cwd=self.config.parent,
            )

    def lines(self) -> list[dict[str, Any]]:
        out = []
        for raw in self.log.read_text(errors="replace").splitlines():
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(line, dict) and line.get("pid", self.proc.pid) == self.proc.pid:
                out.append(line)
        return out

    def port(self) -> int:
        def listening() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"pushdown serve exited: {self.log.read_text()[-2000:]}")
            return any("port" in line for line in self.lines())

        wait_for(listening, 60, "pushdown serve listens")
        return int(next(line["port"] for line in self.lines() if "port" in line))

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port()}"

    def ready(self) -> str:
        """The base URI once ``GET /api/version`` answers."""
        uri = self.uri

        def answers() -> bool:
            try:
                with urllib.request.urlopen(f"{uri}/api/version", timeout=5) as r:
                    return int(r.status) == 200
            except (urllib.error.URLError, OSError):
                return False

        wait_for(answers, 60, "pushdown serve answers")
        return uri

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(10)


@contextmanager
def serving(config: Path, log: Path, env: dict[str, str] | None = None) -> Iterator[ServeProcess]:
    server = ServeProcess(config, log, env or {})
    try:
        yield server
    finally:
        server.stop()


def init_store(config: Path) -> None:
    subprocess.run(
        [*PUSHDOWN, "--config", str(config), "init"],
        check=True,
        capture_output=True,
        cwd=config.parent,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
    )


def auth_as(user: str) -> Any:
    """The official client's simple authentication as ``user`` (it reads GRAVITINO_USER once)."""
    from gravitino.auth.simple_auth_provider import SimpleAuthProvider

    before = os.environ.get("GRAVITINO_USER")
    os.environ["GRAVITINO_USER"] = user
    try:
        return SimpleAuthProvider()
    finally:
        if before is None:
            del os.environ["GRAVITINO_USER"]
        else:
            os.environ["GRAVITINO_USER"] = before


def client(uri: str, user: str, metalake: str = "test") -> Any:
    from gravitino import GravitinoClient

    return GravitinoClient(uri, metalake, auth_data_provider=auth_as(user))


def admin_client(uri: str, user: str) -> Any:
    from gravitino import GravitinoAdminClient

    return GravitinoAdminClient(uri, auth_data_provider=auth_as(user))
