"""A throwaway Hive Metastore 4 (standalone, 4.0.1 from Maven Central), on loopback only.

The same surface as :class:`pushdown_lab.metastore.LocalMetastore` (``uri``, ``kill``,
``restart``, ``close``): embedded Derby in a temporary directory, the schema created on first
start, the settings of the 2.3 one, and Hive 4's own ``metastore.thrift.bind.host`` set to the
loopback address. The stock ``HiveMetaStore`` main runs under a small wrapper of ours
(``java/StdinBoundMain.java``) that ends the JVM when the pipe from the starting process
closes, as the 2.3 launcher does. The jars come through :mod:`pushdown_lab.maven`
(``HIVE4_METASTORE``): Hive's ``hive-standalone-metastore-server:4.1.0`` is not published on
Central, 4.0.1 is, and runs on JDK 17.

    with throwaway_metastore4() as hms:     # ready when entered (about 10 s)
        hms.uri                              # thrift://127.0.0.1:PORT
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from pushdown_lab.maven import HIVE4_METASTORE, MavenUnavailable, cache_dir, classpath
from pushdown_lab.metastore import LocalMetastore, MetastoreUnavailable, java_tool, loopback

__all__ = ["Hive4Metastore", "throwaway_metastore4"]

WRAPPER = "StdinBoundMain"
MAIN = "org.apache.hadoop.hive.metastore.HiveMetaStore"


def wrapper_classes() -> Path:
    """The compiled wrapper (no dependencies), cached by its source."""
    source = importlib.resources.files("pushdown_lab").joinpath(f"java/{WRAPPER}.java").read_bytes()
    target = cache_dir() / "stdin-bound" / hashlib.sha256(source).hexdigest()[:16]
    if (target / f"{WRAPPER}.class").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
    try:
        (build / f"{WRAPPER}.java").write_bytes(source)
        done = subprocess.run(  # noqa: S603 - fixed arguments, no shell
            [java_tool("javac"), "-nowarn", "-d", str(build), str(build / f"{WRAPPER}.java")],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise MetastoreUnavailable(f"compiling {WRAPPER} failed: {done.stderr[-2000:]}")
        with contextlib.suppress(OSError):  # another process may have won the race: fine
            build.rename(target)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return target


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class Hive4Metastore(LocalMetastore):
    """One Hive 4 metastore process on its own work directory and a port fixed at creation."""

    def __init__(self, workdir: Path, *, host: str = "127.0.0.1", heap: str = "512m") -> None:
        try:
            self.classpath = classpath(HIVE4_METASTORE)
        except MavenUnavailable as exc:
            raise MetastoreUnavailable(str(exc)) from exc
        super().__init__(workdir, host=host, port=_free_port(loopback(host)), heap=heap, jars=workdir)

    def command(self) -> list[str]:
        conf = self.workdir / "conf"
        site = (conf / "hive-site.xml").read_text()
        bind = f"  <property><name>metastore.thrift.bind.host</name><value>{self.host}</value></property>\n"
        (conf / "hive-site.xml").write_text(site.replace("</configuration>", bind + "</configuration>"))
        cp = [str(conf), str(wrapper_classes()), *(str(j) for j in self.classpath)]
        return [
            java_tool("java"),
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            f"-Dderby.system.home={self.workdir}",
            "-cp",
            os.pathsep.join(cp),
            WRAPPER,
            MAIN,
            "-p",
            str(self.port),
        ]

    def _wait_ready(self, timeout: float, offset: int) -> None:
        from pushdown_hive.client import HiveUnavailable, MetastoreClient

        deadline = time.monotonic() + timeout
        while True:
            assert self.process is not None
            try:
                # a bare connect first: Thrift logs every refused connection
                socket.create_connection((self.host, self.port), timeout=1).close()
                with MetastoreClient(self.host, self.port, timeout=10, connect_timeout=1) as client:
                    client.get_all_databases()
                return
            except (OSError, HiveUnavailable):
                pass
            if self.process.poll() is not None:
                code = self.process.returncode
                self._close_pipe()
                self.process = None
                raise MetastoreUnavailable(
                    f"the Hive 4 metastore exited with {code} while starting:\n{self.tail()}"
                )
            if time.monotonic() > deadline:
                self.kill()
                raise MetastoreUnavailable(
                    f"the Hive 4 metastore did not serve within {timeout:.0f}s:\n{self.tail()}"
                )
            time.sleep(0.2)  # poll interval, not a fixed wait


@contextlib.contextmanager
def throwaway_metastore4(
    *, host: str = "127.0.0.1", parent: str | None = None, timeout: float = 180.0
) -> Iterator[Hive4Metastore]:
    """A fresh Hive 4 metastore on ``host`` (loopback) and a free port; deleted afterwards."""
    workdir = Path(tempfile.mkdtemp(prefix="pushdown-hms4-", dir=parent))
    try:
        server = Hive4Metastore(workdir, host=host)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    try:
        server.start(timeout)
        yield server
    finally:
        server.close()
