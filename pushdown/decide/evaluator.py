"""Decide whether a user may perform an operation, and say why.

``authorize(model, user, operation, target)`` interprets the requirement table of
:mod:`pushdown.decide.requirements`. Privileges inherit downward; a DENY of a privilege
anywhere on the object's path (by any role the user holds, directly or through a
group) beats every ALLOW of that privilege; each privilege is judged on its own, so
DENY MODIFY_TABLE leaves an ALLOW SELECT_TABLE standing. Ownership is its own
branch of the table and is not affected by DENY.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from pushdown.decide.requirements import (
    LOAD_OPERATION,
    OPERATIONS,
    AllOf,
    AnyOf,
    Can,
    Has,
    Himself,
    HoldsRole,
    InMetalake,
    Loadable,
    MemberOf,
    Operation,
    Ordinary,
    Owner,
    ServiceAdmin,
    Term,
)
from pushdown.errors import ModelError
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

Target = ObjectRef | str


@dataclass(frozen=True)
class Step:
    """One line of a decision's trace: a check, whether it held, and why."""

    ok: bool
    text: str
    depth: int


@dataclass(frozen=True)
class Decision:
    user: str
    operation: str
    target: str
    allowed: bool
    trace: tuple[Step, ...] = ()

    def __bool__(self) -> bool:
        return self.allowed

    def explain(self) -> str:
        verdict = "ALLOWED" if self.allowed else "DENIED"
        lines = [f"{self.user} {self.operation} {self.target}: {verdict}"]
        for step in self.trace:
            mark = "+" if step.ok else "-"
            lines.append(f"{'  ' * (step.depth + 1)}{mark} {step.text}")
        return "\n".join(lines)


@dataclass(frozen=True)
class PrivilegeCheck:
    """How one privilege stands for a set of roles on one object's path."""

    privilege: Privilege
    allows: tuple[tuple[ObjectRef, str], ...]
    denies: tuple[tuple[ObjectRef, str], ...]

    @property
    def allowed(self) -> bool:
        return bool(self.allows) and not self.denies


def check_privilege(
    model: Model, roles: Mapping[str, str], obj: ObjectRef, privilege: Privilege
) -> PrivilegeCheck:
    allows: list[tuple[ObjectRef, str]] = []
    denies: list[tuple[ObjectRef, str]] = []
    for node in obj.path:
        by_priv = model.by_object.get(node)
        if not by_priv:
            continue
        conds = by_priv.get(privilege)
        if not conds:
            continue
        for cond, holders in conds.items():
            sink = denies if cond is Condition.DENY else allows
            small, big = (holders, roles) if len(holders) <= len(roles) else (roles, holders)
            sink.extend((node, r) for r in small if r in big)
    return PrivilegeCheck(privilege, tuple(allows), tuple(denies))


def privilege_allowed(model: Model, roles: Mapping[str, str], obj: ObjectRef, privilege: Privilege) -> bool:
    """``check_privilege(...).allowed`` without collecting the evidence (the explain=False path)."""
    held = roles.keys()
    allowed = False
    get = model.by_object.get
    for node in obj.path:
        by_priv = get(node)
        if not by_priv:
            continue
        conds = by_priv.get(privilege)
        if not conds:
            continue
        holders = conds.get(Condition.DENY)
        if holders and not held.isdisjoint(holders):
            return False
        if not allowed:
            holders = conds.get(Condition.ALLOW)
            allowed = holders is not None and not held.isdisjoint(holders)
    return allowed


#: The privileges grantable on each securable type (what ``effective_privileges`` may return).
APPLICABLE: dict[SecurableType, frozenset[Privilege]] = {
    t: frozenset(p for p in Privilege if t in p.securable_types) for t in SecurableType
}


@dataclass
class _Context:
    model: Model
    user: str
    roles: Mapping[str, str]
    explain: bool
    trace: list[Step] = field(default_factory=list)
    depth: int = 0
    memo: dict[tuple[str, ObjectRef], bool] = field(default_factory=dict)

    def note(self, ok: bool, text: str) -> None:
        if self.explain:
            self.trace.append(Step(ok, text, self.depth))


