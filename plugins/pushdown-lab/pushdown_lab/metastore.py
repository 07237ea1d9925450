"""A throwaway Hive Metastore 2.3, run from pyspark's own jars, listening on loopback only.

Hive 2.3's own main class binds every interface and has no bind-address setting, so
the server is started through a small launcher of ours (``java/LoopbackMetastore.java``,
compiled once with ``javac`` against pyspark's jars and cached) that builds the same
Thrift server from the metastore's classes but binds the address it is given,
127.0.0.1 by default. Everything else is the stock metastore: embedded Derby in a
temporary directory, the schema created on first start, a port the OS picks. The
metastore ends with the process that started it, however that ends (even by SIGKILL):
it watches a pipe from it and exits at end of file (a child that process forked without
exec holds the pipe too, and keeps the metastore while it lives).

    with throwaway_metastore() as hms:      # ready when entered (about 5 s)
        hms.uri                              # thrift://127.0.0.1:PORT
        hms.kill(); hms.restart()            # a crash and a restart on the same data and port

The hive backend (``pushdown_hive.backend``) connects with :mod:`pushdown_hive.client`;
tests get one metastore per run from the root ``conftest.py`` (``hive_metastore``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from xml.sax.saxutils import escape

from pushdown_lab.docker import docker_engine
from pushdown_lab.maven import cache_dir

LAUNCHER = "LoopbackMetastore"
READY = "pushdown-metastore: listening on "


class MetastoreUnavailable(RuntimeError):
    """The metastore cannot be run here, or it died or hung while starting; the message
    says why and ends with the tail of its log."""


def spark_jars() -> Path:
    """pyspark's jar directory (it holds Hive 2.3's metastore, Derby and DataNucleus)."""
    try:
        import pyspark
    except ImportError as exc:
        raise MetastoreUnavailable("pyspark is not installed (pip install 'pyspark>=3.5,<4')") from exc
    jars = Path(pyspark.__file__).parent / "jars"
    if not any(jars.glob("hive-metastore-*.jar")):
        raise MetastoreUnavailable(f"no hive-metastore jar in {jars}: a pyspark build without Hive")
    return jars


def java_tool(name: str) -> str:
    """``java`` or ``javac`` from $JAVA_HOME, else from $PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise MetastoreUnavailable(f"{name} not found: install a JDK (17 works) or set JAVA_HOME")
    return found


