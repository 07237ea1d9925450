"""Throwaway database servers for tests and demos: a local MariaDB, or a container.

:func:`throwaway_mariadb` runs the Debian ``mariadb-server`` binaries on a temporary
datadir, a free port bound to 127.0.0.1 and a private socket; it waits by polling
until the server answers and deletes everything afterwards. When a Docker engine
answers, :func:`container_server` runs MySQL 8 or MariaDB through testcontainers
instead; :func:`docker_engine` says whether one does (the ``docker`` package missing
counts as no engine).

    with throwaway_mariadb() as server:
        admin = server.connect()          # root, over the private socket
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql

from pushdown_lab.docker import docker_engine

SEARCH = ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")


class ServerUnavailable(RuntimeError):
    """No way to run the requested server here; the message says why."""


def find_binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name) or next(
            (str(Path(d) / name) for d in SEARCH if (Path(d) / name).is_file()), None
        )
        if found:
            return found
    raise ServerUnavailable(f"none of {', '.join(names)} is installed (apt-get install mariadb-server)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalMariaDB:
    """A mariadbd process on its own datadir; root logs in over the socket."""

    base: Path
    port: int = field(default_factory=free_port)
    host: str = "127.0.0.1"
    process: subprocess.Popen[bytes] | None = None
    flavor: str = "mariadb"
    #: server options given at install and at every start (e.g. ``--lower-case-table-names=1``,
    #: which must be the same for both)
    options: tuple[str, ...] = ()

    @property
    def datadir(self) -> Path:
        return self.base / "data"

    @property
    def tmpdir(self) -> Path:
        path = self.base / "tmp"
        path.mkdir(exist_ok=True)
        return path

    @property
    def socket(self) -> str:
        return str(self.base / "mysqld.sock")

    @property
    def log(self) -> Path:
        return self.base / "error.log"

    def _as_root(self) -> list[str]:
        return ["--user=root"] if os.geteuid() == 0 else []

    def install(self) -> None:
        cmd = [
            find_binary("mariadb-install-db", "mysql_install_db"),
            f"--datadir={self.datadir}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            *self.options,
            *self._as_root(),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603
        if done.returncode != 0:
            raise ServerUnavailable(f"mariadb-install-db failed: {done.stderr or done.stdout}")

    def start(self, timeout: float = 30.0) -> None:
        cmd = [
            find_binary("mariadbd", "mysqld"),
            "--no-defaults",
            f"--datadir={self.datadir}",
            f"--socket={self.socket}",
            f"--port={self.port}",
            f"--bind-address={self.host}",
            f"--pid-file={self.base / 'mysqld.pid'}",
            f"--log-error={self.log}",
            # a temporary directory of its own: servers of other test sessions on this machine
            # share /tmp, and an internal temporary table of one must never meet another's
            f"--tmpdir={self.tmpdir}",
            "--skip-name-resolve",
            "--innodb-buffer-pool-size=64M",
            *self.options,
            *self._as_root(),
        ]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
        self.wait_ready(timeout)

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise ServerUnavailable(f"mariadbd exited with {self.process.returncode}: {self.tail()}")
            try:
                self._knock()
                self.connect(connect_timeout=1).close()
                return
            except (OSError, pymysql.err.OperationalError):
                if time.monotonic() > deadline:
                    raise ServerUnavailable(
                        f"mariadbd did not answer within {timeout}s: {self.tail()}"
                    ) from None
                time.sleep(0.02)  # poll interval, not a fixed wait

    def _knock(self) -> None:
        """Raise OSError until the socket accepts (our own socket, always closed)."""
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(1)
            probe.connect(self.socket)

    def bind_failed(self, since: int = 0) -> bool:
        """Whether the error log, from byte ``since`` on, says the port was taken."""
        if not self.log.exists():
            return False
        with self.log.open("rb") as log:
            log.seek(since)
            text = log.read().decode(errors="replace")
        return "Bind on TCP/IP port" in text and "Address already in use" in text

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else "(no error log)"

    def connect(self, user: str = "root", password: str = "", **kw: Any) -> Any:
        """A connection over the private socket (root) or TCP (other accounts)."""
        if user == "root":
            return pymysql.connect(
                unix_socket=self.socket,
                user=user,
                password=password,
                autocommit=True,
                charset="utf8mb4",
                **kw,
            )
        return pymysql.connect(
            host=self.host,
            port=self.port,
            user=user,
            password=password,
            autocommit=True,
            charset="utf8mb4",
            **kw,
        )

    def kill(self) -> None:
        """SIGKILL the server, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout: float = 20.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


@contextlib.contextmanager
def throwaway_mariadb(parent: str | None = None, options: Sequence[str] = ()) -> Iterator[LocalMariaDB]:
    """A fresh MariaDB on 127.0.0.1 and a free port; deleted afterwards. ``options`` go to
    both ``mariadb-install-db`` and ``mariadbd`` (``--lower-case-table-names=1``)."""
    base = Path(tempfile.mkdtemp(prefix="pushdown-mariadb-", dir=parent))
    server = LocalMariaDB(base, options=tuple(options))
    try:
        server.install()
        for attempt in range(3):
            # picked just before the server binds it: another process may have taken the
            # one picked before the install; if so, another port
            server.port = free_port()
            said = server.log.stat().st_size if server.log.exists() else 0
            try:
                server.start()
                break
            except ServerUnavailable:
                server.stop()  # whatever is left of this attempt, before another one
                if attempt == 2 or not server.bind_failed(since=said):
                    raise
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def container_server(image: str = "mysql:8.4") -> Iterator[Any]:
    """MySQL 8 (or another image) through testcontainers, when a Docker engine answers.

    Yields the testcontainers container (``get_container_host_ip()``,
    ``get_exposed_port(3306)``, ``root_password``). Raises :class:`ServerUnavailable`
    with the reason when there is no engine or no testcontainers package.
    """
    if not docker_engine():
        raise ServerUnavailable("no Docker engine answers here; MySQL 8 runs only in a container")
    try:
        from testcontainers.mysql import MySqlContainer  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise ServerUnavailable("the testcontainers package is not installed") from exc
    with MySqlContainer(image) as container:
        yield container
