"""What the backend's history tests share: the estate a history starts from (catalog ``c``
on the Ranger backend), the events of a drawn step, a history played and synced step by
step, and the judge after a sync (a full plan empty, Ranger's own engine deciding every
user, access and resource as the evaluator does)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pushdown_lab.ranger_standin import Standin

from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import RangerBackend
from tests.adversary import GROUP, model_changes
from tests.backend_histories import TABLE_STEPS
from tests.builders import Builder

from .probe import Probe, probe

Step = tuple[Any, ...]


def estate(
    users: Iterable[str],
    *,
    member: str | None = "u1",
    roles: Iterable[str] = (),
    schemas: Iterable[str] = (),
    tables: Iterable[str] = (),
) -> Builder:
    """``users``, the group ``g`` holding ``member`` (no group without one), catalog ``c``
    on the Ranger backend, ``roles`` (granted nothing), the schemas ``c.<schema>`` and the
    tables ``c.<schema>.<table>`` (``tables`` named ``"<schema>.<table>"``)."""
    b = Builder().users(*users)
    if member is not None:
        b.group(GROUP, member)
    b.catalog("c", backend="rg")
    for role in roles:
        b.role(role)
    for schema in schemas:
        b.schema(f"c.{schema}")
    for table in tables:
        b.table(f"c.{table}")
    return b


def events_for(model: Model, step: Step) -> list[Any]:
    """The events of a step of ``tests.backend_histories`` or ``tests.adversary`` (a table
    step on ``c.<schema>.<table>``), of ``("admins", users)`` (the service admins) or of
    ``("external", user, joins)`` (the directory's answer for the group, as a sync records
    it). Raises ``ModelError`` for a step the model refuses."""
    kind, *args = step
    if kind == "admins":
        return ch.set_service_admins(model, args[0])
    if kind == "external":
        user, joins = args
        held = model.external_members.get(GROUP, set())
        if joins and user not in held and user not in model.groups.get(GROUP, set()):
            return [ev.ExternalMembersChanged(GROUP, frozenset({user}), frozenset())]
        if not joins and user in held:
            return [ev.ExternalMembersChanged(GROUP, frozenset(), frozenset({user}))]
        return []
    return model_events(model, step)


def model_events(model: Model, step: Step) -> list[Any]:
    """The events of a step of ``tests.backend_histories`` or ``tests.adversary`` (a table
    step on ``c.<schema>.<table>``) as the model sees it: none for a server-only step (the
    enforcing host's ``("external", user, joins)`` among them). Raises ``ModelError`` for a
    step the model refuses."""
    kind, *args = step
    if kind not in TABLE_STEPS:
        return model_changes(model, step)
    ref = ObjectRef.parse(f"table c.{args[0]}.{args[1]}")
    if kind == "create":
        return ch.create_object(model, ref, None, None)
    if kind == "drop":
        return ch.drop_object(model, ref)
    return ch.rename_object(model, ref, args[2])


def applied(model: Model, events: Iterable[Any]) -> Scope:
    """Applies ``events`` to ``model``; the scope they name."""
    scopes = []
    for event in events:
        model.apply(event)
        scopes.append(scope_of(event))
    return Scope.union(scopes)


def played(model: Model, step: Step) -> list[Any] | None:
    """The events of ``step``, applied to ``model``; ``None`` when the model refuses it."""
    try:
        events = events_for(model, step)
    except ModelError:
        return None
    applied(model, events)
    return events


def synced(
    backend: RangerBackend,
    model: Model,
    history: Iterable[Step],
    view: Callable[[Model], Model] = lambda model: model,
) -> Iterator[tuple[Step, Model]]:
    """A full sync of ``model``, then each step of ``history`` the model takes played and
    synced over the scope its events name: (the step, the model synced). ``view``: the
    model a sync is given (a view of ``model`` made after each step)."""
    reconcile(backend, model, Scope.everything())
    for step in history:
        events = played(model, step)
        if events is None:
            continue
        seen = view(model)
        reconcile(backend, seen, Scope.union(scope_of(e) for e in events))
        yield step, seen


def judged(standin: Standin, planning: RangerBackend, model: Model, users: Iterable[str], why: Any) -> Probe:
    """``planning``'s full plan for ``model`` is empty, and Ranger's engine decides every one
    of ``users`` (and one the model does not know) as the evaluator does in catalog ``c``;
    ``why`` goes with a failure."""
    plan = planner.plan(planning, model, Scope.everything())
    assert plan.empty, (why, [str(op) for op in plan.ops][:6])
    result = probe(standin, model, "c", (*users, "stranger"))
    assert result.checks > 0 and result.mismatches == [], (why, result.mismatches[:5])
    return result


def role_holders(model: Any) -> dict[str, frozenset[str]]:
    """Each role's holders, direct and through its groups (roles held by nobody left out),
    of a model or of anything keeping memberships in the model's shape (the kept roles)."""
    out: dict[str, set[str]] = {}
    for role, users in model.role_users.items():
        out.setdefault(role, set()).update(users)
    for role, groups in model.role_groups.items():
        for group in groups:
            out.setdefault(role, set()).update(model.groups.get(group, ()))
    return {r: frozenset(u) for r, u in out.items() if u}
