"""The launcher: a real metastore on loopback only, stopped cleanly, clear errors."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pushdown_hive.client import HiveUnavailable, MetastoreClient

from pushdown_lab import metastore as server_module
from pushdown_lab.metastore import LocalMetastore, MetastoreUnavailable, hive_site, throwaway_metastore

pytestmark = pytest.mark.hive


def outside_addresses() -> list[str]:
    """This machine's addresses other than loopback, IPv4 and IPv6 (from ``hostname -I``,
    and the address the default route would use)."""
    found: set[str] = set()
    try:
        out = subprocess.run(
            ["hostname", "-I"], capture_output=True, text=True, check=False, timeout=5
        ).stdout
        found |= {a for a in out.split() if not a.startswith("fe80")}  # link-local needs a scope
    except (OSError, subprocess.SubprocessError):
        pass
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
            found.add(probe.getsockname()[0])
        except OSError:
            pass
    return sorted(a for a in found if not a.startswith("127.") and a not in ("0.0.0.0", "::1", "::"))


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def test_listens_on_loopback_only(hive_metastore: Any) -> None:
    addresses = outside_addresses()
    if not addresses:
        pytest.skip("this machine has no address but loopback: nothing to prove")
    assert reachable("127.0.0.1", hive_metastore.port)
    for address in addresses:
        # control: a socket bound to every interface IS reachable on that address
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family) as wildcard:
            wildcard.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", 0))
            wildcard.listen()
            assert reachable(address, wildcard.getsockname()[1]), f"{address} is not reachable at all"
        assert not reachable(address, hive_metastore.port), f"the metastore answers on {address}"


def test_kill_and_restart_keep_the_data(hive_metastore: Any, hms: MetastoreClient) -> None:
    port = hive_metastore.port
    hms.create_database("kept_over_restart")
    try:
        hive_metastore.kill()  # as a crash would
        assert not hive_metastore.running
        with pytest.raises(HiveUnavailable, match=r"went away|no answer|cannot connect"):
            hms.get_all_databases()
        hive_metastore.restart()
        assert hive_metastore.port == port
        assert "kept_over_restart" in hms.get_all_databases()  # reconnected; the data survived
    finally:
        if not hive_metastore.running:
            hive_metastore.start()
        hms.drop_database("kept_over_restart")


def test_a_server_that_dies_says_why(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = LocalMetastore(tmp_path / "hms", port=taken.getsockname()[1])
        with pytest.raises(MetastoreUnavailable, match=r"exited with .* while starting(?s:.*)in use"):
            server.start(timeout=60)
    assert not server.running


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "203.0.113.254", "example.org"])
def test_only_loopback_and_nothing_left_behind(tmp_path: Path, host: str) -> None:
    with pytest.raises(ValueError, match="loopback address only"):
        LocalMetastore(tmp_path / "hms", host=host)
    with pytest.raises(ValueError, match="loopback address only"):
        with throwaway_metastore(host=host, parent=str(tmp_path)):
            pass
    assert not list(tmp_path.iterdir())


def test_a_launcher_that_cannot_run_leaves_no_directory(tmp_path: Path, monkeypatch: Any) -> None:
    def no_jars() -> Path:
        raise MetastoreUnavailable("no hive-metastore jar")

    monkeypatch.setattr(server_module, "spark_jars", no_jars)
    with pytest.raises(MetastoreUnavailable, match="no hive-metastore jar"):
        with throwaway_metastore(parent=str(tmp_path)):
            pass
    assert not list(tmp_path.iterdir())


def test_a_server_that_hangs_is_killed_and_cleaned_up(tmp_path: Path) -> None:
    server = LocalMetastore(tmp_path / "hms")
    with pytest.raises(MetastoreUnavailable, match="did not serve within"):
        server.start(timeout=0.2)
    pid = server.process.pid if server.process else None
    assert pid is not None and not server.running
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)  # the whole process group is gone
    server.close()
    assert not server.workdir.exists()


def test_hive_site_escapes_paths(tmp_path: Path) -> None:
    text = hive_site(tmp_path / "a&b<c")
    assert "a&amp;b&lt;c" in text
    assert "<name>hive.async.log.enabled</name><value>false</value>" in text
    assert "<name>datanucleus.connectionPoolingType</name><value>DBCP</value>" in text


PARENT = """
import sys, time
from pathlib import Path
from pushdown_lab.metastore import LocalMetastore
hms = LocalMetastore(Path(sys.argv[1]))
hms.start()
print(hms.process.pid, hms.port, flush=True)
time.sleep(600)
"""


def test_the_metastore_ends_with_the_process_that_started_it_even_by_sigkill(tmp_path: Path) -> None:
    """No orphan JVM holding a port and a Derby directory when a test run is killed."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path / "hms")], stdout=subprocess.PIPE, text=True
    )
    pid: int | None = None
    try:
        assert parent.stdout is not None
        pid, port = (int(x) for x in parent.stdout.readline().split())
        assert reachable("127.0.0.1", port)
        parent.kill()  # SIGKILL: nothing in the parent runs any more
        parent.wait(10)
        deadline = time.monotonic() + 30
        while _alive(pid):
            assert time.monotonic() < deadline, "the metastore outlived its parent"
            time.sleep(0.1)
        assert not reachable("127.0.0.1", port)
        assert "the launching process is gone" in (tmp_path / "hms" / "metastore.log").read_text()
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.communicate()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie until its parent (init) reaps it: gone all the same
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
            return False
    return True
