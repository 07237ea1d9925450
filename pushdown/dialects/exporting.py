"""The model -> a dialect's statements: exact where the dialect can say it, else narrower.

Grants are translated one by one (:class:`~pushdown.dialects.data.Translation`), then a
guard evaluates the result in the dialect for every user, every registered object and one
unregistered object below each (a future table or schema), on every operation the two
share; a grant that lets a user do what pushdown's evaluator refuses is withdrawn, with a
comment line saying so. What is left is never wider than the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from pushdown.decide.evaluator import Evaluator
from pushdown.dialects.data import ALL, COMMON_OPERATIONS, Dialect, Need
from pushdown.dialects.evaluate import DGrant, Obj, State, path
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Grant, Model

FUTURE = "(future)"
_FORM_SCOPE = {"TABLES IN SCHEMA": ("SCHEMA", "TABLES")}
_CHILD = {"metalake": SecurableType.CATALOG, "catalog": SecurableType.SCHEMA}


@dataclass
class Exported:
    grants: set[DGrant] = field(default_factory=set)
    owners: dict[Obj, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    comments: list[str] = field(default_factory=list)


def dialect_grant(
    d: Dialect, who: str, privilege: str, form: str, names: tuple[str, ...], deny: bool
) -> DGrant:
    type_, scope = _FORM_SCOPE.get(form, (form, ""))
    return DGrant(who, privilege, type_, names, deny, False, scope)


def _holders(d: Dialect, model: Model, role: str) -> Iterator[tuple[str, str]]:
    if d.name == "singdata":  # no groups: each member holds it as a user
        for user in sorted(model.holders_of(role)):
            yield user, "user"
        return
    for user in sorted(model.role_users.get(role, ())):
        yield user, "user"
    for group in sorted(model.role_groups.get(role, ())):
        yield group, "group"


def translate(d: Dialect, model: Model) -> Exported:
    out = Exported()
    for role in sorted(model.roles):
        for grant in sorted(model.roles[role]):
            for who, kind in _holders(d, model, role):
                out.kinds[who] = kind
                _one(d, model, out, who, grant)
    _owners(d, model, out)
    return out


def _one(d: Dialect, model: Model, out: Exported, who: str, grant: Grant) -> None:
    key = (grant.privilege.value, grant.object.type.value)
    deny = grant.condition is Condition.DENY
    hit = d.translation.export.get(key)
    if hit is not None and (not deny or d.has_deny):
        form, privileges = hit
        for p in privileges[:1] if deny else privileges:
            out.grants.add(dialect_grant(d, who, p, form, grant.object.names, deny))
        return
    if deny:
        out.comments.append(
            f"left out: {grant} for {who}: {d.title} has no DENY for it; "
            "what it cuts is withdrawn below where needed"
        )
        return
    child = _CHILD.get(grant.object.type.value)
    if child is not None and child in grant.privilege.securable_types:
        kids = sorted(k for k in model.children(grant.object) if k.type is child)
        out.comments.append(f"narrowed: {grant} for {who} is given on each registered {child.value}")
        for kid in kids:
            _one(d, model, out, who, Grant(kid, grant.privilege, grant.condition))
        return
    out.comments.append(f"left out: {grant} for {who}: {d.title} cannot say it")


def _owners(d: Dialect, model: Model, out: Exported) -> None:
    for obj, owner in sorted(model.owners.items()):
        kind = d.object_types.get(obj.type.value)
        if kind is None or obj.type is SecurableType.METALAKE:
            continue
        if d.owner_has_all:
            out.owners[(kind, obj.names)] = owner
            out.kinds.setdefault(owner, "user")
        elif d.grant_option and obj.type is SecurableType.TABLE:
            out.grants.add(DGrant(owner, "ALL PRIVILEGES", kind, obj.names, False, True))
            out.kinds.setdefault(owner, "user")
            out.comments.append(f"narrowed: owner {owner} of {obj} gets ALL PRIVILEGES WITH GRANT OPTION")
        else:
            out.comments.append(
                f"left out: owner {owner} of {obj}: {d.title} has no owner of a {obj.type.value}"
            )


def probes(model: Model) -> list[ObjectRef]:
    """Every registered catalog, schema and table, and a future schema and table below each."""
    out: list[ObjectRef] = []
    for cat in sorted(o for o in model.objects if o.type is SecurableType.CATALOG):
        out.append(cat)
        schemas = [
            *sorted(k for k in model.children(cat) if k.type is SecurableType.SCHEMA),
            ObjectRef(SecurableType.SCHEMA, (*cat.names, FUTURE)),
        ]
        for sch in schemas:
            out.append(sch)
            out += sorted(k for k in model.children(sch) if k.type is SecurableType.TABLE)
            out.append(ObjectRef(SecurableType.TABLE, (*sch.names, FUTURE)))
    return out


def target(op: str, obj: ObjectRef) -> bool:
    want = SecurableType.SCHEMA if op == "create_schema" else SecurableType.TABLE
    return obj.type is want


def wider(d: Dialect, model: Model, state: State) -> list[tuple[str, str, ObjectRef]]:
    """(user, operation, object) the dialect allows and pushdown's evaluator refuses."""
    ev = Evaluator(model)
    ops = [op for op in COMMON_OPERATIONS if op in d.operations]
    out = []
    for user in sorted(model.users):
        groups = sorted(model.user_groups.get(user, ()))
        for obj in probes(model):
            dobj = (d.object_types[obj.type.value], obj.names)
            for op in ops:
                if not target(op, obj) or not state.allowed(user, groups, op, dobj):
                    continue
                if not ev.authorize(user, COMMON_OPERATIONS[op], obj, explain=False).allowed:
                    out.append((user, op, obj))
    return out


