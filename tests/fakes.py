"""Fakes for the core's unit tests: backends that record, fail or refuse to converge."""

from __future__ import annotations

from pathlib import Path

from pushdown.app.service import AccessControl
from pushdown.app.settings import from_mapping
from pushdown.errors import PermanentBackendError, TemporaryBackendError
from pushdown.host.recording import RecordingBackend
from pushdown.journal.store import Store
from pushdown.model.state import Model
from pushdown.reconcile.backend import Applied, BackendContext, Progress, Snapshot
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.scope import Resolved


class FlakyBackend(RecordingBackend):
    """A recording backend that can be switched off (unreachable) or made to refuse."""

    kind = "flaky"

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.down = False
        #: seconds the server asks the caller to wait when it is down (None: the default)
        self.retry_after: float | None = None
        self.refuse: str | None = None
        self.fail_times = 0
        self.ignore_apply = False

    def read(self, model: Model, scope: Resolved) -> Snapshot:
        if self.down:
            raise TemporaryBackendError(self.name, "connection refused (test)", delay=self.retry_after)
        return super().read(model, scope)

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        if self.fail_times > 0:
            self.fail_times -= 1
            raise TemporaryBackendError(self.name, "lost connection during apply (test)")
        if self.refuse:
            raise PermanentBackendError(self.name, self.refuse)
        if self.ignore_apply:
            self.calls.append(("apply", plan.ops))
            return Applied(0)
        return super().apply(plan, snapshot, progress)


def access_control(tmp_path: Path | None = None, **backends: type[RecordingBackend]) -> AccessControl:
    """An AccessControl on a fresh store with the given backend classes, named by keyword."""
    store = Store(":memory:" if tmp_path is None else tmp_path / "pushdown.db")
    made = {name: cls(BackendContext(name=name, settings={})) for name, cls in backends.items()}
    return AccessControl(store, dict(made))


def demo_config(tmp_path: Path) -> object:
    return from_mapping(
        {"store": "pushdown.db", "backends": {"demo": {"kind": "recording", "state": "state.json"}}},
        tmp_path,
        "test",
    )
