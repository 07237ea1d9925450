"""Scopes as regions, and keyed plans: pure parts of the reconcile layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.plan import diff
from pushdown.reconcile.scope import Region, Scope, scope_of

T = ObjectRef.parse("table c.s.t")
S = ObjectRef.parse("schema c.s")


def model() -> Model:
    m = Model()
    for step in (
        lambda: ch.add_user(m, "ann"),
        lambda: ch.add_user(m, "bob"),
        lambda: ch.add_user(m, "cy"),
        lambda: ch.add_group(m, "g", ["bob"]),
        lambda: ch.create_role(m, "r"),
        lambda: ch.grant_role(m, "r", Principal.user("ann")),
        lambda: ch.grant_role(m, "r", Principal.group("g")),
    ):
        for e in step():
            m.apply(e)
    return m


def test_a_grant_touches_the_roles_holders_under_its_object_only() -> None:
    m = model()
    scope = scope_of(ev.PrivilegesGranted("r", T, frozenset({Privilege.SELECT_TABLE}), Condition.ALLOW))
    resolved = scope.resolve(m)
    assert resolved.regions == (Region(frozenset({"ann", "bob"}), frozenset({T})),)
    assert resolved.covers("bob", T) and not resolved.covers("cy", T)
    assert not resolved.covers("ann", ObjectRef.parse("table c.s.other"))
    assert resolved.covers("ann", S)  # a schema-level fact overlaps the table below it
    assert resolved.widened(lambda o: o.parent or o).covers("ann", ObjectRef.parse("table c.s.other"))


def test_an_owner_change_touches_the_old_and_new_owner_in_the_subtree() -> None:
    resolved = scope_of(ev.OwnerSet(S, "ann", "bob")).resolve(model())
    assert resolved.regions == (Region(frozenset({"ann", "bob"}), frozenset({S})),)


def test_union_is_linear_and_everything_wins() -> None:
    scopes = [Scope.of([ObjectRef.parse(f"table c.s.t{i}")]) for i in range(2000)]
    assert len(Scope.union(scopes).objects) == 2000
    assert Scope.union([*scopes, Scope.everything()]).full
    assert Scope.union([]).empty


@dataclass(frozen=True)
class Policy:
    resource: str
    users: tuple[str, ...]
    phase: int = 1

    @property
    def key(self) -> str:
        return self.resource

    def to_json(self) -> dict[str, Any]:
        return {"resource": self.resource, "users": list(self.users)}

    def __str__(self) -> str:
        return f"policy {self.resource}: {', '.join(self.users)}"


@dataclass(frozen=True)
class RoleFact:
    name: str
    phase: int = 0

    @property
    def key(self) -> str:
        return "role " + self.name

    def to_json(self) -> dict[str, Any]:
        return {"role": self.name}


def test_the_same_key_with_a_new_value_is_one_change_and_phases_order_the_plan() -> None:
    held = [Policy("db.t", ("ann",)), Policy("db.gone", ("bob",)), RoleFact("old", 0)]
    want = [Policy("db.t", ("ann", "bob")), RoleFact("new", 0), Policy("db.new", ("cy",))]
    plan = diff("ranger", want, held, Scope.everything())
    assert [(op.action, op.key) for op in plan.ops] == [
        ("remove", "db.gone"),  # removals first, the later phase first
        ("remove", "role old"),
        ("add", "role new"),  # then the earlier phase: the role before the policy naming it
        ("add", "db.new"),
        ("change", "db.t"),
    ]
    change = next(op for op in plan.ops if op.action == "change")
    assert change.before == Policy("db.t", ("ann",)) and change.after == Policy("db.t", ("ann", "bob"))
    assert "1 to change" in plan.render()
    assert plan.digest() == diff("x", list(reversed(want)), held, Scope.everything()).digest()