def compiled(name: str, where: str, *, jars: Path | None = None, key: bytes = b"", what: str = "") -> Path:
    """The directory holding ``java/<name>.java`` compiled with ``javac`` (against ``jars``,
    when given), cached under ``cache_dir()/where`` by the source and ``key``; compiled on
    first use (a few seconds). ``what`` names it in the error when ``javac`` fails."""
    source = importlib.resources.files("pushdown_lab").joinpath(f"java/{name}.java").read_bytes()
    target = cache_dir() / where / hashlib.sha256(source + key).hexdigest()[:16]
    if (target / f"{name}.class").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
    try:
        (build / f"{name}.java").write_bytes(source)
        against = ["-cp", f"{jars}/*"] if jars is not None else []
        done = subprocess.run(  # noqa: S603 - fixed arguments, no shell
            [java_tool("javac"), "-nowarn", "-d", str(build), *against, str(build / f"{name}.java")],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise MetastoreUnavailable(f"compiling {what or name} failed: {done.stderr[-2000:]}")
        with contextlib.suppress(OSError):  # another process may have won the race: fine
            build.rename(target)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return target


def launcher_classes(jars: Path) -> Path:
    """The directory holding the compiled launcher; compiled on first use (about 3 s),
    keyed by the launcher's source and the jars it was compiled against."""
    names = "\n".join(sorted(p.name for p in jars.glob("*.jar"))).encode()
    return compiled(LAUNCHER, "hive-launcher", jars=jars, key=names, what="the metastore launcher")


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` now (IPv4 or IPv6)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def hive_site(workdir: Path) -> str:
    """hive-site.xml: embedded Derby in ``workdir``, and the settings Hive 2.3 needs on
    pyspark's jars (without the last two it dies on a missing disruptor / BoneCP class)."""
    settings = {
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={workdir / 'metastore_db'};create=true",
        "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": (workdir / "warehouse").as_uri(),
        "hive.async.log.enabled": "false",
        "datanucleus.connectionPoolingType": "DBCP",
    }
    props = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
        for k, v in settings.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{props}</configuration>\n'


def loopback(host: str) -> str:
    """``host`` when it is a loopback address (127.0.0.0/8 or ::1); a throwaway metastore
    has no authentication, so it never listens where other machines could reach it."""
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ValueError(f"the metastore listens on a loopback address only (127.0.0.1 or ::1), not {host!r}")


class LocalMetastore:
    """One metastore process on its own work directory. :meth:`start` waits until it
    serves; :meth:`stop` ends its process group; :meth:`close` also deletes the directory."""

    def __init__(
        self,
        workdir: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        heap: str = "512m",
        jars: Path | None = None,
    ) -> None:
        self.workdir = workdir
        self.host = loopback(host)
        self.port = port
        self.heap = heap
        self.jars = jars or spark_jars()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    @property
    def log(self) -> Path:
        return self.workdir / "metastore.log"

    def tail(self, chars: int = 3000) -> str:
        if not self.log.exists():
            return "(no log)"
        return self.log.read_text(errors="replace")[-chars:] or "(empty log)"

    def command(self) -> list[str]:
        classes = launcher_classes(self.jars)
        return [
            java_tool("java"),
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Dderby.system.home={self.workdir}",
            "-Dpushdown.exitOnStdinEof=true",  # it ends with this process (see start)
            "-cp",
            os.pathsep.join([str(self.workdir / "conf"), str(classes), f"{self.jars}/*"]),
            LAUNCHER,
            self.host,
            str(self.port),
        ]

    def start(self, timeout: float = 120.0) -> None:
        """Start (or start again, on the same data and port) and wait until it serves."""
        if self.process is not None and self.process.poll() is None:
            return
        self._close_pipe()  # of a process that ended by itself
        conf = self.workdir / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "hive-site.xml").write_text(hive_site(self.workdir))
        (self.workdir / "warehouse").mkdir(exist_ok=True)
        cmd = self.command()
        env = {
            k: v for k, v in os.environ.items() if k not in ("HIVE_CONF_DIR", "HADOOP_CONF_DIR", "CLASSPATH")
        }
        offset = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as log:
            log.write(f"--- starting {LAUNCHER} {self.host} {self.port}\n".encode())
            self.process = subprocess.Popen(  # noqa: S603 - fixed arguments, no shell
                cmd,
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                # a pipe nothing is written to: when this process ends, however it ends, the
                # metastore reads end of file and exits (no orphan JVM holding the port)
                stdin=subprocess.PIPE,
                start_new_session=True,  # its own process group: stop() ends all of it
                env=env,
            )
        self._wait_ready(timeout, offset)

    #: what the errors call it, and how often :meth:`start` asks whether it serves
    label = "the metastore"
    poll = 0.05

    def _serving(self, offset: int) -> bool:
        """Whether it serves: the launcher's mark in the log written since ``offset`` (the
        port it bound is taken from there)."""
        with self.log.open("rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
        marks = [line for line in text.splitlines() if line.startswith(READY)]
        if marks:
            self.port = int(marks[-1].rsplit(":", 1)[1])
        return bool(marks)

    def _wait_ready(self, timeout: float, offset: int) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.process is not None
            if self._serving(offset):
                return
            if self.process.poll() is not None:
                code = self.process.returncode
                self._close_pipe()
                self.process = None
                raise MetastoreUnavailable(f"{self.label} exited with {code} while starting:\n{self.tail()}")
            if time.monotonic() > deadline:
                self.kill()
                raise MetastoreUnavailable(
                    f"{self.label} did not serve within {timeout:.0f}s:\n{self.tail()}"
                )
            time.sleep(self.poll)  # poll interval, not a fixed wait

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _signal(self, sig: int) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)

    def _close_pipe(self) -> None:
        if self.process is not None and self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def kill(self) -> None:
        """SIGKILL the process group, as a crash would; the data stays for :meth:`restart`."""
        self._signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()
            self._close_pipe()

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM the process group; SIGKILL it when it has not ended after ``timeout``."""
        if self.process is None:
            return
        self._signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._close_pipe()
        self.process = None

    def restart(self, timeout: float = 120.0) -> None:
        """Stop (if running) and start again on the same port and the same Derby data."""
        self.stop()
        self.start(timeout)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


Server = TypeVar("Server", bound=LocalMetastore)


@contextlib.contextmanager
def throwaway(
    make: Callable[[Path], Server], prefix: str, parent: str | None, timeout: float
) -> Iterator[Server]:
    """The server ``make`` builds on a fresh temporary work directory (under ``parent``),
    started; stopped and deleted afterwards (the directory too when ``make`` fails)."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        server = make(workdir)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)  # e.g. a pyspark without Hive jars
        raise
    try:
        server.start(timeout)
        yield server
    finally:
        server.close()


@contextlib.contextmanager
def throwaway_metastore(
    *, host: str = "127.0.0.1", parent: str | None = None, timeout: float = 120.0
) -> Iterator[LocalMetastore]:
    """A fresh metastore on ``host`` (loopback) and a free port; deleted afterwards."""
    host = loopback(host)
    with throwaway(
        lambda workdir: LocalMetastore(workdir, host=host), "pushdown-hms-", parent, timeout
    ) as hms:
        yield hms


# -- Hive 4 in a container (docker/compose.yaml's hive4-metastore), where Docker runs ------

HIVE4_IMAGE = "apache/hive:4.0.1"
NO_DOCKER = "no Docker engine answers"


class ContainerMetastore:
    """A Hive 4 metastore in a container (testcontainers), published on 127.0.0.1 only,
    with the same surface as :class:`LocalMetastore`: ``host``, ``port``, ``uri``,
    ``kill``, ``restart``, ``close``. The port is fixed, so it survives a restart."""

    def __init__(self, image: str = HIVE4_IMAGE) -> None:
        self.image = image
        self.host = "127.0.0.1"
        self.port = free_port(self.host)
        self.container: Any = None

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        if self.container is None:
            return False
        wrapped = self.container.get_wrapped_container()
        wrapped.reload()
        return bool(wrapped.status == "running")

    def start(self, timeout: float = 300.0) -> None:
        from testcontainers.core.container import DockerContainer  # type: ignore[import-not-found,unused-ignore]

        self.container = DockerContainer(self.image).with_env("SERVICE_NAME", "metastore")
        # published on loopback only (docker-py's (address, port) form; with_bind_ports has no address)
        self.container.ports["9083/tcp"] = (self.host, self.port)
        self.container.start()
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        from pushdown_hive.client import HiveUnavailable, MetastoreClient

        deadline = time.monotonic() + timeout
        while True:
            try:
                with MetastoreClient(self.host, self.port, timeout=5, connect_timeout=2) as client:
                    client.get_all_databases()
                return
            except HiveUnavailable as exc:
                if time.monotonic() > deadline:
                    logs = self.container.get_logs() if self.container is not None else (b"", b"")
                    tail = b"".join(logs).decode(errors="replace")[-3000:]
                    raise MetastoreUnavailable(f"the Hive 4 container did not serve: {exc}\n{tail}") from None
                time.sleep(0.5)  # poll interval, not a fixed wait

    def kill(self) -> None:
        if self.container is not None:
            self.container.get_wrapped_container().kill()

    def restart(self, timeout: float = 300.0) -> None:
        wrapped = self.container.get_wrapped_container()
        wrapped.reload()
        if wrapped.status == "running":
            wrapped.stop()
        wrapped.start()  # the same container: its Derby data and its port binding stay
        self._wait_ready(timeout)

    def close(self) -> None:
        if self.container is not None:
            with contextlib.suppress(Exception):
                self.container.stop()
            self.container = None


@contextlib.contextmanager
def container_metastore(image: str = HIVE4_IMAGE) -> Iterator[ContainerMetastore]:
    """A Hive 4 metastore in a throwaway container; :class:`MetastoreUnavailable` saying
    that no Docker engine answers when none does (or testcontainers is missing)."""
    if not docker_engine():
        raise MetastoreUnavailable(f"{NO_DOCKER}: the Hive 4 metastore runs only in a container")
    try:
        import testcontainers  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError as exc:
        raise MetastoreUnavailable(
            f"{NO_DOCKER} through testcontainers: it is not installed (pip install 'pushdown-hive[docker]')"
        ) from exc
    server = ContainerMetastore(image)
    try:
        server.start()
        yield server
    finally:
        server.close()
