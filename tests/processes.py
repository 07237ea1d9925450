"""No process of pushdown outlives the one that started it.

This test session's processes carry a mark in their environment (``PUSHDOWN_TEST_MARK``),
inherited by every process a test starts and by the processes those start (``pushdown
serve``'s workers). After each test, a live pushdown process with the mark whose parent
is neither this session nor another marked process was orphaned (its parent died or
never reaped it): the check waits a moment for those still stopping, then kills what is
left and fails the test."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

MARK = "PUSHDOWN_TEST_MARK"
os.environ.setdefault(MARK, uuid.uuid4().hex)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of ``pid``; None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie, waiting for its parent to reap it, does not)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def marked() -> dict[int, int]:
    """The live pushdown processes of this session (but this one): pid -> parent pid."""
    found = {}
    wanted = f"{MARK}={os.environ[MARK]}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        stat = _stat(int(entry.name))
        if stat is None or stat[0] in ("Z", "X"):
            continue
        if wanted in environ.split(b"\0") and b"pushdown" in cmdline:
            found[int(entry.name)] = stat[1]
    return found


def orphans() -> list[int]:
    """Marked processes whose parent is neither this session nor a marked process."""
    procs = marked()
    return [pid for pid, parent in procs.items() if parent != os.getpid() and parent not in procs]


@pytest.fixture(autouse=True)
def no_orphans() -> Iterator[None]:
    yield
    if not Path("/proc/self/stat").exists():  # pragma: no cover - not Linux
        return
    deadline = time.monotonic() + 15
    left = orphans()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = orphans()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"pushdown processes outlived their parent: {left}"
