"""Plan one backend over one scope: read once, compile, diff. Pure apart from the read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pushdown.model.state import Model
from pushdown.reconcile.backend import Backend, Desired, Snapshot
from pushdown.reconcile.plan import Fact, Op, Plan, diff
from pushdown.reconcile.scope import Resolved, Scope
from pushdown.reconcile.settings import Settings


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


def plan(backend: Backend, model: Model, scope: Scope) -> Plan:
    """The plan for ``scope`` now: read, compile and diff (``plan_for`` without the rest)."""
    return plan_for(backend, model, scope)[0]


def plan_on(
    backend: Backend,
    model: Model,
    scope: Scope,
    where: Resolved,
    snapshot: Snapshot,
    desired: Desired | None = None,
) -> Plan:
    """The plan against a snapshot already read (and, when given, a desired state already
    compiled: the read-back after apply diffs against the same one)."""
    if desired is None:
        desired = backend.compile(model, snapshot, where)
    plan = diff(
        backend.name,
        desired.facts,
        snapshot.facts,
        scope,
        within=snapshot.within,
        order=backend.order,
        notes=desired.notes,
        findings=snapshot.findings,
        apart=backend.apart,
    )
    if additive(backend):
        plan = held_back(plan, backend.replaces)
    # Only a full plan is guarded: it sees everything the backend manages, so its share is
    # of the whole; a scoped plan follows journalled model changes and must not stall them.
    guard = removal_guard(backend, plan, len(snapshot.facts)) if scope.full else None
    basis = {"fingerprint": snapshot.fingerprint}
    return replace(plan, guard=guard, basis=basis)


#: ``adopt = "additive"`` (a backend setting): never revoke; ``"authoritative"`` (the default).
ADOPT_MODES = ("authoritative", "additive")


def additive(backend: Backend) -> bool:
    """Whether the backend's setting ``adopt`` is ``"additive"`` (pgroles' adoption mode):
    plans only add, so an imported estate can be taken over before pushdown may revoke."""
    return Settings.of(backend.context).choice("adopt", "authoritative", ADOPT_MODES) == "additive"


def held_back(plan: Plan, replaces: Callable[[Fact, Fact], bool] = lambda old, new: False) -> Plan:
    """``plan`` without its removals and changes (a change can narrow): each becomes a
    finding saying what switching the backend to ``adopt = "authoritative"`` would do; an
    addition that needs a kept fact gone first (``replaces``) is held back with it."""
    kept_facts = [op.fact for op in plan.ops if op.action == "remove"]
    back = [
        f'adopt = "additive": kept {op}; an authoritative apply would '
        + ("revoke it" if op.action == "remove" else "replace it")
        for op in plan.ops
        if op.action != "add"
    ]
    kept: list[Op] = []
    for op in plan.ops:
        if op.action != "add":
            continue
        if any(replaces(old, op.fact) for old in kept_facts):
            back.append(f'adopt = "additive": held back {op}: the server holds it otherwise (kept)')
        else:
            kept.append(op)
    return replace(plan, ops=tuple(kept), findings=plan.findings + tuple(back))


#: Defaults of the destructive-change guard (backend settings override them).
MAX_REMOVAL_SHARE = 0.5
MIN_GUARDED_REMOVALS = 10


def removal_guard(backend: Backend, plan: Plan, held: int) -> str | None:
    """Why ``plan`` (a full one) needs an explicit go-ahead: it removes more than a share
    of the managed facts the backend holds (or all of them), and at least a few."""
    share = float(backend.context.setting("max_removal_share", MAX_REMOVAL_SHARE))
    least = int(backend.context.setting("min_guarded_removals", MIN_GUARDED_REMOVALS))
    removes = plan.removes
    if removes < least or held == 0 or removes <= share * held:
        return None
    what = "all" if removes >= held else f"{removes / held:.0%}"
    return (
        f"this plan removes {removes} of the {held} managed grant(s) in scope ({what}; the limit is "
        f"{share:.0%}, setting max_removal_share); apply it only with --allow-mass-removal"
    )
