"""`pushdown import --backend` on the Ranger stand-in with a principal-mapping hook.

Model user ``alice`` is Ranger user ``alice@corp``: the import reads a role's members
through the mapping the sync uses, inverted. An estate made by hand with the mapped names
imports as the model's users, the plan that follows is empty, and Ranger's decisions
(its own policy engine, the Java judge) are what they were. A member no model user maps
to, or that two map to (the very same name, or one but for case), is imported as nobody
and reported; never guessed, never wider.
"""

from __future__ import annotations

from typing import Any

from pushdown_lab.ranger_ground_truth import allows
from pushdown_lab.ranger_standin import Standin

from pushdown.app.service.spec import load_spec_text
from pushdown.model import changes as ch
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.estate import adopt, estate_yaml
from pushdown.reconcile.planner import plan
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.estate import parts

from .world import backend_for

ALIASES = {"alias": "alice", "Bob": "bob"}


def corp(principal: Principal) -> str:
    """Users are ``<name>@corp`` (``alias`` is alice's second name; ``Bob`` and ``bob``
    are one but for case); groups keep their names."""
    if principal.kind is PrincipalKind.USER:
        return ALIASES.get(principal.name, principal.name) + "@corp"
    return principal.name


def store(*users: str) -> Model:
    model = Model()
    for event in ch.create_object(model, ObjectRef.of("catalog", ("c",)), properties={"backend": "rg"}):
        model.apply(event)
    for user in users:
        for event in ch.add_user(model, user):
            model.apply(event)
    return model


def hive_policy(name: str, resources: dict[str, str], items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "service": "hive",
        "name": name,
        "resources": {k: {"values": [v]} for k, v in resources.items()},
        "policyItems": items,
        "denyPolicyItems": [],
    }


def item(role: str, *accesses: str) -> dict[str, Any]:
    return {"roles": [role], "accesses": [{"type": a, "isAllowed": True} for a in accesses]}


def make_estate(
    standin: Standin, readers: list[str], writers: list[str], groups: tuple[str, ...] = ()
) -> None:
    s = standin.store
    role = {
        "name": "pd_readers",
        "users": [{"name": u} for u in readers],
        "groups": [{"name": g} for g in groups],
    }
    s.create_role(role, create_missing=True)
    s.create_role({"name": "pd_writers", "users": [{"name": u} for u in writers]}, create_missing=True)
    s.create_policy(
        hive_policy(
            "hand sales", {"database": "sales", "table": "?*", "column": "*"}, [item("pd_readers", "select")]
        )
    )
    s.create_policy(
        hive_policy(
            "hand orders",
            {"database": "sales", "table": "orders", "column": "*"},
            [item("pd_writers", "select", "update", "alter")],
        )
    )


def asks(users: list[str]) -> list[tuple[str, dict[str, Any], str, str, list[str]]]:
    out: list[tuple[str, dict[str, Any], str, str, list[str]]] = []
    for user in users:
        for table in ("orders", "pay"):
            for access in ("select", "update", "alter", "drop"):
                out.append(("hive", {"database": "sales", "table": table, "column": "id"}, access, user, []))
    return out


def test_a_mapped_estate_imports_the_model_users_and_the_plan_after_it_is_empty(
    ranger_standin: Standin,
) -> None:
    backend = backend_for(ranger_standin, map_principal=corp)
    make_estate(ranger_standin, ["alice@corp", "bob@corp"], ["carol@corp"])
    questions = asks(["alice@corp", "bob@corp", "carol@corp", "alice", "carol"])
    before = allows(ranger_standin, questions)
    assert any(before)

    adopted = adopt(backend.estate(store("alice", "bob", "carol")))
    model = adopted.model
    assert model.users == {"alice", "bob", "carol"}, adopted.report
    assert set(model.holders_of("readers")) == {"alice", "bob"}
    assert set(model.holders_of("writers")) == {"carol"}
    granted = {(r, str(g.object), g.privilege.name) for r, gs in model.roles.items() for g in gs}
    assert granted == {
        ("readers", "catalog c", "USE_CATALOG"),
        ("readers", "schema c.sales", "USE_SCHEMA"),
        ("readers", "schema c.sales", "SELECT_TABLE"),
        ("writers", "catalog c", "USE_CATALOG"),
        ("writers", "schema c.sales", "USE_SCHEMA"),
        ("writers", "table c.sales.orders", "MODIFY_TABLE"),
    }, granted
    assert not adopted.wider and not adopted.revoked, adopted.report

    spec = load_spec_text(estate_yaml(adopted, "backend rg"))
    assert plan(backend, spec, Scope.everything()).empty
    reconcile(backend, spec, Scope.everything())
    assert allows(ranger_standin, questions) == before
    assert plan(backend, spec, Scope.everything()).empty


def test_a_member_no_user_or_two_users_map_to_is_imported_as_nobody(ranger_standin: Standin) -> None:
    backend = backend_for(ranger_standin, map_principal=corp)
    # alice@corp: alice's and alias's; bob@corp: Bob's and bob's but for case; zed@corp: nobody's
    # and a group: pushdown's roles hold users only, so a group member is never imported
    make_estate(ranger_standin, ["alice@corp", "bob@corp", "zed@corp", "dan@corp"], ["carol@corp"], ("etl",))
    questions = asks(["alice@corp", "bob@corp", "zed@corp", "dan@corp", "carol@corp"])
    before = allows(ranger_standin, questions)

    adopted = adopt(backend.estate(store("alice", "alias", "Bob", "bob", "carol", "dan")))
    model = adopted.model
    assert model.users == {"carol", "dan"}, adopted.report
    assert set(model.holders_of("readers")) == {"dan"}
    assert set(model.holders_of("writers")) == {"carol"}
    assert not adopted.wider, adopted.report
    report = "\n".join(adopted.report)
    assert "no model user maps to Ranger user 'zed@corp'" in report, report
    shared = "(pushdown_map_principal): a sync gives that Ranger user only what all of them are allowed"
    assert f"model users alias, alice all map to Ranger user 'alice@corp' {shared}" in report, report
    assert "model users Bob, bob all map to Ranger user 'bob@corp'" in report, report
    assert "role 'pd_readers' [group etl]: a group member: pushdown's roles hold users only" in report, report

    spec = load_spec_text(estate_yaml(adopted, "backend rg"))
    first = plan(backend, spec, Scope.everything())
    for op in first.ops:  # an authoritative apply takes away only what the report lists
        assert op.before is not None, op
        was = set(parts(op.before))
        will = set(parts(op.after)) if op.after is not None else set()
        assert not will - was, op
        for part in was - will:
            assert f"left out (an authoritative apply revokes it): {part}" in report, (str(part), report)
    additive = backend_for(ranger_standin, map_principal=corp, adopt="additive")
    assert not plan(additive, spec, Scope.everything()).ops
    reconcile(backend, spec, Scope.everything(), allow_mass_removal=True)
    after = allows(ranger_standin, questions)
    assert all(b or not a for b, a in zip(before, after, strict=True))  # never wider
    kept = [q for q, a in zip(questions, after, strict=True) if a]
    assert {q[3] for q in kept} == {"dan@corp", "carol@corp"}, kept
    assert plan(backend, spec, Scope.everything()).empty
