"""Plan one backend over one scope: read once, compile, diff. Pure apart from the read."""

from __future__ import annotations

from pushdown.model.state import Model
from pushdown.reconcile.backend import Backend, Snapshot
from pushdown.reconcile.plan import Plan, diff
from pushdown.reconcile.scope import Resolved, Scope


def resolve(backend: Backend, model: Model, scope: Scope) -> Resolved:
    """The scope as regions over the model's users, widened to the backend's containers."""
    return scope.resolve(model).widened(backend.widen)


def plan_for(
    backend: Backend, model: Model, scope: Scope, *, resolved: Resolved | None = None
) -> tuple[Plan, Snapshot, Resolved]:
    """The plan that brings the backend in line with the model within ``scope``."""
    where = resolved if resolved is not None else resolve(backend, model, scope)
    snapshot = backend.read(model, where)
    return plan_on(backend, model, scope, where, snapshot), snapshot, where


def plan_on(backend: Backend, model: Model, scope: Scope, where: Resolved, snapshot: Snapshot) -> Plan:
    """The plan against a snapshot already read."""
    desired = backend.compile(model, snapshot, where)
    return diff(
        backend.name,
        desired.facts,
        snapshot.facts,
        scope,
        within=snapshot.within,
        order=backend.order,
        notes=desired.notes,
        findings=snapshot.findings,
    )
