"""The object view: who may do each operation on one object and why, and how each backend
enforces it as read back."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pushdown.app.page.reader import HIDDEN_ROLE, OPS_BY_TYPE, PAGE, Reader
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
    # The grants on the path: (node, privilege, condition, the roles holding it).
    entries = [
        (node, privilege.value, cond, roles)
        for node in path
        for privilege, conds in model.by_object.get(node, {}).items()
        for cond, roles in conds.items()
        if roles
    ]
    if len(shown) <= PAGE:  # a caller who sees a few users (himself): only their roles matter
        seen_roles: set[str] = set().union(*(model.roles_of(u) for u in shown)) if shown else set()
        entries = [(n, p, c, r & seen_roles) for n, p, c, r in entries if not r.isdisjoint(seen_roles)]
    on_path: set[str] = set().union(*(e[3] for e in entries)) if entries else set()
    # Roles holding the same grants there decide alike: split them by each grant's holders
    # (set operations, a few per grant on the path, whatever the number of roles).
    parts = [on_path] if on_path else []
    for entry in entries:
        parts = [p for g in parts for p in (g & entry[3], g - entry[3]) if p]
    denying = {
        i for i, part in enumerate(parts) if any(e[2] is Condition.DENY and part <= e[3] for e in entries)
    }
    held_by: list[set[str]] = []
    for part in parts:
        holders: set[str] = set()
        for role in part:
            holders.update(model.role_users.get(role, ()))
            for group in model.role_groups.get(role, ()):
                holders.update(model.groups.get(group, ()))
        held_by.append(holders & shown)
    # Users holding the same parts decide alike: split them the same way. The owners of
    # something on the path and the service admins are decided one by one.
    owned_on: dict[str, list[ObjectRef]] = {}
    for node in path:
        who = model.owners.get(node)
        if who is not None:
            owned_on.setdefault(who, []).append(node)
    admins = model.service_admins
    singles = (set(owned_on) | (admins & model.users)) & shown
    crowd = [set().union(*held_by) - singles] if held_by else []
    for holders in held_by:
        crowd = [p for g in crowd for p in (g & holders, g - holders) if p]
    alike = [(c, next(iter(c))) for c in crowd] + [({u}, u) for u in singles]
    listed: set[str] = set()
    for those, one in alike:
        theirs = [i for i, h in enumerate(held_by) if one in h]
        stand_in = frozenset(next(iter(parts[i])) for i in theirs)
        decider = Decider(model, stand_in, owned_on.get(one, ()), one in admins)
        if any(decider.decide(op, ref) for op in ops) or not denying.isdisjoint(theirs):
            listed |= those
    nobody = Decider(model, frozenset(), (), False)
    if any(nobody.decide(op, ref) for op in ops):  # a requirement that holds for every user
        listed.update(shown)
    denies: list[tuple[str, str, str, str]] = []
    deny_roles: dict[str, list[Reason]] = {}
    for node, denied, cond, roles in entries:
        if cond is not Condition.DENY:
            continue
        for role in sorted(roles):
            shown_holders = sorted(u for u in model.holders_of(role) if u in shown)
            if shown_holders:
                seen = reader.sees_role(role)  # REST's roles of an object: those get_role shows
                if seen:
                    denies.append((role, denied, str(node), ", ".join(shown_holders[:20])))
                named = reader.role_words(role)
                reason = Reason("deny", f"DENY {denied} on {node} ({named}) wins", role if seen else None)
                deny_roles.setdefault(role, []).append(reason)
    users = sorted(listed)
    pages = max(1, -(-len(users) // PAGE))
    page = min(max(page, 1), pages)
    rows = []
    for u in users[(page - 1) * PAGE : page * PAGE]:
        how = model.roles_of(u)
        mine = frozenset(r for r in how if r in on_path)
        decider = Decider(model, mine, owned_on.get(u, ()), u in admins)
        reasoner = Reasoner(decider)
        cells: dict[str, list[Reason]] = {}
        for op in ops:
            found = [_reason(reader, r, how) for r in reasoner.reasons(op, ref)]
            if found:
                cells[op] = found
        wins = [r for role in sorted(mine) for r in deny_roles.get(role, ())]
        for op in ops:
            if op not in cells and wins:
                cells[op] = wins
        rows.append((u, cells))
    return ObjectView(ref, ops, rows, len(users), page, pages, denies, [], time.perf_counter() - started)


def _reason(
    reader: Reader, reason: tuple[str, str | None, str | None, ObjectRef | None], how: dict[str, str]
) -> Reason:
    kind, role, privilege, source = reason
    model = reader.model
    where = "" if source is None else (str(source) if source.names else f"metalake {model.metalake}")
    if kind == "grant":
        if role is None or not reader.sees_role(role):
            return Reason(kind, f"{HIDDEN_ROLE}: {privilege} on {where}")
        through = reader.held_words(how.get(role, "directly"))
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
