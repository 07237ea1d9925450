"""Drops of topics, filesets and models lift no DENY (the drop/rename check shared with
tables, ``Changes._keep_denies``): the server keeps what a drop unregisters, and whoever
may drop it may register it again, where an ALLOW above would reach it. A caller who may
not revoke the DENY (``revoke_privilege`` on its object) drops neither the object nor a
schema holding it; the metalake's owner and a MANAGE_GRANTS holder may."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import Forbidden
from pushdown.model.securables import ObjectRef

from .asgi import Door

S1 = "/api/metalakes/test/catalogs/c1/schemas/s1"

#: each leaf: its object, the privilege its DENY holds, the operation it stops, its REST path
#: (models have no route served: the library's drop, acting as the caller)
LEAVES = {
    "topic": ("topic c1.s1.leaf", "CONSUME_TOPIC", "load_topic", f"{S1}/topics/leaf"),
    "fileset": ("fileset c1.s1.leaf", "READ_FILESET", "load_fileset", f"{S1}/filesets/leaf"),
    "model": ("model c1.s1.leaf", "USE_MODEL", "load_model", None),
}


@pytest.fixture(params=sorted(LEAVES))
def leaf(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Door, str]]:
    """zed reads everything in catalog c1 but the leaf (role blocked's DENY); mallory owns
    schema c1.s1 and uses the catalog (she may drop what is in it), and may not revoke the
    DENY."""
    kind = str(request.param)
    obj, privilege, _, _ = LEAVES[kind]
    door = Door.open(tmp_path / "pd.db")
    try:
        assert door.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
        admin = door.ac.acting("admin")
        for name in ("catalog c1", "schema c1.s1", obj):
            admin.create_object(name)
        for user in ("zed", "mallory", "gus"):
            admin.add_user(user)
        admin.set_owner("schema c1.s1", "mallory")
        admin.create_role("reader")
        reads = ["USE_CATALOG", "USE_SCHEMA", "CONSUME_TOPIC", "READ_FILESET", "USE_MODEL"]
        admin.grant_privileges("reader", "catalog c1", reads)
        admin.grant_role("reader", "user zed")
        admin.create_role("builder")
        admin.grant_privileges("builder", "catalog c1", ["USE_CATALOG", "USE_SCHEMA"])
        admin.grant_role("builder", "user mallory")
        admin.create_role("blocked")
        admin.grant_privileges("blocked", obj, [privilege], "DENY")
        admin.grant_role("blocked", "user zed")
        assert not _zed_may(door, kind)
        yield door, kind
    finally:
        door.close()


def _zed_may(door: Door, kind: str) -> bool:
    obj, _, operation, _ = LEAVES[kind]
    evaluator = Evaluator(door.ac.decision_model())
    return evaluator.authorize("zed", operation, ObjectRef.parse(obj), explain=False).allowed


def _drop(door: Door, kind: str, caller: str) -> bool:
    """Drop the leaf as ``caller``: True when dropped, False when refused (403)."""
    obj, _, _, path = LEAVES[kind]
    if path is None:
        try:
            door.ac.acting(caller).drop_object(obj)
        except Forbidden as exc:
            assert "blocked" not in str(exc)
            return False
        return True
    answer = door.request("DELETE", path, caller)
    if answer.status == 403:
        assert "blocked" not in answer.json()["message"]  # a fixed rule, naming no role
        return False
    assert answer.json()["dropped"] is True, answer.body
    return True


def test_a_schema_owner_does_not_drop_a_leaf_holding_a_deny(leaf: tuple[Door, str]) -> None:
    door, kind = leaf
    ref = ObjectRef.parse(LEAVES[kind][0])
    assert not _drop(door, kind, "mallory")
    assert ref in door.ac.model.objects and not _zed_may(door, kind)
    cascade = door.request("DELETE", f"{S1}?cascade=true", "mallory")
    assert cascade.status == 403, cascade.body
    assert ref in door.ac.model.objects and not _zed_may(door, kind)


def test_the_metalake_owner_drops_a_leaf_holding_a_deny(leaf: tuple[Door, str]) -> None:
    door, kind = leaf
    assert _drop(door, kind, "admin")
    assert ObjectRef.parse(LEAVES[kind][0]) not in door.ac.model.objects


def test_a_schema_owner_holding_manage_grants_drops_it_and_the_schema(leaf: tuple[Door, str]) -> None:
    door, kind = leaf
    admin = door.ac.acting("admin")
    admin.create_role("grantdesk")
    admin.grant_privileges("grantdesk", "metalake test", ["MANAGE_GRANTS"])
    admin.grant_role("grantdesk", "user mallory")
    assert _drop(door, kind, "mallory")
    assert ObjectRef.parse(LEAVES[kind][0]) not in door.ac.model.objects
    # a schema holding one (registered again by the owner) goes whole
    door.ac.acting("admin").create_object(LEAVES[kind][0])
    door.ac.acting("admin").grant_privileges("blocked", LEAVES[kind][0], [LEAVES[kind][1]], "DENY")
    assert door.request("DELETE", f"{S1}?cascade=true", "mallory").json()["dropped"] is True
    assert ObjectRef.parse("schema c1.s1") not in door.ac.model.objects


def test_a_leaf_with_no_deny_the_schema_owner_drops(leaf: tuple[Door, str]) -> None:
    door, kind = leaf
    door.ac.acting("admin").revoke_privileges("blocked", LEAVES[kind][0], [LEAVES[kind][1]], "DENY")
    assert _drop(door, kind, "mallory")