class Evaluator:
    """Evaluates decisions against one model; cheap to create, caches per model version."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._roles: dict[str, Mapping[str, str]] = {}
        self._version = model.version

    def _user_roles(self, user: str) -> Mapping[str, str]:
        if self._version != self.model.version:
            self._roles.clear()
            self._version = self.model.version
        roles = self._roles.get(user)
        if roles is None:
            roles = self._roles[user] = self.model.roles_of(user)
        return roles

    # -- public ------------------------------------------------------------------------

    def authorize(
        self,
        user: str,
        operation: str,
        target: Target,
        other: Target | None = None,
        *,
        explain: bool = True,
    ) -> Decision:
        op = operation_named(operation)
        target_ref = resolve_target(op, target)
        other_ref = None if other is None else resolve_other(op, other)
        ctx = _Context(self.model, user, self._user_roles(user), explain)
        if user not in self.model.users:
            ctx.note(False, f"user {user!r} is not in metalake {self.model.metalake!r}")
            allowed = False
        else:
            allowed = self._op(ctx, op, target_ref, other_ref)
        return Decision(user, op.name, _show(target_ref), allowed, tuple(ctx.trace))

    def allowed_among(self, user: str, operation: str, targets: Iterable[Target]) -> list[Target]:
        """The ``targets`` that ``operation`` allows ``user``, in their order.

        Each target is judged as ``authorize(user, operation, target, explain=False)`` judges
        it (targets given already resolved: ObjectRefs, or names for user and group
        operations); the nested checks they share, such as the load_catalog and load_schema
        gates of one schema's tables, are made once for all of them.
        """
        op = operation_named(operation)
        if user not in self.model.users:
            return []
        ctx = _Context(self.model, user, self._user_roles(user), False)
        term, term_of = op.requires, self._term
        return [t for t in targets if term_of(ctx, term, t, None)]

    def allowed_children(
        self, user: str, operation: str, parent: ObjectRef, children: Collection[ObjectRef]
    ) -> list[ObjectRef]:
        """``allowed_among`` for objects of one type that are all children of ``parent``.

        The requirement is read once against the path the children share (gates on
        ancestors, owners of ancestors, grants on ancestors) and then applied to them as
        sets: the children the user owns come from ``Model.owned_by``, and only the
        children carrying grants of their own are looked at one by one. Where the
        requirement holds a term not read this way (a nested check on the child itself),
        every child is judged in full. The result is in no particular order.
        """
        op = operation_named(operation)
        if user not in self.model.users or not children:
            return []
        ctx = _Context(self.model, user, self._user_roles(user), False)
        kind = next(iter(children)).type
        given = children if isinstance(children, set) else set(children)  # read, never changed
        meeting = self._children_meeting(ctx, op.requires, parent, kind, given)
        if meeting is None:
            return [t for t in children if self._term(ctx, op.requires, t, None)]
        return list(meeting)

    def _children_meeting(
        self, ctx: _Context, term: Term, parent: ObjectRef, kind: SecurableType, children: set[ObjectRef]
    ) -> set[ObjectRef] | None:
        """The ``children`` (of ``parent``, of type ``kind``) meeting ``term``; None: not read here."""
        if isinstance(term, AllOf):
            for sub in term.terms:
                if not children:
                    break
                part = self._children_meeting(ctx, sub, parent, kind, children)
                if part is None:
                    return None
                children = part
            return children
        if isinstance(term, AnyOf):
            met: set[ObjectRef] = set()
            for sub in term.terms:
                if not children:
                    break
                part = self._children_meeting(ctx, sub, parent, kind, children)
                if part is None:
                    return None
                met |= part
                children = children - part if part else children
            return met
        if getattr(term, "on", "target") != "target":
            return None
        if isinstance(term, Can):
            node = parent.ancestor(term.at)
            if node is None:  # the child itself (or nothing): judged child by child
                return None
            return children if self._nested(ctx, term.operation, node) else set()
        if isinstance(term, Owner):
            user = ctx.user
            if term.levels and any(
                ctx.model.owners.get(n) == user for n in parent.path if n.type in term.levels
            ):
                return children
            if term.levels and kind not in term.levels:
                return set()
            return children & ctx.model.owned_by.get(user, set())
        if isinstance(term, Has):
            return self._children_having(ctx, term, parent, children)
        if isinstance(term, (ServiceAdmin, InMetalake)):
            return children if self._simple(ctx, term, parent) else set()
        return None  # Loadable, and the terms about principals: judged child by child

    def _children_having(
        self, ctx: _Context, term: Has, parent: ObjectRef, children: set[ObjectRef]
    ) -> set[ObjectRef]:
        """The children on which one of the term's privileges is effectively allowed."""
        model, held = ctx.model, ctx.roles.keys()
        by_object = model.by_object
        # each privilege on the shared path: (ALLOWed above, DENYed above)
        above: dict[Privilege, tuple[bool, bool]] = {}
        for privilege in term.privileges:
            allowed = denied = False
            for node in parent.path:
                conds = by_object.get(node, {}).get(privilege)
                if conds:
                    holders = conds.get(Condition.DENY)
                    denied = denied or (holders is not None and not held.isdisjoint(holders))
                    holders = conds.get(Condition.ALLOW)
                    allowed = allowed or (holders is not None and not held.isdisjoint(holders))
            above[privilege] = (allowed, denied)
        inherited = any(a and not d for a, d in above.values())
        own = children & by_object.keys()  # the children carrying grants of their own
        met = children - own if inherited else set()
        for child in own:
            by_priv = by_object[child]
            for privilege, (allowed, denied) in above.items():
                if denied:
                    continue
                conds = by_priv.get(privilege)
                if not conds:
                    if allowed:
                        break
                    continue
                holders = conds.get(Condition.DENY)
                if holders and not held.isdisjoint(holders):
                    continue
                holders = conds.get(Condition.ALLOW)
                if allowed or (holders and not held.isdisjoint(holders)):
                    break
            else:
                continue
            met.add(child)
        return met

    def holds(self, user: str, term: Term, target: Target) -> bool:
        """Whether ``user`` meets one requirement term on ``target`` (no trace)."""
        if user not in self.model.users:
            return False
        return self._term(_Context(self.model, user, self._user_roles(user), False), term, target, None)

    def effective_privileges(self, principal: Principal | str, obj: ObjectRef) -> frozenset[Privilege]:
        """Privileges effectively ALLOWed to ``principal`` on ``obj`` (DENY and inheritance applied)."""
        held = self.roles_of(principal).keys()
        allowed: set[Privilege] = set()
        denied: set[Privilege] = set()
        get = self.model.by_object.get
        for node in obj.path:  # one pass over the grants on the path, whatever they hold
            by_priv = get(node)
            if not by_priv:
                continue
            for privilege, conds in by_priv.items():
                holders = conds.get(Condition.DENY)
                if holders and not held.isdisjoint(holders):
                    denied.add(privilege)
                holders = conds.get(Condition.ALLOW)
                if holders and not held.isdisjoint(holders):
                    allowed.add(privilege)
        if not allowed:
            return _NONE
        return _interned((allowed - denied) & APPLICABLE[obj.type])

    def roles_of(self, principal: Principal | str) -> Mapping[str, str]:
        if isinstance(principal, str):
            principal = Principal.user(principal)
        if principal.kind is PrincipalKind.USER:
            return self._user_roles(principal.name)
        if principal.kind is PrincipalKind.GROUP:
            return {r: "directly" for r in self.model.group_roles.get(principal.name, ())}
        return {principal.name: "itself"}

    # -- interpretation ----------------------------------------------------------------

    def _op(self, ctx: _Context, op: Operation, target: Target, other: Target | None) -> bool:
        return self._term(ctx, op.requires, target, other)

    def _term(self, ctx: _Context, term: Term, target: Target, other: Target | None) -> bool:
        if isinstance(term, (AllOf, AnyOf)):
            return self._combine(ctx, term, target, other)
        subject = other if getattr(term, "on", "target") == "other" else target
        if isinstance(subject, str) and isinstance(term, (Has, Owner)):
            subject = METALAKE  # users and groups are managed at the metalake
        if isinstance(term, Has):
            return self._has(ctx, term, subject)
        if isinstance(term, Owner):
            return self._owner(ctx, term, subject)
        if isinstance(term, Can):
            return self._can(ctx, term, target)
        if isinstance(term, Loadable):
            return self._loadable(ctx, subject)
        return self._simple(ctx, term, target)

    def _combine(self, ctx: _Context, term: AllOf | AnyOf, target: Target, other: Target | None) -> bool:
        want_all = isinstance(term, AllOf)
        if not ctx.explain:
            for sub in term.terms:
                if self._term(ctx, sub, target, other) != want_all:
                    return not want_all
            return want_all
        ctx.note(True, "all of:" if want_all else "any of:")
        header = len(ctx.trace) - 1
        ctx.depth += 1
        result = want_all
        for sub in term.terms:
            ok = self._term(ctx, sub, target, other)
            if ok != want_all:
                result = not want_all
        ctx.depth -= 1
        if ctx.explain:
            ctx.trace[header] = Step(result, ctx.trace[header].text, ctx.trace[header].depth)
        return result

    def _has(self, ctx: _Context, term: Has, subject: Target | None) -> bool:
        assert isinstance(subject, ObjectRef)
        if not ctx.explain:
            model, roles = ctx.model, ctx.roles
            return any(privilege_allowed(model, roles, subject, p) for p in term.privileges)
        found = False
        for privilege in term.privileges:
            check = check_privilege(ctx.model, ctx.roles, subject, privilege)
            ctx.note(check.allowed, _describe_check(check, subject, ctx.roles))
            if check.allowed:
                found = True
        return found

    def _owner(self, ctx: _Context, term: Owner, subject: Target | None) -> bool:
        assert isinstance(subject, ObjectRef)
        nodes = [subject] if not term.levels else [n for n in subject.path if n.type in term.levels]
        if not ctx.explain:
            owners, user = ctx.model.owners, ctx.user
            return any(owners.get(n) == user for n in nodes)
        owned = [n for n in nodes if ctx.model.owners.get(n) == ctx.user]
        if ctx.explain:
            wanted = " or ".join(str(n) for n in reversed(nodes))
            if owned:
                ctx.note(True, f"{ctx.user} owns {owned[-1]}")
            else:
                held = [f"{ctx.model.owners[n]} owns {n}" for n in nodes if n in ctx.model.owners]
                ctx.note(
                    False, f"owner of {wanted}: not {ctx.user}" + (f" ({'; '.join(held)})" if held else "")
                )
        return bool(owned)

    def _can(self, ctx: _Context, term: Can, target: Target) -> bool:
        assert isinstance(target, ObjectRef)
        node = target.ancestor(term.at)
        if node is None:
            raise ModelError(f"{target} has no {term.at.label} to check {term.operation} on")
        return self._nested(ctx, term.operation, node)

    def _loadable(self, ctx: _Context, subject: Target | None) -> bool:
        assert isinstance(subject, ObjectRef)
        return self._nested(ctx, LOAD_OPERATION[subject.type], subject)

    def _nested(self, ctx: _Context, operation: str, node: ObjectRef) -> bool:
        key = (operation, node)
        if not ctx.explain:  # no trace: skip building the f-strings ctx.note would drop
            ok = ctx.memo.get(key)
            if ok is None:
                ok = ctx.memo[key] = self._op(ctx, OPERATIONS[operation], node, None)
            return ok
        if key in ctx.memo:
            ok = ctx.memo[key]
            ctx.note(ok, f"{operation} on {_show(node)}: {'allowed' if ok else 'denied'}, as above")
            return ok
        ctx.note(True, f"{operation} on {_show(node)}:")
        header = len(ctx.trace) - 1
        ctx.depth += 1
        ok = self._op(ctx, OPERATIONS[operation], node, None)
        ctx.depth -= 1
        if ctx.explain:
            ctx.trace[header] = Step(ok, ctx.trace[header].text, ctx.trace[header].depth)
        ctx.memo[key] = ok
        return ok

    def _simple(self, ctx: _Context, term: Term, target: Target) -> bool:
        model, user = ctx.model, ctx.user
        if isinstance(term, ServiceAdmin):
            ok = user in model.service_admins
            ctx.note(ok, f"{user} is {'' if ok else 'not '}a service admin")
        elif isinstance(term, InMetalake):
            ok = user in model.users
            ctx.note(ok, f"{user} is in metalake {model.metalake}")
        elif isinstance(term, Himself):
            ok = target == user
            ctx.note(ok, f"{user} asks about {'' if ok else 'someone other than '}himself")
        elif isinstance(term, MemberOf):
            ok = isinstance(target, str) and user in model.groups.get(target, ())
            ctx.note(ok, f"{user} is {'' if ok else 'not '}a member of group {target}")
        elif isinstance(term, Ordinary):
            ok = target not in model.service_admins and model.owners.get(METALAKE) != target
            ctx.note(
                ok,
                f"{target} is {'neither' if ok else 'either'} a service admin "
                f"{'nor' if ok else 'or'} the metalake's owner",
            )
        elif isinstance(term, HoldsRole):
            name = target.names[0] if isinstance(target, ObjectRef) else target
            ok = name in ctx.roles
            ctx.note(ok, f"{user} {'holds' if ok else 'does not hold'} role {name}")
        else:  # pragma: no cover - the table holds no other terms
            raise TypeError(f"unknown requirement term {term!r}")
        return ok