def guard(d: Dialect, model: Model, out: Exported) -> None:
    """Withdraw what lets a user do more than the model allows, until nothing does."""
    while True:
        state = State(d, out.grants, out.owners)
        found = wider(d, model, state)
        if not found:
            return
        user, op, obj = found[0]
        mine = {user, *model.user_groups.get(user, ())}
        nodes = path(d, (d.object_types[obj.type.value], obj.names))
        cut = _with_partners(d, out, _culprits(d, out, mine, nodes, d.operations[op]))
        owned = {n: o for n, o in out.owners.items() if n in nodes and o in mine}
        for g in sorted(cut):
            out.comments.append(
                f"withdrawn: {g.privilege} on {_where(g)} for {g.principal}: "
                f"it would let {user} {op} {obj}, which the model refuses"
            )
        for n in owned:
            out.comments.append(
                f"withdrawn: owner of {n[0]} {'.'.join(n[1])}: it would let {user} {op} {obj}"
            )
            del out.owners[n]
        if not cut and not owned:  # nothing left to withdraw: give up on this user's grants
            cut = {g for g in out.grants if g.principal in mine and not g.deny}
        out.grants -= cut
        for g in sorted(cut):
            _push_down(d, model, out, g)


def _culprits(
    d: Dialect, out: Exported, mine: set[str], nodes: list[Obj], needs: tuple[Need, ...]
) -> set[DGrant]:
    """The grants giving the operation's own privilege (its first clause), else any of its clauses."""

    def giving(privileges: set[str]) -> set[DGrant]:
        return {
            g
            for g in out.grants
            if g.principal in mine
            and not g.deny
            and g.object in nodes
            and (g.privilege in privileges or g.privilege == ALL)
        }

    return giving(set(needs[0].privileges)) or giving({p for n in needs for p in n.privileges})


def _with_partners(d: Dialect, out: Exported, cut: set[DGrant]) -> set[DGrant]:
    """The grants that give a model privilege only together (MODIFY with SELECT) move together."""

    def partners(g: DGrant, h: DGrant) -> bool:
        same = (h.principal, h.type, h.names, h.scope, h.deny) == (
            g.principal,
            g.type,
            g.names,
            g.scope,
            g.deny,
        )
        return same and any(g.privilege in c and h.privilege in c for c, _, _ in d.translation.combos)

    return cut | {h for h in out.grants for g in cut if partners(g, h)}


def _where(g: DGrant) -> str:
    on = f"ALL {g.scope} IN {g.type}" if g.scope else g.type
    return f"{on} {'.'.join(g.names)}".rstrip()


def _push_down(d: Dialect, model: Model, out: Exported, g: DGrant) -> None:
    """Give a withdrawn grant on a container to each registered child instead (narrower)."""
    kinds = {v: k for k, v in d.object_types.items()}
    mtype = kinds.get(g.type)
    if mtype is None or mtype == "metalake" or mtype == "table":
        return
    parent = ObjectRef.of(mtype, g.names)
    for kid in sorted(model.children(parent)):
        ktype = d.object_types.get(kid.type.value)
        if g.scope:
            ktype = "TABLE" if kid.type is SecurableType.TABLE else None
        if ktype is None or not d.grantable(g.privilege, ktype):
            continue
        out.grants.add(DGrant(g.principal, g.privilege, ktype, kid.names, False, g.grant_option))
        out.comments.append(
            f"narrowed: {g.privilege} on {_where(g)} for {g.principal} is given on {kid} instead"
        )


def export(d: Dialect, model: Model) -> Exported:
    out = translate(d, model)
    guard(d, model, out)
    return out
