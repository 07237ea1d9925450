"""Several roles granted or revoked in one request are one change: no commit between them.

A sync runs at any commit (each one rings the workers' bell), so every commit of a request
must be a state no wider than the request's start or end. Roles granted one after another
are not: the role with an ALLOW goes first, and until the role with the DENY that overrides
it follows, the user holds the ALLOW alone; revoked one after another, the DENY can go
first. Each commit the requests make is observed here as a sync would see it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pushdown.app.service.changing import Changing
from pushdown.decide.evaluator import Evaluator
from pushdown.model.securables import ObjectRef

from .asgi import Door
from .test_door_names import M, estate

T1 = ObjectRef.of("table", "c1.s1.t1")


def _role(name: str, condition: str, fullname: str, privileges: list[str], kind: str) -> dict[str, Any]:
    return {
        "name": name,
        "securableObjects": [
            {
                "type": kind,
                "fullName": fullname,
                "privileges": [{"name": p, "condition": condition} for p in privileges],
            }
        ],
    }


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Door]:
    door = Door.open(tmp_path / "pd.db")
    estate(door)
    readers = _role("readers", "allow", "c1", ["use_catalog", "use_schema", "select_table"], "catalog")
    blocked = _role("blocked", "deny", "c1.s1.t1", ["select_table"], "table")
    for body in (readers, blocked):
        assert door.request("POST", f"{M}/roles", "admin", body).status == 200
    yield door
    door.close()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether eve may load c1.s1.t1 after each commit (what a sync then would push)."""
    states: list[bool] = []
    commit = Changing._commit

    def observed(self: Changing, *args: Any, **kwargs: Any) -> list[int]:
        seqs = commit(self, *args, **kwargs)
        decision = Evaluator(self.decision_model()).authorize("eve", "load_table", T1, explain=False)
        states.append(decision.allowed)
        return seqs

    monkeypatch.setattr(Changing, "_commit", observed)
    return states


@pytest.mark.parametrize("order", [["readers", "blocked"], ["blocked", "readers"]])
def test_roles_granted_together_never_hold_the_allow_without_its_deny(
    door: Door, seen: list[bool], order: list[str]
) -> None:
    got = door.request("PUT", f"{M}/permissions/users/eve/grant", "admin", {"roleNames": order})
    assert got.status == 200 and sorted(got.json()["user"]["roles"]) == ["blocked", "readers"]
    assert seen and not any(seen)  # denied at every commit, as at the start and the end


@pytest.mark.parametrize("order", [["readers", "blocked"], ["blocked", "readers"]])
def test_roles_revoked_together_never_drop_the_deny_before_the_allow(
    door: Door, seen: list[bool], order: list[str]
) -> None:
    grant = {"roleNames": ["readers", "blocked"]}
    assert door.request("PUT", f"{M}/permissions/users/eve/grant", "admin", grant).status == 200
    seen.clear()
    got = door.request("PUT", f"{M}/permissions/users/eve/revoke", "admin", {"roleNames": order})
    assert got.status == 200 and got.json()["user"]["roles"] == []
    assert seen and not any(seen)


def test_groups_take_their_roles_in_one_change_too(door: Door, seen: list[bool]) -> None:
    door.ac.add_group("staff", ["eve"])
    seen.clear()
    path = f"{M}/permissions/groups/staff"
    body = {"roleNames": ["readers", "blocked"]}
    assert door.request("PUT", f"{path}/grant", "admin", body).status == 200
    assert door.request("PUT", f"{path}/revoke", "admin", {"roleNames": ["blocked", "readers"]}).status == 200
    assert len(seen) == 2 and not any(seen)


def test_every_role_of_the_change_is_checked(door: Door, seen: list[bool]) -> None:
    """The library's one change refuses it all when the actor may not grant one role."""
    door.ac.acting("admin").grant_roles(["readers", "blocked"], "user eve")
    with pytest.raises(Exception, match="may not"):
        door.ac.acting("alice").revoke_roles(["blocked", "readers"], "user eve")
    assert door.ac.model.user_roles["eve"] == {"readers", "blocked"}