_NONE: frozenset[Privilege] = frozenset()
_SETS: dict[frozenset[Privilege], frozenset[Privilege]] = {}


def _interned(privileges: set[Privilege]) -> frozenset[Privilege]:
    """One shared frozenset per distinct result: callers keep millions, only dozens differ."""
    key = frozenset(privileges)
    return _SETS.setdefault(key, key)


def _describe_check(check: PrivilegeCheck, obj: ObjectRef, roles: Mapping[str, str]) -> str:
    name = check.privilege.value

    def by(hits: tuple[tuple[ObjectRef, str], ...], cond: str) -> str:
        return "; ".join(f"{cond} on {node} by role {role} (held {roles[role]})" for node, role in hits)

    if check.denies:
        text = f"{name} denied: {by(check.denies, 'DENY')}"
        return text + (f", which wins over {by(check.allows, 'ALLOW')}" if check.allows else "")
    if check.allows:
        return f"{name} allowed: {by(check.allows, 'ALLOW')}"
    return f"{name}: no role of the user grants it on {obj} or above"


def operation_named(name: str) -> Operation:
    key = name.strip().lower().replace(" ", "_").replace("-", "_")
    if key not in OPERATIONS:
        raise ModelError(f"unknown operation {name!r}; `pushdown explain --list` shows them all")
    return OPERATIONS[key]


def resolve_target(op: Operation, target: Target) -> Target:
    """Turn a name given on the command line into the operation's target."""
    if op.target in ("user", "group"):
        return target if isinstance(target, str) else target.name
    if isinstance(target, ObjectRef):
        return target
    if op.target in ("object", "securable"):
        return ObjectRef.parse(target)
    assert isinstance(op.target, SecurableType)
    if op.target is SecurableType.METALAKE:
        return METALAKE
    return ObjectRef.of(op.target, target)


def resolve_other(op: Operation, other: Target) -> ObjectRef:
    if isinstance(other, ObjectRef):
        return other
    if isinstance(op.other, SecurableType):
        return ObjectRef.of(op.other, other)
    return ObjectRef.parse(other)


def _show(target: Target) -> str:
    return target if isinstance(target, str) else str(target)


def authorize(
    model: Model, user: str, operation: str, target: Target, other: Target | None = None
) -> Decision:
    return Evaluator(model).authorize(user, operation, target, other)


def effective_privileges(model: Model, principal: Principal | str, obj: ObjectRef) -> frozenset[Privilege]:
    return Evaluator(model).effective_privileges(principal, obj)
