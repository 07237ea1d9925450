"""The object view: who may do each operation on one object and why, and how each backend
enforces it as read back."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pushdown.app.page.reader import OPS_BY_TYPE, PAGE, Reader
from pushdown.app.service import AccessControl
from pushdown.decide.decider import Decider
from pushdown.errors import PushdownError
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown.report.reasons import Reasoner

# -- the object view --------------------------------------------------------------------


@dataclass(frozen=True)
class Reason:
    kind: str  # grant, owner, service admin, deny
    text: str
    role: str | None = None


@dataclass
class ObjectView:
    ref: ObjectRef
    operations: tuple[str, ...]
    #: user -> operation -> reasons (only the users the caller may see)
    rows: list[tuple[str, dict[str, list[Reason]]]]
    total: int
    page: int
    pages: int
    denies: list[tuple[str, str, str, str]]  # (role, privilege, on, holders)
    backends: list[dict[str, Any]]
    seconds: float


def object_view(reader: Reader, name: str, page: int = 1) -> ObjectView:
    """Who may do each operation on the object, and why.

    The compiler's idea, scoped to one object: users decide alike when the grants their
    roles hold on the object's path, what they own on it and their admin status are the
    same, so one :class:`~pushdown.decide.decider.Decider` decides for each such class
    (costing the grants on the path, not the users); the reasons
    (:class:`~pushdown.report.reasons.Reasoner`, the report's) are read only for the
    users on the page shown, with their own roles."""
    started = time.perf_counter()
    ref = reader.obj(name)
    model = reader.model
    ops = OPS_BY_TYPE.get(ref.type, ())
    shown = reader.users()
    path = ref.path
    # the grants on the path, per role; each holder's signature: the grants they hold there
    role_grants: dict[str, set[tuple[ObjectRef, str, Condition]]] = {}
    for node in path:
        for privilege, conds in model.by_object.get(node, {}).items():
            for cond, roles in conds.items():
                for role in roles:
                    role_grants.setdefault(role, set()).add((node, privilege.value, cond))
    # roles with the same grants on the path decide alike: one signature each, and a
    # user's class is the signatures they hold (one role per signature stands for them)
    sig_of: dict[frozenset[Any], int] = {}
    roles_by_sig: list[list[str]] = []
    for role, grants in role_grants.items():
        i = sig_of.setdefault(frozenset(grants), len(sig_of))
        if i == len(roles_by_sig):
            roles_by_sig.append([])
        roles_by_sig[i].append(role)
    denying = {i for sig, i in sig_of.items() if any(g[2] is Condition.DENY for g in sig)}
    user_sigs: dict[str, set[int]] = {}
    for i, alike in enumerate(roles_by_sig):
        held_by: set[str] = set()
        for role in alike:
            held_by.update(model.role_users.get(role, ()))
            for group in model.role_groups.get(role, ()):
                held_by.update(model.groups.get(group, ()))
        for u in held_by:
            into = user_sigs.get(u)
            if into is None:
                user_sigs[u] = {i}
            else:
                into.add(i)
    owned_on: dict[str, list[ObjectRef]] = {}
    for node in path:
        who = model.owners.get(node)
        if who is not None:
            owned_on.setdefault(who, []).append(node)
    admins = model.service_admins
    classes: dict[tuple[frozenset[int], frozenset[ObjectRef], bool], list[str]] = {}
    nothing: frozenset[int] = frozenset()
    for u in set(user_sigs) | set(owned_on) | (admins & model.users):
        if u not in shown:
            continue
        key = (frozenset(user_sigs.get(u, nothing)), frozenset(owned_on.get(u, ())), u in admins)
        classes.setdefault(key, []).append(u)
    listed: set[str] = set()
    for (sigs, owned, admin), users in classes.items():
        stand_in = frozenset(roles_by_sig[i][0] for i in sigs)
        decider = Decider(model, stand_in, owned, admin)
        if any(decider.decide(op, ref) for op in ops) or not denying.isdisjoint(sigs):
            listed.update(users)
    nobody = Decider(model, frozenset(), (), False)
    if any(nobody.decide(op, ref) for op in ops):  # a requirement that holds for every user
        listed.update(shown)
    denies: list[tuple[str, str, str, str]] = []
    deny_roles: dict[str, list[Reason]] = {}
    for role in sorted(role_grants):
        for node, denied, cond in sorted(role_grants[role], key=lambda g: (g[0].names, g[1])):
            if cond is Condition.DENY:
                shown_holders = sorted(u for u in model.holders_of(role) if u in shown)
                if shown_holders:
                    denies.append((role, denied, str(node), ", ".join(shown_holders[:20])))
                    reason = Reason("deny", f"DENY {denied} on {node} (role {role}) wins", role)
                    deny_roles.setdefault(role, []).append(reason)
    users = sorted(listed)
    pages = max(1, -(-len(users) // PAGE))
    page = min(max(page, 1), pages)
    rows = []
    for u in users[(page - 1) * PAGE : page * PAGE]:
        how = model.roles_of(u)
        mine = frozenset(r for r in how if r in role_grants)
        decider = Decider(model, mine, owned_on.get(u, ()), u in admins)
        reasoner = Reasoner(decider)
        cells: dict[str, list[Reason]] = {}
        for op in ops:
            found = [_reason(model, r, how) for r in reasoner.reasons(op, ref)]
            if found:
                cells[op] = found
        wins = [r for role in sorted(mine) for r in deny_roles.get(role, ())]
        for op in ops:
            if op not in cells and wins:
                cells[op] = wins
        rows.append((u, cells))
    return ObjectView(ref, ops, rows, len(users), page, pages, denies, [], time.perf_counter() - started)


def _reason(
    model: Model, reason: tuple[str, str | None, str | None, ObjectRef | None], how: dict[str, str]
) -> Reason:
    kind, role, privilege, source = reason
    where = "" if source is None else (str(source) if source.names else f"metalake {model.metalake}")
    if kind == "grant":
        through = how.get(role or "", "directly")
        extra = "" if through == "directly" else f" ({through})"
        return Reason(kind, f"role {role}{extra}: {privilege} on {where}", role)
    if kind == "owner":
        return Reason(kind, f"owner of {where}")
    return Reason(kind, kind)


def enforcement(ac: AccessControl, model: Model) -> Callable[[ObjectRef], list[dict[str, Any]]]:
    """Per configured backend, how it enforces one object as read back: a dry run of the
    object's scope (``verify`` on that object): in sync, narrower (the plan's notes),
    drift (the operations a sync would make), or not enforced (bound to no backend)."""

    def per_backend(ref: ObjectRef) -> list[dict[str, Any]]:
        catalog = ref.names[0]
        out = []
        bound = False
        for name, backend in sorted(ac.backends.items()):
            if catalog not in backend.enforces(model):
                continue
            bound = True
            try:
                plan, _ = reconcile(backend, model, Scope.of(objects=[ref]), dry_run=True, retries=0)
            except PushdownError as exc:
                out.append({"backend": name, "state": "unreadable", "detail": [str(exc)]})
                continue
            mine = [str(op) for op in plan.ops if _names_it(str(op), ref)]
            if mine:
                out.append({"backend": name, "state": "drift", "detail": mine[:50]})
            elif plan.notes:
                out.append({"backend": name, "state": "narrower", "detail": list(plan.notes)})
            else:
                out.append({"backend": name, "state": "in sync", "detail": []})
            if plan.findings:
                out[-1]["findings"] = list(plan.findings)
        if not bound:
            out.append(
                {
                    "backend": "-",
                    "state": "not enforced",
                    "detail": [f"catalog {catalog} is bound to no backend"],
                }
            )
        return out

    return per_backend


def _names_it(text: str, ref: ObjectRef) -> bool:
    """Whether an operation of a plan, in its words, names the object (a plan over the
    object's scope may also hold its neighbours')."""
    return ref.name in text or f"`{ref.names[-1]}`" in text
