"""The reference backend: it enforces nothing and records what it is asked.

Its desired state is the model's own decisions, expanded the way a backend without
roles, groups or DENY must expand them: one fact per user, registered object and
operation the evaluator allows. It keeps its "server" state in memory, or in a JSON
file when the ``state`` setting names one, so ``plan`` after ``apply`` is empty across
runs. The core's tests use it to see exactly which operations a sync produces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pushdown.decide.evaluator import Evaluator
from pushdown.host.hookspecs import hookimpl
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import (
    Backend,
    BackendContext,
    BackendRegistry,
    Capabilities,
    Desired,
    Progress,
)
from pushdown.reconcile.plan import Fact, Op
from pushdown.reconcile.scope import Scope

#: The operations recorded per object type: what a reader of the plan cares about.
OPERATIONS_BY_TYPE: dict[SecurableType, tuple[str, ...]] = {
    SecurableType.CATALOG: ("load_catalog", "create_schema"),
    SecurableType.SCHEMA: ("load_schema", "create_table"),
    SecurableType.TABLE: ("load_table", "alter_table", "drop_table"),
    SecurableType.TOPIC: ("load_topic", "alter_topic", "drop_topic"),
    SecurableType.FILESET: ("load_fileset", "alter_fileset", "drop_fileset"),
    SecurableType.MODEL: ("load_model", "link_model_version", "drop_model"),
}


@dataclass(frozen=True, order=True)
class Permit:
    """User ``user`` may perform ``operation`` on ``object``."""

    user: str
    operation: str
    object: ObjectRef

    def in_scope(self, scope: Scope) -> bool:
        return scope.covers(self.object, Principal.user(self.user))

    def __str__(self) -> str:
        return f"{self.user}: {self.operation} {self.object}"


def _target(obj: ObjectRef, operation: str) -> ObjectRef:
    """``create_table`` on a schema is checked on a table that does not exist yet."""
    if operation == "create_table":
        return ObjectRef(SecurableType.TABLE, (*obj.names, "\x00new"))
    if operation == "create_schema":
        return ObjectRef(SecurableType.SCHEMA, (*obj.names, "\x00new"))
    return obj


class RecordingBackend(Backend):
    kind = "recording"
    capabilities = Capabilities(securable_types=frozenset(OPERATIONS_BY_TYPE))

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        state = context.setting("state")
        self.state_file = Path(state) if state else None
        self.held: set[Fact] = self._load()
        self.calls: list[tuple[str, tuple[Op, ...]]] = []

    def _load(self) -> set[Fact]:
        if self.state_file is None or not self.state_file.exists():
            return set()
        rows = json.loads(self.state_file.read_text())
        return {Permit(u, op, ObjectRef.parse(o)) for u, op, o in rows}

    def _save(self) -> None:
        if self.state_file is not None:
            rows = sorted((f.user, f.operation, str(f.object)) for f in self.held if isinstance(f, Permit))
            self.state_file.write_text(json.dumps(rows, indent=0, ensure_ascii=False))

    def desired(self, model: Model, scope: Scope) -> Desired:
        evaluator = Evaluator(model)
        catalogs = self.enforces(model)
        objects = [o for o in model.objects if o.catalog in catalogs and o.type in OPERATIONS_BY_TYPE]
        facts: set[Fact] = set()
        for user in sorted(model.users):
            for obj in objects:
                for op in OPERATIONS_BY_TYPE[obj.type]:
                    permit = Permit(user, op, obj)
                    if permit.in_scope(scope) and evaluator.authorize(
                        user, op, _target(obj, op), explain=False
                    ):
                        facts.add(permit)
        return Desired(frozenset(facts))

    def actual(self, scope: Scope) -> Iterable[Fact]:
        self.calls.append(("read", ()))
        return [f for f in self.held if f.in_scope(scope)]

    def apply(self, ops: tuple[Op, ...], progress: Progress) -> None:
        self.calls.append(("apply", ops))
        for op in ops:
            if op.action == "add":
                self.held.add(op.fact)
            else:
                self.held.discard(op.fact)
            progress(1)
        self._save()


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("recording", RecordingBackend)
