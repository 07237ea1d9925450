"""The override route and long dotted names over REST.

- ``PUT .../permissions/roles/{role}`` is authorized on the role before the role is looked
  up: an outsider gets the same bytes for a missing role, a role with grants and one
  without, and no refusal names an object the caller did not send.
- A data object whose parts are each within the name limit, but whose dotted full name is
  longer, can be granted, denied, revoked and owner-read like any other.
- The override's steps never pass through a state wider than its start and its end.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest

from pushdown.decide.evaluator import Evaluator
from pushdown.model.securables import ObjectRef

from .asgi import Door, segment

M = "/api/metalakes/test"
ADMIN = "admin"


def _ok(door: Door, method: str, path: str, body: object = None) -> None:
    answer = door.request(method, path, ADMIN, body)
    assert answer.status == 200, (method, path, answer.body)


def _table(door: Door, catalog: str, schema: str, table: str) -> None:
    _ok(door, "POST", f"{M}/catalogs", {"name": catalog, "type": "relational", "provider": "hive"})
    _ok(door, "POST", f"{M}/catalogs/{segment(catalog)}/schemas", {"name": schema})
    path = f"{M}/catalogs/{segment(catalog)}/schemas/{segment(schema)}/tables"
    _ok(door, "POST", path, {"name": table, "columns": []})


def _role(door: Door, name: str, objects: list[dict[str, object]]) -> None:
    _ok(door, "POST", f"{M}/roles", {"name": name, "securableObjects": objects})


def _privs(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"name": p, "condition": c} for p, c in pairs]


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Door]:
    d = Door.open(tmp_path / "pd.db")
    _ok(d, "POST", "/api/metalakes", {"name": "test"})
    for user in ("mallory", "reader"):
        _ok(d, "POST", f"{M}/users", {"name": user})
    yield d
    d.close()


# -- the override route is no existence oracle ----------------------------------------------


def test_override_answers_an_outsider_the_same_for_missing_granted_and_empty_roles(door: Door) -> None:
    _table(door, "sales", "hr", "secret_layoffs_2027")
    secret = {"type": "table", "fullName": "sales.hr.secret_layoffs_2027"}
    _role(door, "hr_readers", [{**secret, "privileges": _privs(("select_table", "allow"))}])
    _role(door, "empty_role", [])

    answers = {
        role: door.request("PUT", f"{M}/permissions/roles/{role}", "mallory", {"overrides": []})
        for role in ("hr_readers", "empty_role", "no_such_role")
    }
    shown = {role: (a.status, a.body) for role, a in answers.items()}
    assert answers["hr_readers"].status == 403, shown
    for role, answer in answers.items():
        assert answer.status == 403, shown
        assert answer.body == answers["hr_readers"].body.replace(b"hr_readers", role.encode()), shown
        assert b"secret_layoffs" not in answer.body and b"sales" not in answer.body
    # nothing changed, and a caller who may see the role learns that one does not exist
    assert door.ac.model.roles["hr_readers"]
    assert door.request("PUT", f"{M}/permissions/roles/no_such_role", ADMIN, {"overrides": []}).status == 404


# -- a long dotted name works like any other --------------------------------------------------


def test_a_table_whose_full_name_exceeds_128_is_granted_denied_revoked_owner_read_and_dropped(
    door: Door,
) -> None:
    catalog, schema, table = "c" * 60, "s" * 60, "t" * 60
    _table(door, catalog, schema, table)
    full = f"{catalog}.{schema}.{table}"
    assert len(full) > 128
    _role(door, "r", [])
    base = f"{M}/permissions/roles/r/table/{segment(full)}"
    select = {"privileges": _privs(("select_table", "allow"))}
    deny = {"privileges": _privs(("modify_table", "deny"))}
    _ok(door, "PUT", f"{base}/grant", select)
    _ok(door, "PUT", f"{base}/grant", deny)
    ref = ObjectRef.of("table", (catalog, schema, table))
    assert {(g.object, g.privilege.value.lower()) for g in door.ac.model.roles["r"]} == {
        (ref, "select_table"),
        (ref, "modify_table"),
    }
    _ok(door, "PUT", f"{base}/revoke", select)
    _ok(door, "PUT", f"{base}/revoke", deny)
    assert not door.ac.model.roles["r"]
    owner = door.request("GET", f"{M}/owners/table/{segment(full)}", ADMIN)
    assert owner.status == 200, owner.body
    assert owner.json()["owner"]["name"] == ADMIN
    path = f"{M}/catalogs/{segment(catalog)}/schemas/{segment(schema)}/tables/{segment(table)}"
    _ok(door, "DELETE", path)
    assert ref not in door.ac.model.objects


def test_a_full_name_whose_one_part_exceeds_128_is_still_refused(door: Door) -> None:
    _role(door, "r", [])
    full = f"c.s.{'t' * 129}"
    answer = door.request(
        "PUT",
        f"{M}/permissions/roles/r/table/{full}/grant",
        ADMIN,
        {"privileges": _privs(("select_table", "allow"))},
    )
    assert answer.status == 400, answer.body


# -- the override never passes through a wider state ----------------------------------------


def test_override_steps_are_never_wider_than_its_start_and_end(door: Door) -> None:
    objects = []
    for c in ("c1", "c2", "c3"):
        _table(door, c, "s", "t")
        objects.append({"type": "catalog", "fullName": c, "privileges": _privs(("select_table", "allow"))})
        objects.append(
            {"type": "table", "fullName": f"{c}.s.t", "privileges": _privs(("select_table", "deny"))}
        )
    _role(door, "readers", objects)
    _ok(door, "PUT", f"{M}/permissions/users/reader/grant", {"roleNames": ["readers"]})
    affected = [
        ObjectRef.of(t, n)
        for c in ("c1", "c2", "c3")
        for t, n in (("catalog", c), ("schema", f"{c}.s"), ("table", f"{c}.s.t"))
    ]

    def seen(model: object) -> set[tuple[ObjectRef, object]]:
        ev = Evaluator(model)  # type: ignore[arg-type]
        return {(ref, p) for ref in affected for p in ev.effective_privileges("reader", ref)}

    store = door.ac.store
    start_seq = store.last_seq()
    model = copy.deepcopy(store.load())
    start = seen(model)
    # swap: the tables' DENY goes, the catalogs' ALLOW goes, a schema gains a DENY
    body = {
        "overrides": [{"type": "schema", "fullName": "c1.s", "privileges": _privs(("select_table", "deny"))}]
    }
    _ok(door, "PUT", f"{M}/permissions/roles/readers", body)
    states = []
    for _, event in store.events_since(start_seq):
        model.apply(event)
        states.append(seen(model))
    end = seen(store.load())
    assert states and states[-1] == end
    wider = [sorted(map(str, s - (start | end))) for s in states if not s <= start | end]
    assert wider == []
