"""A throwaway Spark standalone cluster on this machine: a master and workers, loopback only.

pyspark ships the standalone daemons (``bin/spark-class`` with the master's and the
worker's main classes); each runs as a process of its own, bound to 127.0.0.1
(``--host`` and ``SPARK_LOCAL_IP``, which the web UIs bind to as well), with its work
and logs in a temporary directory. The cluster is ready when the master's JSON status
(``http://127.0.0.1:PORT/json/``) lists every worker alive::

    with throwaway_cluster(workers=2) as cluster:     # ready when entered (~10 s)
        cluster.master                                # spark://127.0.0.1:PORT
        cluster.status()["aliveworkers"]              # 2

Leaving the block stops the workers (and the executors they started) and the master:
each is killed by the id of the process group it was started in, nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


class ClusterUnavailable(RuntimeError):
    """The cluster cannot run here, or a daemon died or hung while starting; the message
    says which and ends with the tail of its log."""


def spark_class() -> Path:
    try:
        import pyspark
    except ImportError as exc:
        raise ClusterUnavailable("pyspark is not installed (pip install 'pyspark>=3.5,<4')") from exc
    script = Path(pyspark.__file__).parent / "bin" / "spark-class"
    if not script.exists():
        raise ClusterUnavailable(f"{script} is missing: a pyspark build without its launch scripts")
    return script


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Cluster:
    master: str
    ui: str
    root: Path
    processes: list[tuple[str, subprocess.Popen[bytes], Path]] = field(default_factory=list)

    def status(self) -> dict[str, Any]:
        """The master's JSON status (workers, cores, running applications)."""
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=5) as reply:  # noqa: S310 - loopback
            data: dict[str, Any] = json.loads(reply.read().decode("utf-8"))
            return data

    def log_tail(self, lines: int = 30) -> str:
        out = []
        for name, _, log in self.processes:
            text = log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
            out.append(f"--- {name} ({log})\n" + "\n".join(text))
        return "\n".join(out)


def _start(
    name: str, args: list[str], root: Path, env: dict[str, str]
) -> tuple[str, subprocess.Popen[bytes], Path]:
    log = root / f"{name}.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(  # noqa: S603 - pyspark's own launcher, arguments ours
            [str(spark_class()), *args],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=root,
            start_new_session=True,  # its own process group: stopped by that group's id
        )
    return name, proc, log


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


@contextlib.contextmanager
def throwaway_cluster(
    workers: int = 2,
    cores: int = 1,
    memory: str = "1g",
    parent: str | None = None,
    ready_within: float = 180.0,
) -> Iterator[Cluster]:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` each, on 127.0.0.1."""
    root = Path(tempfile.mkdtemp(prefix="spark-standalone-", dir=parent))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    env.pop("SPARK_HOME", None)  # pyspark's own, found by its scripts
    port, ui_port = _free_port(), _free_port()
    cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}", root)
    try:
        cluster.processes.append(
            _start(
                "master",
                [MASTER, "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port)],
                root,
                env,
            )
        )
        for i in range(workers):
            work = root / f"worker-{i}"
            work.mkdir()
            args = [WORKER, "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory]
            args += ["--webui-port", "0", "--work-dir", str(work), cluster.master]
            cluster.processes.append(_start(f"worker-{i}", args, root, env))
        _wait_ready(cluster, workers, ready_within)
        yield cluster
    finally:
        for _, proc, _ in reversed(cluster.processes):
            _stop(proc)


def _wait_ready(cluster: Cluster, workers: int, bound: float) -> None:
    """Until the master lists ``workers`` workers alive (a daemon's death ends the wait)."""
    deadline = time.monotonic() + bound
    while True:
        for name, proc, _ in cluster.processes:
            if proc.poll() is not None:
                raise ClusterUnavailable(
                    f"the {name} exited ({proc.returncode}) while starting\n{cluster.log_tail()}"
                )
        try:
            if cluster.status().get("aliveworkers", 0) >= workers:
                return
        except OSError:
            pass  # the master's UI is not up yet
        if time.monotonic() > deadline:
            raise ClusterUnavailable(f"not ready within {bound:.0f} s\n{cluster.log_tail()}")
        time.sleep(0.2)


__all__ = ["Cluster", "ClusterUnavailable", "throwaway_cluster"]
