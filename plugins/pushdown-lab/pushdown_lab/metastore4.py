"""A throwaway Hive Metastore 4 (standalone, 4.0.1 from Maven Central), on loopback only.

The same surface as :class:`pushdown_lab.metastore.LocalMetastore` (``uri``, ``kill``,
``restart``, ``close``), and its launcher code (the process group, the pipe it ends with,
the wait until it serves): embedded Derby in a temporary directory, the schema created on
first start, the settings of the 2.3 one, and Hive 4's own ``metastore.thrift.bind.host``
set to the loopback address. The stock ``HiveMetaStore`` main runs under a small wrapper
of ours (``java/StdinBoundMain.java``) that ends the JVM when the pipe from the starting
process closes, as the 2.3 launcher does. The jars come through :mod:`pushdown_lab.maven`
(``HIVE4_METASTORE``): Hive's ``hive-standalone-metastore-server:4.1.0`` is not published on
Central, 4.0.1 is, and runs on JDK 17.

    with throwaway_metastore4() as hms:     # ready when entered (about 10 s)
        hms.uri                              # thrift://127.0.0.1:PORT
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from pushdown_lab.maven import HIVE4_METASTORE, MavenUnavailable, classpath
from pushdown_lab.metastore import (
    LocalMetastore,
    MetastoreUnavailable,
    compiled,
    free_port,
    java_tool,
    loopback,
    throwaway,
)

__all__ = ["Hive4Metastore", "throwaway_metastore4"]

WRAPPER = "StdinBoundMain"
MAIN = "org.apache.hadoop.hive.metastore.HiveMetaStore"


def wrapper_classes() -> Path:
    """The compiled wrapper (no dependencies), cached by its source."""
    return compiled(WRAPPER, "stdin-bound")


class Hive4Metastore(LocalMetastore):
    """One Hive 4 metastore process on its own work directory and a port fixed at creation."""

    label = "the Hive 4 metastore"
    poll = 0.2

    def __init__(self, workdir: Path, *, host: str = "127.0.0.1", heap: str = "512m") -> None:
        try:
            self.classpath = classpath(HIVE4_METASTORE)
        except MavenUnavailable as exc:
            raise MetastoreUnavailable(str(exc)) from exc
        super().__init__(workdir, host=host, port=free_port(loopback(host)), heap=heap, jars=workdir)

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

    def _serving(self, offset: int) -> bool:
        """Whether it answers a call (it prints no mark of its own)."""
        from pushdown_hive.client import HiveUnavailable, MetastoreClient

        try:
            # a bare connect first: Thrift logs every refused connection
            socket.create_connection((self.host, self.port), timeout=1).close()
            with MetastoreClient(self.host, self.port, timeout=10, connect_timeout=1) as client:
                client.get_all_databases()
            return True
        except (OSError, HiveUnavailable):
            return False


@contextlib.contextmanager
def throwaway_metastore4(
    *, host: str = "127.0.0.1", parent: str | None = None, timeout: float = 180.0
) -> Iterator[Hive4Metastore]:
    """A fresh Hive 4 metastore on ``host`` (loopback) and a free port; deleted afterwards."""
    with throwaway(
        lambda workdir: Hive4Metastore(workdir, host=host), "pushdown-hms4-", parent, timeout
    ) as hms:
        yield hms
