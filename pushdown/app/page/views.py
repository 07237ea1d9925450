"""What each view of the page shows, computed from the service and the core (no HTML here).

Every function takes the caller and answers only what the REST requirement table lets
the caller see: objects the caller may load, users the caller may list (a non-owner:
himself), roles the caller may list. An object or a user the caller may not see is
answered exactly like one that does not exist (:class:`Hidden`).

Who may do what on an object comes from the compiler (the same compact form the
backends and ``pushdown report`` read: classes of users that decide alike, and the
reasons of :class:`~pushdown.report.reasons.Reasoner`), scoped to the object's
container; a principal's rows are the report's own rows for that one user. Nothing
loops users x objects through the evaluator; the matrix checks exactly the cells asked
for, as the API would one by one.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pushdown.app.service import AccessControl
from pushdown.app.service import status as backend_status
from pushdown.app.service.history import describe
from pushdown.decide.compiler import Entitlements
from pushdown.decide.decider import Decider
from pushdown.decide.engine import LOCAL
from pushdown.decide.evaluator import Decision, Evaluator, operation_named
from pushdown.decide.inventory import Inventory
from pushdown.decide.listing import visible
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ModelError, PushdownError
from pushdown.model.privileges import Condition
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown.report.local import local_rows
from pushdown.report.operations import DEFAULT
from pushdown.report.reasons import Reasoner

PAGE = 50
#: the most cells one matrix asks the evaluator for
MAX_CELLS = 2000


class Hidden(Exception):
    """Not there, or not the caller's to see: both answered alike."""


def by_type() -> dict[SecurableType, tuple[str, ...]]:
    out: dict[SecurableType, list[str]] = {}
    for op in DEFAULT:
        kind = OPERATIONS[op].target
        if isinstance(kind, SecurableType) and not op.startswith("create_"):  # on the object itself
            out.setdefault(kind, []).append(op)
    return {k: tuple(v) for k, v in out.items()}


OPS_BY_TYPE = by_type()
#: the operations the page shows: the report's default ones, each on its own object
PAGE_OPS = tuple(op for ops in OPS_BY_TYPE.values() for op in ops)


