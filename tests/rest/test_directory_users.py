"""One name, one user: a user whom only the directory names (a group member recorded at
the last sync, ``AccessControl.decision_model``) is the same user in the listing, in a
read, in a grant and as an owner: listed and read (never a 404 for a listed name), and a
change that needs him in the model says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pushdown.model.events import ExternalMembersChanged

from .asgi import Door

USERS = "/api/metalakes/test/users"
PERMS = "/api/metalakes/test/permissions/users"


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Door]:
    d = Door.open(tmp_path / "pd.db")
    try:
        assert d.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
        admin = d.ac.acting("admin")
        admin.add_group("analysts")
        admin.create_role("reader")
        admin.grant_role("reader", "group analysts")
        # the directory says zed is an analyst (as a sync records it)
        d.ac.change(lambda _: [ExternalMembersChanged("analysts", frozenset({"zed"}))], directory=True)
        yield d
    finally:
        d.close()


def test_a_listed_directory_user_is_read_not_404(door: Door) -> None:
    listed = door.request("GET", USERS, "admin").json()["names"]
    assert "zed" in listed
    for name in listed:
        answer = door.request("GET", f"{USERS}/{name}", "admin")
        assert answer.status == 200, (name, answer.body)
        assert answer.json()["user"]["name"] == name
    assert door.request("GET", "/api/metalakes/test/groups/analysts", "admin").status == 200
    # zed, a user of the metalake through the directory, reads himself too
    assert door.request("GET", f"{USERS}/zed", "zed").status == 200
    assert door.request("GET", f"{USERS}/nobody", "admin").status == 404


def test_a_change_that_needs_the_directory_user_in_the_model_says_so(door: Door) -> None:
    grant = door.request("PUT", f"{PERMS}/zed/grant", "admin", {"roleNames": ["reader"]})
    assert grant.status == 400, grant.body
    assert "only the directory names" in grant.json()["message"]
    owner = door.request(
        "PUT", "/api/metalakes/test/owners/role/reader", "admin", {"name": "zed", "type": "USER"}
    )
    assert owner.status == 400, owner.body
    assert door.request("PUT", f"{PERMS}/nobody/grant", "admin", {"roleNames": ["reader"]}).status == 404
    # once added, the same name is granted as any user
    assert door.request("POST", USERS, "admin", {"name": "zed"}).status == 200
    assert door.request("PUT", f"{PERMS}/zed/grant", "admin", {"roleNames": ["reader"]}).status == 200
    assert door.request("GET", f"{USERS}/zed", "admin").json()["user"]["roles"] == ["reader"]
