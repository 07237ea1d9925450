"""A writer lease held by a process of this host that died is void at once."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pushdown.journal import lease
from pushdown.journal.store import Store


def test_a_dead_local_holder_loses_the_lease_at_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "pushdown.db")
    code = "import os; print(os.getpid())"
    gone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    holder = f"{lease.local_host()}:{int(gone.stdout)}:dead"
    assert lease.try_take(store, "b", holder, ttl=3600) is None  # the dead process "held" it
    assert lease.dead(holder)
    with store.backend_lease("b", timeout=0.5, ttl=3600):  # taken over without waiting an hour
        assert not lease.dead(lease.holder_id())  # this process is alive
    other_host = "some-other-host:1:x"
    assert not lease.dead(other_host)  # elsewhere only the expiry tells
    store.close()


def test_a_live_holder_in_another_pid_namespace_of_the_same_host_is_not_taken_for_dead() -> None:
    """Two containers may share a host name but not their pids: a process in a new PID
    namespace (as in a container) must not void this live process's lease."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    root = str(Path(__file__).resolve().parents[2])
    code = f"import sys; sys.path.insert(0, {root!r}); from pushdown.journal import lease; "
    code += f"print(lease.dead({lease.holder_id()!r}))"
    run = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if run.returncode != 0 and "unshare" in run.stderr:
        pytest.skip(f"a PID namespace cannot be made here: {run.stderr.strip()[:200]}")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