@dataclass
class Reader:
    """One caller's reading of the model (the decision model, as REST decides on)."""

    ac: AccessControl
    caller: str
    model: Model = field(init=False)
    evaluator: Evaluator = field(init=False)

    def __post_init__(self) -> None:
        self.model = self.ac.decision_model()
        self.evaluator = Evaluator(self.model)
        self._users: set[str] | None = None

    # -- what the caller may see --------------------------------------------------------

    @property
    def admin(self) -> bool:
        """The metalake's owner or a service admin: sees every backend and the whole journal."""
        admins = set(self.ac.access.service_admins) | self.model.service_admins
        return self.caller in admins or self.model.owners.get(METALAKE) == self.caller

    def users(self) -> set[str]:
        """The users the caller may see (REST's list_users: the owner all, others himself)."""
        if self._users is None:
            shown = visible(self.evaluator, self.caller, "list_users", METALAKE)
            self._users = {u for u in shown if isinstance(u, str)}
        return self._users

    def may_load(self, ref: ObjectRef) -> bool:
        op = f"load_{ref.type.value}"
        if op not in OPERATIONS:
            return False
        return self.evaluator.authorize(self.caller, op, ref, explain=False).allowed

    def obj(self, name: str) -> ObjectRef:
        """The object named, once the caller may load it; :class:`Hidden` otherwise."""
        try:
            ref = ObjectRef.parse(name)
        except (ModelError, ValueError):
            raise Hidden(name) from None
        if ref.type is SecurableType.METALAKE or ref not in self.model.objects or not self.may_load(ref):
            raise Hidden(name)
        return ref

    def user(self, name: str) -> str:
        if name not in self.model.users or name not in self.users():
            raise Hidden(name)
        return name

    # -- search ---------------------------------------------------------------------------

    def search(self, text: str, limit: int = 20) -> list[str]:
        """Objects whose name holds ``text`` that the caller may load, in name order."""
        needle = text.strip().lower()
        if not needle:
            return []
        matches = [o for o in self.model.objects if needle in o.name.lower()]
        first = heapq.nsmallest(limit * 10, matches, key=_names)  # most callers see most of them
        found = [str(ref) for ref in first if self.may_load(ref)][:limit]
        if len(found) < limit and len(first) < len(matches):
            found = [str(ref) for ref in sorted(matches, key=_names) if self.may_load(ref)][:limit]
        return found

    def search_users(self, text: str, limit: int = 20) -> list[str]:
        needle = text.strip().lower()
        return sorted(u for u in self.users() if needle in u.lower())[:limit]


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
    # roles with the same grants on the path decide alike: one signature each
    signature: dict[str, frozenset[Any]] = {r: frozenset(g) for r, g in role_grants.items()}
    held: dict[str, set[str]] = {}
    for role in role_grants:
        for u in model.holders_of(role):
            into = held.get(u)
            if into is None:
                held[u] = {role}
            else:
                into.add(role)
    owned_on: dict[str, list[ObjectRef]] = {}
    for node in path:
        who = model.owners.get(node)
        if who is not None:
            owned_on.setdefault(who, []).append(node)
    admins = model.service_admins
    classes: dict[tuple[frozenset[Any], frozenset[ObjectRef], bool], list[str]] = {}
    for u in set(held) | set(owned_on) | (admins & model.users):
        sigs = frozenset(signature[r] for r in held.get(u, ()))
        key = (sigs, frozenset(owned_on.get(u, ())), u in admins)
        classes.setdefault(key, []).append(u)
    allowed_ops: dict[str, list[str]] = {}
    for (_, owned, admin), users in classes.items():
        decider = Decider(model, frozenset(held.get(users[0], ())), owned, admin)
        got = [op for op in ops if decider.decide(op, ref)]
        for u in users:
            if u in shown:
                allowed_ops[u] = got
    nobody = Decider(model, frozenset(), (), False)
    if any(nobody.decide(op, ref) for op in ops):  # a requirement that holds for every user
        got = [op for op in ops if nobody.decide(op, ref)]
        for u in shown:
            allowed_ops.setdefault(u, got)
    denies: list[tuple[str, str, str, str]] = []
    deny_roles: dict[str, list[Reason]] = {}
    for role in sorted(role_grants):
        for node, denied, cond in sorted(role_grants[role], key=lambda g: (g[0].names, g[1])):
            if cond is Condition.DENY:
                holders = sorted(u for u in model.holders_of(role) if u in shown)
                if holders:
                    denies.append((role, denied, str(node), ", ".join(holders[:20])))
                    reason = Reason("deny", f"DENY {denied} on {node} (role {role}) wins", role)
                    deny_roles.setdefault(role, []).append(reason)
    users = sorted(
        u
        for u in set(allowed_ops) | {h for r in deny_roles for h in model.holders_of(r) if h in shown}
        if allowed_ops.get(u) or any(r in deny_roles for r in held.get(u, ()))
    )
    pages = max(1, -(-len(users) // PAGE))
    page = min(max(page, 1), pages)
    rows = []
    for u in users[(page - 1) * PAGE : page * PAGE]:
        mine = frozenset(held.get(u, ()))
        decider = Decider(model, mine, owned_on.get(u, ()), u in admins)
        reasoner = Reasoner(decider)
        how = model.roles_of(u)
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


# -- the principal view -----------------------------------------------------------------


class _OneUser:
    """The local engine, compiling for one user only (the report's rows for that user)."""

    name = "local"

    def __init__(self, user: str) -> None:
        self.user = user

    def compile(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        users: Any = None,
        roots: Any = None,
    ) -> Entitlements:
        return LOCAL.compile(model, operations, inventory, [self.user], roots)


@dataclass
class PrincipalView:
    user: str
    groups: list[str]
    roles: list[tuple[str, str]]
    #: catalog -> object -> [(operation, reason)]
    rows: dict[str, dict[str, list[tuple[str, str]]]]
    total: int
    page: int
    pages: int
    changes: list[dict[str, Any]]
    seconds: float


def principal_view(reader: Reader, name: str, inventory: Inventory, page: int = 1) -> PrincipalView:
    started = time.perf_counter()
    user = reader.user(name)
    model = reader.model
    lines: list[tuple[str, str, str, str]] = []  # catalog, object, operation, reason
    loads: dict[tuple[str, str], bool] = {}
    for part in local_rows(model, PAGE_OPS, inventory, compiler=_OneUser(user)):
        for batch in part.batches:
            for row in batch:
                catalog, _, obj, kind, op, reason, role, privilege, source, stype, _via, group = row
                if catalog is None or obj is None or kind is None or op is None:
                    continue
                if user != reader.caller:  # another's: only what the caller may load
                    seen = loads.get((kind, obj))
                    if seen is None:
                        seen = loads[(kind, obj)] = reader.may_load(ObjectRef.parse(f"{kind} {obj}"))
                    if not seen:
                        continue
                if reason == "grant":
                    how = f"role {role}: {privilege} on {stype} {source}"
                    how += f" (through group {group})" if group else ""
                elif reason == "owner":
                    how = f"owner of {stype} {source}"
                else:
                    how = str(reason)
                lines.append((catalog, f"{kind} {obj}", op, how))
    objects = sorted({(c, o) for c, o, _, _ in lines})
    pages = max(1, -(-len(objects) // PAGE))
    page = min(max(page, 1), pages)
    chosen = set(objects[(page - 1) * PAGE : page * PAGE])
    rows: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for catalog, obj, op, how in lines:
        if (catalog, obj) in chosen:
            rows.setdefault(catalog, {}).setdefault(obj, []).append((op, how))
    held = model.roles_of(user)
    mentions = [
        f"user {user}",
        *(f"role {r}" for r in held),
        *(f"group {g}" for g in model.user_groups.get(user, ())),
    ]
    changes = [_entry(e) for e in reader.ac.store.history(mentions=mentions, limit=20)]
    return PrincipalView(
        user,
        sorted(model.user_groups.get(user, ())),
        sorted(held.items()),
        rows,
        len(objects),
        page,
        pages,
        changes,
        time.perf_counter() - started,
    )


# -- the matrix -------------------------------------------------------------------------


@dataclass
class Matrix:
    principals: list[str]
    objects: list[str]
    operations: list[str]
    #: (principal, object, operation) -> (allowed, reason)
    cells: dict[tuple[str, str, str], tuple[bool, str]]
    hidden: list[str]
    seconds: float


def matrix(reader: Reader, users: Sequence[str], objects: Sequence[str], operations: Sequence[str]) -> Matrix:
    """The cells asked for, each one check of the evaluator (as the API decides one call)."""
    model = reader.model
    shown_users, hidden = [], []
    for u in dict.fromkeys(u.strip() for u in users if u.strip()):
        try:
            shown_users.append(reader.user(u))
        except Hidden:
            hidden.append(u)
    refs: list[ObjectRef] = []
    for o in dict.fromkeys(o.strip() for o in objects if o.strip()):
        try:
            refs.append(reader.obj(o))
        except Hidden:
            hidden.append(o)
    wanted = [op.strip() for op in operations if op.strip() in OPERATIONS]
    cells: dict[tuple[str, str, str], tuple[bool, str]] = {}
    started = time.perf_counter()
    budget = MAX_CELLS
    for u in shown_users:
        for ref in refs:
            ops = [
                op for op in (wanted or OPS_BY_TYPE.get(ref.type, ())) if OPERATIONS[op].target is ref.type
            ]
            for op in ops:
                if budget <= 0:
                    break
                budget -= 1
                d = reader.evaluator.authorize(u, op, ref)
                cells[(u, str(ref), op)] = (d.allowed, _why(d))
    seconds = time.perf_counter() - started
    del model
    ops_shown = sorted({k[2] for k in cells}, key=lambda o: list(OPERATIONS).index(o))
    return Matrix(shown_users, [str(r) for r in refs], ops_shown, cells, hidden, seconds)


def _why(decision: Decision) -> str:
    """The decisive lines of a trace, in one line (the cell's hover text)."""
    lines = [
        s.text for s in decision.trace if s.ok == decision.allowed and s.text not in ("all of:", "any of:")
    ]
    return "; ".join(lines[:4]) or ("allowed" if decision.allowed else "not allowed")


# -- explain ----------------------------------------------------------------------------


@dataclass
class Node:
    ok: bool
    text: str
    children: list[Node] = field(default_factory=list)


def explain(reader: Reader, user: str, operation: str, target: str) -> tuple[Decision, list[Node]]:
    """``pushdown explain``'s decision, its trace as a tree (each step under the one above it)."""
    reader.user(user)
    try:
        op = operation_named(operation)
    except ModelError:
        raise Hidden(operation) from None
    if isinstance(op.target, SecurableType) and op.target is not SecurableType.METALAKE:
        if op.target is SecurableType.ROLE:
            if target not in reader.model.roles or not reader.evaluator.authorize(
                reader.caller, "get_role", ObjectRef(SecurableType.ROLE, (target,)), explain=False
            ):
                raise Hidden(target)
        else:
            reader.obj(f"{op.target.value} {target}")
    elif op.target in ("user", "group"):
        if op.target == "user":
            reader.user(target)
        elif target not in reader.model.user_groups.get(reader.caller, ()) and not reader.admin:
            raise Hidden(target)
    try:
        decision = reader.evaluator.authorize(user, op.name, target)
    except (ModelError, PushdownError):
        raise Hidden(target) from None
    return decision, tree(decision)


def tree(decision: Decision) -> list[Node]:
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    for step in decision.trace:
        node = Node(step.ok, step.text)
        while stack and stack[-1][0] >= step.depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((step.depth, node))
    return roots


# -- the audit --------------------------------------------------------------------------


def _entry(e: Any) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "at": e.at,
        "actor": e.actor,
        "via": e.via,
        "change": describe(e.event),
        "event": e.event,
    }


def audit(
    reader: Reader, principal: str = "", obj: str = "", page: int = 1
) -> tuple[list[dict[str, Any]], bool]:
    """Journal entries, newest first, filtered; a non-admin sees those naming himself or an
    object he may load (and the filter itself must name something he may see)."""
    mentions: list[str] = []
    if principal:
        mentions.append(f"user {reader.user(principal)}")
    if obj:
        mentions.append(str(reader.obj(obj)))
    out: list[dict[str, Any]] = []
    before: int | None = None
    want = page * PAGE + 1
    kept: list[dict[str, Any]] = []
    while len(kept) < want:
        batch = reader.ac.store.history(mentions=mentions, limit=500, before=before)
        if not batch:
            break
        for e in batch:
            if reader.admin or _mine(reader, e.event):
                kept.append(_entry(e))
        before = batch[-1].seq
        if len(batch) < 500:
            break
    out = kept[(page - 1) * PAGE : page * PAGE]
    return out, len(kept) > page * PAGE


def _mine(reader: Reader, event: Any) -> bool:
    for value in vars(event).values():
        if value == reader.caller:
            return True
        if isinstance(value, ObjectRef) and value in reader.model.objects and reader.may_load(value):
            return True
        if hasattr(value, "name") and getattr(value, "name", None) == reader.caller:
            return True
    return False


# -- backends ---------------------------------------------------------------------------


def plan_words(plan: Plan) -> str:
    return plan.render()


def backends_view(reader: Reader, with_plan: bool) -> list[dict[str, Any]]:
    """Each backend's status (``pushdown status``) and, asked for, its pending plan (``plan --pending``)."""
    if not reader.admin:
        return []
    ac = reader.ac
    out = []
    plans: dict[str, Any] = {}  # backend -> its SyncResult
    if with_plan:
        for done in ac.sync(full=False, dry_run=True):
            plans[done.backend] = done
    model = reader.model
    for st in backend_status.statuses(ac.store, ac.backends):
        backend = ac.backends.get(st.backend)
        catalogs = sorted(backend.enforces(model)) if backend is not None else []
        row: dict[str, Any] = {
            "name": st.backend,
            "catalogs": catalogs,
            "cursor": st.cursor,
            "lag_events": st.lag_events,
            "lag_seconds": st.lag_seconds,
            "last_success": backend_status.when(st.last_success),
            "last_error": st.last_error,
            "findings": st.findings,
            "failing": st.failing,
        }
        result: Any = plans.get(st.backend)
        if result is not None:
            if result.error is not None:
                row["plan"] = f"ERROR {result.error}"
            elif result.plan is None or not result.plan.drift:
                row["plan"] = "nothing to do"
            else:
                row["plan"] = plan_words(result.plan)
            if result.plan is not None:
                row["notes"] = list(result.plan.notes)
                row["finding_lines"] = list(result.plan.findings)
        out.append(row)
    return out


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


def _names(ref: ObjectRef) -> tuple[str, ...]:
    return ref.names
