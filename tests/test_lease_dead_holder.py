"""A writer lease held by a process of this host that died is void at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pushdown.journal import lease
from pushdown.journal.store import Store


def test_a_dead_local_holder_loses_the_lease_at_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "pushdown.db")
    code = "import os; print(os.getpid())"
    gone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    holder = f"{lease.socket.gethostname()}:{int(gone.stdout)}:dead"
    assert lease.try_take(store, "b", holder, ttl=3600) is None  # the dead process "held" it
    assert lease.dead(holder)
    with store.backend_lease("b", timeout=0.5, ttl=3600):  # taken over without waiting an hour
        assert not lease.dead(lease.holder_id())  # this process is alive
    other_host = "some-other-host:1:x"
    assert not lease.dead(other_host)  # elsewhere only the expiry tells
    store.close()
