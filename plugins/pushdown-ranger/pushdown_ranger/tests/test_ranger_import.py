"""`pushdown import --backend` on the Ranger stand-in: random estates made by hand.

For each estate (users with hostile names; pushdown's roles and per-user roles with
users, a group, an admin; Hive policies on every table of a database, on tables and on
databases, with allow and deny items, some disabled (the stand-in refuses validity
schedules); other hands' items): the imported spec, planned against the same stand-in,
changes policies and roles only by what the import reported (revoked, or a narrower deny
added); after a full authoritative apply, Ranger's own policy engine (the Java judge, the
stand-in held equal to it) allows no (user, access, resource) it did not allow before,
but where the report says a deny item it cannot keep widens; with ``adopt = "additive"``
nothing is wider either.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from pushdown_lab.ranger_ground_truth import allows
from pushdown_lab.ranger_standin import Standin

from pushdown.app.service.spec import load_spec_text
from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.estate import adopt, estate_yaml
from pushdown.reconcile.planner import plan
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.estate import parts

from .world import backend_for

USERS = ("ann", "b`o'b", "c d", "dee")
DATABASES = ("sales", "hr")
TABLES = ("orders", "pay")
ROLES = ("pd_readers", "pd_writers", "pdu_ann", "other")
ACCESSES = ("select", "update", "alter", "drop", "create")


def bound() -> Model:
    model = Model()
    for event in ch.create_object(model, ObjectRef.of("catalog", ("c",)), properties={"backend": "rg"}):
        model.apply(event)
    return model


def make_estate(standin: Standin, seed: int) -> list[str]:
    rng = random.Random(seed)
    store = standin.store
    for role in ROLES:
        users = [{"name": u, "isAdmin": rng.random() < 0.1} for u in rng.sample(USERS, rng.randint(1, 3))]
        groups = [{"name": "etl"}] if rng.random() < 0.2 else []
        store.create_role({"name": role, "users": users, "groups": groups}, create_missing=True)
    made: list[str] = []
    shapes: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    for _ in range(rng.randint(4, 10)):
        db = rng.choice(DATABASES)
        kind = rng.randrange(3)
        if kind == 0:
            res = (("database", db), ("table", "?*"), ("column", "*"))
        elif kind == 1:
            res = (("database", db), ("table", rng.choice(TABLES)), ("column", "*"))
        else:
            res = (("database", db),)
        policy = shapes.setdefault(
            res,
            {
                "service": "hive",
                "name": "hand " + ",".join(f"{k}={v}" for k, v in res),
                "resources": {k: {"values": [v]} for k, v in res},
                "policyItems": [],
                "denyPolicyItems": [],
            },
        )
        if rng.random() < 0.1:
            policy["isEnabled"] = False
        role = rng.choice(ROLES)
        if kind == 2:
            accesses = ["create"]
        elif rng.random() < 0.5:
            accesses = ["select", "update", "alter"]
        else:
            accesses = [rng.choice(ACCESSES[:4])]
        field = "denyPolicyItems" if rng.random() < 0.3 else "policyItems"
        item: dict[str, Any] = {"accesses": [{"type": a, "isAllowed": True} for a in accesses]}
        if rng.random() < 0.15:
            item["users"] = [rng.choice(USERS)]
        else:
            item["roles"] = [role]
        policy[field].append(item)
        made.append(f"{field} {accesses} to {item} on {res}")
    for policy in shapes.values():
        store.create_policy(policy)
    return made


def asks() -> list[tuple[str, dict[str, Any], str, str, list[str]]]:
    out = []
    for user in USERS:
        for db in DATABASES:
            for access in ("create", "alter", "drop"):
                out.append(("hive", {"database": db}, access, user, []))
            for table in (*TABLES, "unseen"):
                for access in ACCESSES[:4]:
                    out.append(("hive", {"database": db, "table": table, "column": "id"}, access, user, []))
    return out


@pytest.mark.parametrize("seed", range(1, 21))
def test_import_of_a_hand_made_ranger_estate_is_never_wider(ranger_standin: Standin, seed: int) -> None:
    backend = backend_for(ranger_standin)
    made = make_estate(ranger_standin, seed)
    questions = asks()
    before = allows(ranger_standin, questions)
    adopted = adopt(backend.estate(bound()))
    text = estate_yaml(adopted, "backend rg")
    spec = load_spec_text(text)
    first = plan(backend, spec, Scope.everything())
    reported = "\n".join(adopted.report)
    for op in first.ops:  # each change takes away, or adds as a narrower deny, only what the report lists
        was = set(parts(op.before)) if op.before is not None else set()
        will = set(parts(op.after)) if op.after is not None else set()
        for part in was - will:
            assert f"left out (an authoritative apply revokes it): {part}" in reported, (
                str(part),
                made,
                text,
            )
        for part in will - was:
            assert f"narrower (an authoritative apply adds it): {part}" in reported, (str(part), made, text)

    additive = backend_for(ranger_standin, adopt="additive")
    held = plan(additive, spec, Scope.everything())
    assert all(op.action == "add" for op in held.ops), held.render()  # only narrower denies, if any
    reconcile(additive, spec, Scope.everything())
    now = allows(ranger_standin, questions)
    assert all(b or not n for b, n in zip(before, now, strict=True))  # additive: never wider either

    reconcile(backend, spec, Scope.everything(), allow_mass_removal=True)
    after = allows(ranger_standin, questions)
    wider = [q for q, b, a in zip(questions, before, after, strict=True) if a and not b]
    # only where the report says a deny item it cannot keep widens once revoked, and only
    # for what other hands allow there
    widening = [line for line in adopted.report if "WIDER once revoked" in line]
    for _, resource, access, _, _ in wider:
        assert any(f"database={resource['database']}" in line and access in line for line in widening), (
            wider,
            made,
            text,
        )
    assert plan(backend, spec, Scope.everything()).empty
