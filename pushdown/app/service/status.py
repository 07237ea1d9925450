"""``pushdown status``: each backend's cursor, lag, last success and last error, and which
daemon holds the store's daemon lease, from the store (the daemon writes, the CLI reads)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from pushdown.journal import lease
from pushdown.journal.store import Store

#: The daemon lease's name in the store's lease table: a control character keeps it
#: apart from every backend name (the config refuses those in backend names).
INSTANCE = "\x1edaemon"


@dataclass(frozen=True)
class BackendStatus:
    backend: str
    cursor: int
    lag_events: int
    lag_seconds: float
    last_success: float | None
    last_error: str | None
    last_error_at: float | None
    error_kind: str | None
    findings: int

    @property
    def failing(self) -> bool:
        """The last attempt failed (an error after the last success)."""
        return self.last_error_at is not None and (self.last_success or 0.0) < self.last_error_at


def statuses(store: Store, backends: Iterable[str]) -> list[BackendStatus]:
    recorded = store.sync_status()
    out = []
    for name in sorted(set(backends) | set(recorded)):
        last, cursor = store.position(name)
        at = store.first_unseen_at(name) if last > cursor else None
        lag_s = 0.0 if at is None else max((datetime.now(UTC) - at).total_seconds(), 0.0)
        row = recorded.get(name, {})
        out.append(
            BackendStatus(
                name,
                cursor,
                max(last - cursor, 0),
                lag_s,
                row.get("last_success"),
                row.get("last_error"),
                row.get("last_error_at"),
                row.get("error_kind"),
                int(row.get("findings") or 0),
            )
        )
    return out


def daemon_holder(store: Store) -> str | None:
    """Who holds the store's daemon lease now (None: no daemon is active)."""
    found = store.leases().get(INSTANCE)
    if found is None or found[1] < time.time() or lease.dead(found[0]):
        return None
    return found[0]


def when(ts: float | None) -> str:
    if ts is None:
        return "never"
    ago = max(time.time() - ts, 0.0)
    stamp = datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")
    return f"{stamp} ({ago:.0f} s ago)"
