"""A dialect's grants -> the model, never wider: what the model cannot say is left out and
reported item by item; no dialect privilege becomes a model privilege that enables more."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from pushdown.dialects.data import ALL, Dialect
from pushdown.dialects.evaluate import DGrant
from pushdown.dialects.sql import Script
from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

_SCOPES = {"TABLES": "TABLES IN SCHEMA", "OBJECTS": "OBJECTS IN SCHEMA", "VIEWS": "VIEWS IN SCHEMA"}


@dataclass
class Imported:
    model: Model
    report: list[str] = field(default_factory=list)


def form_of(grant: DGrant) -> str:
    return grant.type if not grant.scope else _SCOPES.get(grant.scope, f"{grant.scope} IN {grant.type}")


def show(grant: DGrant) -> str:
    verb = "DENY" if grant.deny else "GRANT"
    name = ".".join(grant.names)
    on = f"ALL {grant.scope} IN {grant.type}" if grant.scope else grant.type
    tail = " WITH GRANT OPTION" if grant.grant_option else ""
    return f"{verb} {grant.privilege} ON {on} {name}".rstrip() + f" TO {grant.principal}{tail}"


class _Builder:
    def __init__(self, dialect: Dialect, script: Script) -> None:
        self.d, self.script = dialect, script
        self.out = Imported(Model())
        self.roles: dict[str, str] = {}

    def do(self, change: Callable[..., list[Event]], *args: object) -> None:
        for event in change(self.out.model, *args):
            self.out.model.apply(event)

    def left_out(self, grant: DGrant, why: str) -> None:
        self.out.report.append(f"left out: {show(grant)}: {why}")

    def principal(self, name: str) -> str:
        if name in self.roles:
            return self.roles[name]
        kind = self.script.kinds.get(name, "user")
        model = self.out.model
        if kind == "role":
            role = name
        else:
            role = f"grants_of_{name}"
            while role in self.script.kinds:
                role += "_"
        self.do(ch.create_role, role)
        if kind == "user":
            if name not in model.users:
                self.do(ch.add_user, name)
            self.do(ch.grant_role, role, Principal.user(name))
        elif kind == "group":
            self.do(ch.add_group, name)
            self.do(ch.grant_role, role, Principal.group(name))
        self.roles[name] = role
        return role

    def register(self, obj: ObjectRef) -> None:
        for node in obj.path:
            if node.type.value != "metalake" and node not in self.out.model.objects:
                self.do(ch.create_object, node)

    def grant(self, who: str, obj: ObjectRef, privileges: set[str], condition: Condition) -> None:
        if privileges:
            self.register(obj)
            self.do(ch.grant_privileges, self.principal(who), obj, sorted(privileges), condition)


def model_object(dialect: Dialect, grant: DGrant) -> ObjectRef | None:
    kind = dialect.translation.forms.get(form_of(grant))
    return None if kind is None else ObjectRef.of(kind, grant.names)


def to_model(dialect: Dialect, script: Script) -> Imported:
    """The model of ``script``'s grants and owners, with what it left out."""
    b = _Builder(dialect, script)
    allows: dict[tuple[str, str, tuple[str, ...], str], list[DGrant]] = defaultdict(list)
    for g in sorted(script.grants):
        if g.deny:
            _deny(b, g)
        else:
            allows[(g.principal, g.type, g.names, g.scope)].append(g)
    for group in allows.values():
        _allow(b, group)
    _owners(b)
    _implied_catalog(b)
    return b.out


def _allow(b: _Builder, group: list[DGrant]) -> None:
    t = b.d.translation
    first = group[0]
    obj = model_object(b.d, first)
    if obj is None:
        for g in group:
            b.left_out(g, f"the model has no securable like {form_of(g)}")
        return
    form, held = form_of(first), {g.privilege for g in group}
    out: set[str] = set()
    used: set[str] = set()
    for g in group:
        if (g.privilege, form) in t.allow:
            out |= set(t.allow[(g.privilege, form)])
            used.add(g.privilege)
    for needed, cform, gives in t.combos:
        if cform == form and (needed <= held or ALL in held):
            out |= set(gives)
            used |= needed & held
    for g in group:
        if g.privilege not in used:
            b.left_out(g, _why(b.d, g))
        elif g.grant_option:
            b.out.report.append(
                f"left out: WITH GRANT OPTION of {show(g)}: the model manages grants through "
                "ownership and MANAGE_GRANTS"
            )
    b.grant(first.principal, obj, out, Condition.ALLOW)


def _why(d: Dialect, g: DGrant) -> str:
    if any(g.privilege in needed for needed, _, _ in d.translation.combos):
        together = next(sorted(n) for n, _, _ in d.translation.combos if g.privilege in n)
        return (
            f"alone it gives less than any model privilege (the model's MODIFY_TABLE also reads): "
            f"imported only with {', '.join(together)} on the same object"
        )
    return f"no model privilege gives exactly {g.privilege} or less"


def _deny(b: _Builder, g: DGrant) -> None:
    obj = model_object(b.d, g)
    gives = b.d.translation.deny.get((g.privilege, form_of(g)))
    if obj is None or gives is None:
        b.left_out(g, "the model cannot grant this either, so nothing it allows is cut by it")
        return
    b.grant(g.principal, obj, set(gives), Condition.DENY)


def _owners(b: _Builder) -> None:
    for (type_, names), who in sorted(b.script.owners.items()):
        kind = b.d.translation.forms.get(type_)
        shown = f"owner of {type_} {'.'.join(names)}: {who}"
        if kind != "table":
            b.out.report.append(
                f"left out: {shown}: the model's owner of a {kind or type_.lower()} has rights "
                "on everything inside it, which this owner does not"
            )
            continue
        if b.script.kinds.get(who, "user") != "user":
            b.out.report.append(f"left out: {shown}: only a user owns an object in the model")
            continue
        obj = ObjectRef.of("table", names)
        b.register(obj)
        if who not in b.out.model.users:
            b.do(ch.add_user, who)
        b.do(ch.set_owner, obj, who)


def _implied_catalog(b: _Builder) -> None:
    given = b.d.translation.implied_catalog
    if not given:
        return
    model = b.out.model
    for role, grants in sorted(model.roles.items()):
        for catalog in sorted({g.object.names[0] for g in grants if g.object.names}):
            b.do(ch.grant_privileges, role, ObjectRef.of("catalog", (catalog,)), list(given), Condition.ALLOW)
    b.out.report.append(
        f"note: {b.d.title} has no catalog gate; {', '.join(given)} is given on each "
        "catalog to whoever holds a grant inside it"
    )
