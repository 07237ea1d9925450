"""The reference backend: it enforces nothing and records what it is asked.

Its desired state is the model's own decisions, expanded the way a backend without
roles, groups or DENY must expand them: one fact per user, registered object and
operation the evaluator allows. It keeps its "server" state in memory, or in a JSON
file when the ``state`` setting names one, so ``plan`` after ``apply`` is empty across
runs. The core's tests use it to see exactly which operations a sync produces.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushdown.decide.compiler import Entitlements
from pushdown.decide.engine import by_catalog
from pushdown.decide.inventory import Inventory
from pushdown.host.hookspecs import hookimpl
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import (
    Applied,
    Backend,
    BackendContext,
    Capabilities,
    Desired,
    Progress,
    Snapshot,
)
from pushdown.reconcile.plan import Fact, Op, Plan
from pushdown.reconcile.registry import BackendRegistry
from pushdown.reconcile.scope import Region, Resolved

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

    @property
    def key(self) -> tuple[str, str, ObjectRef]:
        return (self.user, self.operation, self.object)

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "operation": self.operation, "object": str(self.object)}

    def __str__(self) -> str:
        return f"{self.user}: {self.operation} {self.object}"


#: Operations asked on a container about a child that does not exist yet.
_ON_NEW_CHILD = {"create_table": SecurableType.TABLE, "create_schema": SecurableType.SCHEMA}


class RecordingBackend(Backend):
    kind = "recording"
    capabilities = Capabilities(securable_types=frozenset(OPERATIONS_BY_TYPE))

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        state = context.setting("state")
        self.state_file = Path(state) if state else None
        self.held: set[Fact] = self._load()
        self.calls: list[tuple[str, tuple[Op, ...]]] = []
        #: the objects its "server" holds (setting ``server_objects``: ``"schema c.s"``, ...)
        self.server_objects = frozenset(
            ObjectRef.parse(str(o)) for o in context.setting("server_objects", [])
        )

    def on_server(self, model: Model, obj: ObjectRef) -> bool | None:
        """Whether ``obj`` is one of the objects the ``server_objects`` setting names."""
        return obj in self.server_objects

    def _load(self) -> set[Fact]:
        if self.state_file is None or not self.state_file.exists():
            return set()
        rows = json.loads(self.state_file.read_text())
        return {Permit(u, op, ObjectRef.parse(o)) for u, op, o in rows}

    def _save(self) -> None:
        if self.state_file is not None:
            rows = sorted((f.user, f.operation, str(f.object)) for f in self.held if isinstance(f, Permit))
            self.state_file.write_text(json.dumps(rows, indent=0, ensure_ascii=False))

    def read(self, model: Model, scope: Resolved) -> Snapshot:
        self.calls.append(("read", ()))
        within = _within(scope)
        return Snapshot(frozenset(f for f in self.held if within(f)), within)

    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        catalogs = self.enforces(model)
        kinds = OPERATIONS_BY_TYPE
        held = Inventory.of(o for o in model.objects if o.catalog in catalogs and o.type in kinds)
        ops = sorted({op for ops in OPERATIONS_BY_TYPE.values() for op in ops})
        engine = self.context.engine  # the local compiler unless engine = "spark" (full syncs)
        facts: set[Fact] = set()
        for region in scope.regions:
            if region.roots is None:  # a full compile: one catalog's answer at a time
                for _, ent in by_catalog(engine, model, ops, held, region.users):
                    facts |= _permits(ent, held, region, set(ent.inventory.within(METALAKE)))
                continue
            ent = engine.compile(model, ops, held, region.users, region.roots)
            roots = region.roots
            objects = {o for root in roots for o in held.within(root)}
            objects |= {o for root in roots for o in root.path if o in held}  # containers overlap too
            facts |= _permits(ent, held, region, objects)
        return Desired(frozenset(facts))

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        self.calls.append(("apply", plan.ops))
        for op in plan.ops:
            if op.before is not None:
                self.held.discard(op.before)
            if op.after is not None:
                self.held.add(op.after)
            progress(1)
        self._save()
        return Applied(len(plan.ops))

    def fact_from_json(self, data: Mapping[str, Any]) -> Fact:
        return Permit(str(data["user"]), str(data["operation"]), ObjectRef.parse(str(data["object"])))


def _permits(ent: Entitlements, held: Inventory, region: Region, objects: set[ObjectRef]) -> set[Fact]:
    """The operations the entitlements allow on ``objects``, per user in the region."""
    facts: set[Fact] = set()
    objects = {o for o in objects if o.type in OPERATIONS_BY_TYPE}
    for user in ent.users:
        view = ent.view(user)
        for obj in objects:
            if not region.covers(user, obj):
                continue
            for op in OPERATIONS_BY_TYPE[obj.type]:
                if view.allowed(op, _target(held, obj, op)):
                    facts.add(Permit(user, op, obj))
    return facts


def _target(held: Inventory, obj: ObjectRef, operation: str) -> ObjectRef:
    """``create_table`` on a schema is decided on a table that does not exist yet."""
    child = _ON_NEW_CHILD.get(operation)
    return obj if child is None else held.generic(obj, child)


def _within(scope: Resolved) -> Callable[[Fact], bool]:
    def within(fact: Fact) -> bool:
        return isinstance(fact, Permit) and scope.covers(fact.user, fact.object)

    return within


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("recording", RecordingBackend)
